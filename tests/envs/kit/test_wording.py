"""Prompts count things with the right grammatical number: "1 week", never "1 weeks"."""

from __future__ import annotations

import re

import pytest

from verirl.envs import env_names, get_env
from verirl.envs.kit.wording import commas, indexed, plural

# "1 <word>s" not inside a number ("0.1 litres", "2 1 beans" listing values, "1 × 1 squares")
ONE_PLURAL = re.compile(r"(?<!\d )(?<!× )(?<![\d.,/^\-])\b1 ([a-z]+s)\b")
# ... where the word is a verb or a preposition, not a plural noun ("vertex 1 has").
NOT_NOUNS = frozenset(
    {"becomes", "has", "is", "vs", "uses", "holds", "rotates", "leaves", "was", "goes", "does"}
)
# Environments of modules still being written by others when this test landed (strict xfail:
# a fixed one must leave the list).
PLURAL_BACKLOG = frozenset({"maximum_point_segment_matching"})
TEXT_ENVS = [n for n in env_names() if get_env(n).prover is None]


def test_plural() -> None:
    assert plural(1, "week") == "1 week"
    assert plural(0, "week") == "0 weeks"
    assert plural(2, "vertex", "vertices") == "2 vertices"
    assert plural(1, "vertex", "vertices") == "1 vertex"


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="plural backlog"))
        if n in PLURAL_BACKLOG
        else n
        for n in TEXT_ENVS
    ],
)
def test_prompts_never_say_one_of_a_plural(name: str) -> None:
    env = get_env(name)
    for difficulty in range(4):
        for seed in range(40):
            prompt = env.generate(difficulty, seed).prompt
            for m in ONE_PLURAL.finditer(prompt):
                if m.group(1) not in NOT_NOUNS:
                    start = max(0, m.start() - 60)
                    raise AssertionError(
                        f"d={difficulty} seed={seed}: ...{prompt[start : m.end()]}"
                    )


def test_commas_and_indexed_listings() -> None:
    assert commas([3, 1, 4]) == "3, 1, 4"
    assert commas([]) == "" and commas([-7]) == "-7"
    assert indexed([3, 1, 4]) == "A[0]=3 A[1]=1 A[2]=4"
    assert indexed([5], name="B") == "B[0]=5"
