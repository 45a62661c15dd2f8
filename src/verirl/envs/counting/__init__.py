"""Counting: combinatorics, counting over arrays, grids, strings, permutations, recurrences."""
