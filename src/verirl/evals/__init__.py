"""Evaluation sets run outside the training environments (HumanEval)."""
