"""Strings: basic string tasks, runs and searches."""
