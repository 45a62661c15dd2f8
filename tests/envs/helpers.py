"""Hand-made problems and their verdicts, shared by the environment tests."""

from __future__ import annotations

from typing import Any

from verirl.envs import get_env
from verirl.types import Problem, Verdict


def problem(name: str, /, **data: Any) -> Problem:
    """A problem of environment ``name`` holding only ``data`` (no prompt, no stored answer)."""
    return Problem(env=name, difficulty=0, seed=0, prompt="", answer="", data=data)


def verdict(name: str, text: str, /, **data: Any) -> Verdict:
    """The verdict on the answer ``text``, boxed at the end of a sentence."""
    return get_env(name).verify(problem(name, **data), f"The answer is \\boxed{{{text}}}")


def reward(name: str, text: str, /, **data: Any) -> float:
    return verdict(name, text, **data).reward


def scored(env: str, problem: Problem, answer: str, lead: str = "") -> tuple[float, bool]:
    """``(reward, correct)`` for the output ``lead`` + ``answer`` boxed."""
    result = get_env(env).verify(problem, f"{lead}\\boxed{{{answer}}}")
    return result.reward, result.correct


def assert_hand_computed(name: str, data: dict[str, Any], value: int) -> None:
    """An integer-answer environment solves ``data`` to ``value``, accepts it and does not
    fully accept ``value + 1``."""
    assert get_env(name).solve(problem(name, **data)) == str(value)
    assert verdict(name, str(value), **data).correct
    wrong = verdict(name, str(value + 1), **data)
    assert not wrong.correct and wrong.reward < 1.0
