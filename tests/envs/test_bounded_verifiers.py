"""Regression tests: verifier inputs that used to take seconds to minutes (untrusted text is data).

Each input is one from the hostile-output issue; the bound is generous (a busy 2-core CI
machine) but far below the old times (noted per test, measured on that machine).
"""

from __future__ import annotations

import random
import time

import pytest

from verirl.envs import Environment, Instance, get_env
from verirl.envs.reading.answers import extract_answer, last_answer_tag, last_boxed
from verirl.envs.reading.symbolic_parser import Limits, SizeError, check_size, parse_expression
from verirl.errors import UserInputError
from verirl.types import Problem, Verdict

BUDGET_S = 1.0


def _timed(fn, *args):  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t0


@pytest.mark.parametrize(
    "answer",
    [
        r"((((99^{99})^{99})^{99})^{99})",  # was > 150 s
        r"(x+1)^{99}(x+2)^{99}(x-1)^{2}",  # was 3-13 s
        r"((x+1)^{10})^{10}",  # was 19 s: degree 100 but 10^4 multinomial terms
        r"((x+1)^{6})^{10}",
        r"(x+1)^{66}(x-1)^{66}",
    ],
)
def test_equivalent_expression_refuses_huge_expressions_fast(answer: str) -> None:
    env = get_env("equivalent_expression")
    problem = env.generate(3, 0)
    verdict, seconds = _timed(env.verify, problem, f"\\boxed{{{answer}}}")
    assert seconds < BUDGET_S, f"{answer}: {seconds:.2f} s"
    assert not verdict.correct
    assert verdict.reward == -0.5  # RLVE's "invalid answer"


@pytest.mark.parametrize(
    "answer",
    [
        # found by the 1,000,000-output fuzz run: text the size check cannot read lets the
        # nested power through to sympy, whose expand/Poly took 20-30 s on it
        '$-20784894378393589837"((x+1)^{10})^{10}',
        "((x+1)^{10})^{10}\x856x + 2inf",
        "((x+1)^{10})^{10} + 2inf",
    ],
)
def test_fuzz_found_nested_powers_behind_unreadable_text_are_fast(answer: str) -> None:
    env = get_env("equivalent_expression")
    problem = env.generate(0, 1)
    verdict, seconds = _timed(env.verify, problem, f"\\boxed{{{answer}}}")
    assert seconds < BUDGET_S, f"{answer!r}: {seconds:.2f} s (was 20-30 s)"
    assert not verdict.correct and verdict.reward <= 0.0


def test_equivalent_expression_still_accepts_factored_forms() -> None:
    env = get_env("equivalent_expression")
    for seed in range(5):
        problem = env.generate(6, seed)
        for form in env.equivalent_forms(problem):
            assert env.verify(problem, f"\\boxed{{{form}}}").correct, form


def test_tower_is_refused_by_the_size_check_before_sympy() -> None:
    with pytest.raises(SizeError, match="digits"):
        check_size(r"((((99^{99})^{99})^{99})^{99})", ("x",), Limits())
    with pytest.raises(SizeError, match="terms"):
        parse_expression(r"((x+1)^{10})^{10}", ("x",), Limits(max_degree=200))
    assert check_size("(x+1)^3 (x-2)", ("x",)) == (4, 2 * 3 + 2)  # digit bounds add up


@pytest.mark.parametrize(
    ("text", "old_s"),
    [("\\boxed{" * 4000, 11.8), ("<answer>" * 8000, 5.2), ("\\boxed{x}" + "\\boxed{" * 4000, 11.8)],
)
def test_extraction_is_linear_in_unclosed_markers(text: str, old_s: float) -> None:
    _, seconds = _timed(extract_answer, text)
    assert seconds < 0.2, f"{seconds:.2f} s (was {old_s} s)"
    env = get_env("addition")
    verdict, seconds = _timed(env.verify, env.generate(2, 0), text)
    assert seconds < BUDGET_S and verdict.reward == -1.0


def test_extraction_semantics() -> None:
    assert last_boxed("\\boxed{1} \\boxed{\\frac{1}{2}} \\boxed{") == "\\frac{1}{2}"
    assert last_boxed("\\boxed{a \\} b}") == "a \\} b"
    assert last_boxed("\\boxed{\\boxed{1}") == "1"  # the outer one never closes
    assert last_boxed("\\boxed{\\boxed{1}}") == "1"  # the marker that starts last wins
    assert last_answer_tag("<answer>1</answer><answer>2</answer><answer>3") == "2"
    assert last_answer_tag("<answer><answer>1</answer>") == "<answer>1"


def test_knights_knaves_long_name_is_linear() -> None:
    env = get_env("knights_knaves")
    problem = env.generate(3, 0)
    verdict, seconds = _timed(env.verify, problem, "\\boxed{" + "a" * 10_000 + "}")
    assert seconds < BUDGET_S, f"{seconds:.2f} s (was 19 s)"
    assert not verdict.correct
    solution = env.solve(problem)
    assert env.verify(problem, f"\\boxed{{{solution}}}").correct


@pytest.mark.parametrize("difficulty", [10_000, 100_000_000])
def test_difficulty_above_the_cap_names_the_difficulty(difficulty: int) -> None:
    env = get_env("addition")
    with pytest.raises(UserInputError, match=f"difficulty {difficulty}.*max_difficulty"):
        _timed(env.generate, difficulty, 0)


def test_generator_failures_become_user_errors_naming_the_difficulty() -> None:
    class Huge(Environment):
        name = "huge_test_env"
        family = "test"
        difficulty_scales = "digits: 10^difficulty"
        max_difficulty = 1000

        def _generate(self, difficulty: int, rng: random.Random) -> Instance:
            return Instance(str(10 ** (10 * difficulty)), "0")  # str() of 5000 digits fails

        def check(self, problem: Problem, answer: str) -> Verdict:
            return Verdict(0.0, False)

        def solve(self, problem: Problem) -> str:
            return "0"

    with pytest.raises(UserInputError, match="difficulty 500"):
        Huge().generate(500, 0)
    assert Huge().generate(2, 0).prompt.startswith("1" + "0" * 20)


def test_unknown_family_lists_the_known_ones() -> None:
    from verirl.envs import env_names

    with pytest.raises(UserInputError, match=r"unknown environment family 'nope'.*arithmetic"):
        env_names(family="nope")
    assert "addition" in env_names(family="arithmetic")
