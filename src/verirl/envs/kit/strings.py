"""String helpers families share: random words."""

from __future__ import annotations

import random


def random_word(rng: random.Random, n: int, alphabet: str) -> str:
    """``n`` letters drawn uniformly and independently from ``alphabet``."""
    return "".join(rng.choice(alphabet) for _ in range(n))
