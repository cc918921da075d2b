"""corral: a sandbox and tool guard for AI chat in Neovim.

The engine never imports pynvim and keeps its import graph small: `corral run` must start fast.
"""

from __future__ import annotations

__version__ = "0.1.0"
