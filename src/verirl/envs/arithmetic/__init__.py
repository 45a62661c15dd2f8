"""Arithmetic: operations on numbers, division, countdown expressions, exact numbers."""
