"""Grids: search, selection, optimisation and grid logic puzzles."""
