"""RLVE's size ladder: how an instance's size grows with the difficulty level.

Zeng et al. 2025, "RLVE: Scaling Up Reinforcement Learning for Language Models with Adaptive
Verifiable Environments" (arXiv:2511.07317): a size N grows as N ← int(1.1·N + 1) per level.
"""

from __future__ import annotations


def grown(start: int, difficulty: int, cap: int = 200) -> int:
    """RLVE's ladder N = int(1.1·N + 1), applied ``difficulty`` times to ``start``, stopping at
    ``cap`` (200 by default: reached a little above difficulty 30, so that the quadratic
    verifiers stay fast at any difficulty the curriculum reaches)."""
    n = start
    for _ in range(difficulty):
        n = min(cap, int(n * 1.1 + 1))
    return n
