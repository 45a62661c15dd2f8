"""Graphs and trees: paths, spanning trees, structure, colourings, flows, walks, counting."""
