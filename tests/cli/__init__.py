"""The `agui` command line: one file per command, and what they share."""
