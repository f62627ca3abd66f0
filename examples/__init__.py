"""Complete agents to run and read; see docs/examples.md. Each is served with `agui serve`."""
