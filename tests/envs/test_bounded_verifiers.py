"""Regression tests: verifier inputs that used to take seconds to minutes (untrusted text is data).

Each input is one from the hostile-output issues (the old time noted per test, measured on a
2-core CI machine). What is checked is what makes it cheap — refused by the shared reader's
bounds before sympy or the ANTLR parser is called, extraction linear in the text — and where
times are compared it is a ratio of two measured in the same run: no absolute wall-clock time.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from tests.calibration import timed
from verirl.envs import Environment, Instance, get_env
from verirl.envs.reading import symbolic_parser
from verirl.envs.reading.answers import extract_answer, last_answer_tag, last_boxed
from verirl.envs.reading.symbolic_parser import Limits, SizeError, check_size, parse_expression
from verirl.errors import UserInputError
from verirl.types import Problem, Verdict


class _Refused:
    """Stands in for a parser that must not run: records its calls, builds nothing."""

    exact = True

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        self.calls.append(name)
        raise AssertionError(f"{name} was called")

    def __call__(self, text: str, *args: object, **kwargs: object) -> Any:
        self.calls.append(text)
        raise AssertionError("the ANTLR parser was called")


@pytest.fixture
def nothing_parsed(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[_Refused, _Refused]]:
    """Neither the shared reader's sympy pass nor the ANTLR LaTeX parser may run."""
    import latex2sympy2_extended

    sympy_pass, antlr = _Refused(), _Refused()
    monkeypatch.setattr(symbolic_parser, "SYMPY", sympy_pass)
    monkeypatch.setattr(latex2sympy2_extended, "latex2sympy", antlr)
    yield sympy_pass, antlr
    assert sympy_pass.calls == [] and antlr.calls == []


@pytest.mark.parametrize(
    "answer",
    [
        r"((((99^{99})^{99})^{99})^{99})",  # was > 150 s
        r"(x+1)^{99}(x+2)^{99}(x-1)^{2}",  # was 3-13 s
        r"((x+1)^{10})^{10}",  # was 19 s: degree 100 but 10^4 multinomial terms
        r"((x+1)^{6})^{10}",
        r"(x+1)^{66}(x-1)^{66}",
        # found by the 1,000,000-output fuzz run: text the size check could not read let the
        # nested power through to sympy, whose expand/Poly took 20-30 s on it
        '$-20784894378393589837"((x+1)^{10})^{10}',
        "((x+1)^{10})^{10}\x856x + 2inf",
        "((x+1)^{10})^{10} + 2inf",
        # issue 34: outside the reader's grammar, handed to the ANTLR parser: 1.02 s on an
        # AVX2-only machine at the lowest supported versions
        '１２Redirect "x" Print nat.27x^2 + 4x - 1Admitted.27x^2 + 4x - 1',
        # inside the grammar, but costly for the ANTLR parser: 13 s, 0.3 s, 0.3 s
        "(" * 30 + "x" + ")" * 30,
        "x" * 199,
        "+".join(["x"] * 99),
        "((((12x^{3} - 4x + 5))))",
    ],
)
def test_equivalent_expression_refuses_hostile_answers_before_parsing(
    nothing_parsed: tuple[_Refused, _Refused], answer: str
) -> None:
    env = get_env("equivalent_expression")
    problem = env.generate(3, 0)
    verdict = env.verify(problem, f"\\boxed{{{answer}}}")
    assert (verdict.reward, verdict.correct) == (-0.5, False)  # RLVE's "invalid answer"


def test_equivalent_expression_still_accepts_factored_forms() -> None:
    env = get_env("equivalent_expression")
    for seed in range(5):
        problem = env.generate(6, seed)
        for form in env.equivalent_forms(problem):
            assert env.verify(problem, f"\\boxed{{{form}}}").correct, form
            # latex2sympy reads every symbol in lowercase, and so does the guard before it
            upper = form.split("=")[-1].replace("x", "X")
            assert env.verify(problem, f"\\boxed{{{upper}}}").correct, form


def test_tower_is_refused_by_the_size_check_before_sympy() -> None:
    with pytest.raises(SizeError, match="digits"):
        check_size(r"((((99^{99})^{99})^{99})^{99})", ("x",), Limits())
    with pytest.raises(SizeError, match="terms"):
        parse_expression(r"((x+1)^{10})^{10}", ("x",), Limits(max_degree=200))
    assert check_size("(x+1)^3 (x-2)", ("x",)) == (4, 2 * 3 + 2)  # digit bounds add up


def _growth(call: Any, small: str, large: str) -> float:
    """How much longer ``call`` takes on ``large`` than on ``small`` (fastest of five each)."""
    t_small = min(timed(lambda: call(small)) for _ in range(5))
    t_large = min(timed(lambda: call(large)) for _ in range(5))
    return t_large / max(t_small, 1e-9)


@pytest.mark.parametrize(
    ("marker", "old_s"), [("\\boxed{", 11.8), ("<answer>", 5.2), ("\\boxed{x}\\boxed{", 11.8)]
)
def test_extraction_is_linear_in_unclosed_markers(marker: str, old_s: float) -> None:
    """Four times the markers take about four times as long (a quadratic scan: sixteen times;
    ``old_s``: what the old scan took on 4,000 markers)."""
    assert _growth(extract_answer, marker * 8000, marker * 32000) < 10
    env = get_env("addition")
    assert env.verify(env.generate(2, 0), marker * 4000).reward == -1.0


def test_extraction_semantics() -> None:
    assert last_boxed("\\boxed{1} \\boxed{\\frac{1}{2}} \\boxed{") == "\\frac{1}{2}"
    assert last_boxed("\\boxed{a \\} b}") == "a \\} b"
    assert last_boxed("\\boxed{\\boxed{1}") == "1"  # the outer one never closes
    assert last_boxed("\\boxed{\\boxed{1}}") == "1"  # the marker that starts last wins
    assert last_answer_tag("<answer>1</answer><answer>2</answer><answer>3") == "2"
    assert last_answer_tag("<answer><answer>1</answer>") == "<answer>1"


def test_knights_knaves_long_name_is_linear() -> None:
    """Four times the name, at most about four times the time (it took 19 s on 10,000)."""
    env = get_env("knights_knaves")
    problem = env.generate(3, 0)
    growth = _growth(
        lambda text: env.verify(problem, text),
        "\\boxed{" + "a" * 10_000 + "}",
        "\\boxed{" + "a" * 40_000 + "}",
    )
    assert growth < 10
    assert not env.verify(problem, "\\boxed{" + "a" * 10_000 + "}").correct
    solution = env.solve(problem)
    assert env.verify(problem, f"\\boxed{{{solution}}}").correct


@pytest.mark.parametrize("difficulty", [10_000, 100_000_000])
def test_difficulty_above_the_cap_names_the_difficulty(difficulty: int) -> None:
    env = get_env("addition")
    with pytest.raises(UserInputError, match=f"difficulty {difficulty}.*max_difficulty"):
        env.generate(difficulty, 0)


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
