"""The AG-UI dojo's features, one route each: `agui serve examples/dojo/app.py:app`."""
