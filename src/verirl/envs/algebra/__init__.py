"""Algebra: linear algebra, matrices, calculus, polynomials and sequences."""
