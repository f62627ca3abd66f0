"""The driver runs in the Agent Framework's environment, `.venv-maf`: pytest never imports it."""

collect_ignore = ["driver.py"]
