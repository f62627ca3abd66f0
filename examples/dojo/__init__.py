"""The AG-UI dojo's features, one route each: `uvicorn examples.dojo.app:app`."""
