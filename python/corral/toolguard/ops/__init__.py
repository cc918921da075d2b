"""Guarded operations for the chat's tools: files (files.py, globs.py, refusal.py) and HTTP."""
