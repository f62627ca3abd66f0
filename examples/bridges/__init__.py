"""Agents written in other frameworks, served by agui's bridges."""
