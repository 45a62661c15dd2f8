"""Evaluation sets run outside the training environments: GSM8K, MATH-500, GSM-Symbolic and
HumanEval (``verirl eval --benchmark``), with avg@k, pass@k and 95% intervals."""
