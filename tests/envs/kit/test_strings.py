"""The string helpers families share (kit/strings.py)."""

from __future__ import annotations

import random

from verirl.envs.kit.strings import random_word


def test_random_word_draws_from_the_alphabet() -> None:
    rng = random.Random(2)
    words = [random_word(rng, 12, "ab") for _ in range(50)]
    assert all(len(w) == 12 and set(w) <= {"a", "b"} for w in words)
    assert len(set(words)) > 40  # independent draws, not one word repeated
    assert random_word(rng, 0, "xyz") == ""
    # the same seed draws the same word: one rng.choice per letter, in order
    a, b = random.Random(9), random.Random(9)
    assert random_word(a, 5, "abc") == "".join(b.choice("abc") for _ in range(5))
