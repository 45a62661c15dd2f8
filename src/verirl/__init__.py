"""verirl: reinforcement learning from verifiable rewards.

Adaptive verifiable environments (RLVE), conditional expectation reward (CER),
process-verified proving and turn-level credit (TCPO) on one small, readable trainer.
"""

__version__ = "0.1.0"
