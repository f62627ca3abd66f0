"""Leaf utilities that import nothing of agui: wording, numbers read from options, tasks.

They sit below the exception tree, so every layer may use them.
"""
