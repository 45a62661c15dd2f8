"""Optimisation: dynamic programming, scheduling, choices and NP-complete problems."""
