"""The travel assistant example: `agui serve examples/travel/app.py:agent`."""
