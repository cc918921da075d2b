"""Real-sandbox tests: run real bwrap and check what the host sees afterwards."""
