"""The task board example: `agui serve examples/task_board/app.py:agent`."""
