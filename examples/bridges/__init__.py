"""Agents from other frameworks and endpoints, served by agui's bridges."""
