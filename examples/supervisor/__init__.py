"""The supervisor example: `agui serve examples/supervisor/app.py:agent`."""
