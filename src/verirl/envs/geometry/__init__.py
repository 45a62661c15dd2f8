"""Geometry: convex hulls, lattice points and point sets."""
