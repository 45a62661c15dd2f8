"""Simulation: step-by-step processes whose outcome is asked."""
