"""Every environment's problems, its user-visible attributes and the configs match the golden
digest committed in ``golden_problems.json`` (see ``tests/envs/golden.py``)."""

from __future__ import annotations

import json
from fractions import Fraction

from tests.envs import golden


def test_golden_digest_matches() -> None:
    expected = json.loads(golden.GOLDEN.read_text())
    diff = golden.differences(expected, golden.compute())
    assert not diff, f"first difference: {diff[0]} ({len(diff)} in all)"


def test_canonical_keeps_types() -> None:
    # a tuple, a list, a fraction and a float that print alike must hash apart
    assert golden.canonical((1, 2)) != golden.canonical([1, 2])
    assert golden.canonical(Fraction(1, 2)) != golden.canonical(0.5)
    assert golden.canonical({1: "a"}) != golden.canonical({"1": "a"})
    assert golden.canonical({3, 1, 2}) == golden.canonical({2, 3, 1})


def test_differences_names_the_environment() -> None:
    want = {"problems": {"a": "1", "b": "2"}, "meta": {}, "configs": {}}
    got = {"problems": {"a": "1", "b": "3", "c": "4"}, "meta": {}, "configs": {}}
    assert golden.differences(want, got) == [
        "problems: b differs",
        "problems: c is new (not in the golden file)",
    ]
