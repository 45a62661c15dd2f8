"""math-verify grading of GSM8K / MATH answers: what it accepts, rejects, and survives."""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

import pytest

from verirl.evals.math_answers import Grade, gsm8k_gold, parse_gold
from verirl.evals.math_answers import grade as grade_5s

SLACK_S = 60  # math-verify's timeouts are wall-clock; a busy CI machine must not fail a gold


def grade(response: str, gold: str) -> Grade:
    return grade_5s(response, gold, SLACK_S)


REPO = Path(__file__).resolve().parents[2]


def shared_benchmarks() -> Path:
    """``$VERIRL_BENCHMARKS`` or ``../shared/benchmarks`` beside the repository."""
    env = os.environ.get("VERIRL_BENCHMARKS")
    return Path(env) if env else REPO / ".." / "shared" / "benchmarks"


def published(name: str) -> list[dict]:
    path = shared_benchmarks() / name
    if not path.is_file():
        pytest.skip(f"{path} is absent (the published benchmark files live in ../shared)")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def test_gsm8k_gold_is_the_number_after_the_last_marker() -> None:
    assert gsm8k_gold("So 9 * 2 = <<9*2=18>>18.\n#### 18") == "18"
    assert gsm8k_gold("... #### 1,000") == "1000"
    assert gsm8k_gold("#### $-3.5 ") == "-3.5"
    with pytest.raises(ValueError, match="####"):
        gsm8k_gold("The answer is 18.")


@pytest.mark.parametrize(
    ("response", "gold", "correct"),
    [
        ("She makes 9 * 2 = 18 dollars.\nThe answer is \\boxed{18}.", "18", True),
        ("So she makes 18 dollars a day.", "18", True),  # the last number, no box
        ("\\boxed{18.0}", "18", True),
        ("\\boxed{\\$18}", "18", True),
        ("First 18, then \\boxed{19}", "18", False),  # the boxed answer is the final one
        ("\\boxed{19}", "18", False),
        ("no answer at all", "18", False),
        ("Therefore \\boxed{\\frac{1}{2}}", "0.5", True),
        ("$\\boxed{\\dfrac{14}{3}}$", "\\frac{14}{3}", True),
        (
            "\\boxed{\\left( 3, \\frac{\\pi}{2} \\right)}",
            "\\left( 3, \\frac{\\pi}{2} \\right)",
            True,
        ),
        ("\\boxed{(3, \\pi)}", "\\left( 3, \\frac{\\pi}{2} \\right)", False),
        ("\\boxed{x^2+7x+10}", "(x+5)(x+2)", True),
        ("\\boxed{x^2+7x+11}", "(x+5)(x+2)", False),
        ("\\boxed{\\text{Evelyn}}", "\\text{Evelyn}", True),
        ("\\boxed{\\text{Bob}}", "\\text{Evelyn}", False),
    ],
)
def test_grade(response: str, gold: str, correct: bool) -> None:
    assert grade(response, gold).correct is correct


def test_grade_reports_the_answer_and_the_box() -> None:
    g = grade("The total is \\boxed{42}.", "42")
    assert g.correct and g.boxed and g.answer is not None and "42" in g.answer
    g = grade("The total is 42.", "42")
    assert g.correct and not g.boxed
    assert grade("nothing here", "42").answer is None


@pytest.mark.parametrize(
    "hostile",
    [
        "",
        "\\boxed{" * 5000,
        "}" * 5000 + "\\boxed{",
        "\\boxed{" + "(" * 3000 + "}",
        "9" * 50_000,
        "\\boxed{\\frac{" * 200 + "}}" * 200,
        "\\boxed{x^{y^{z^{w^{v^{u^{t}}}}}}}",
        "\x00\ud800 \\boxed{1}",
    ],
)
def test_hostile_responses_never_raise(hostile: str) -> None:
    g = grade_5s(hostile, "18")  # a timeout is a wrong answer too
    assert g.correct is False


def test_grading_outside_the_main_thread() -> None:
    out: list[bool] = []
    t = threading.Thread(target=lambda: out.append(grade("\\boxed{\\frac12}", "0.5").correct))
    t.start()
    t.join()
    assert out == [True]


def test_unreadable_gold_grades_nothing_correct() -> None:
    assert parse_gold("") == []
    assert not grade("\\boxed{1}", "").correct


def _gsm8k_golds_self_accept(rows: list[dict]) -> tuple[list[str], list[str]]:
    """(golds not accepted as themselves, corrupted golds accepted)."""
    missed, fooled = [], []
    for row in rows:
        gold = gsm8k_gold(row["answer"])
        final = row["answer"].rsplit("####", 1)[-1].strip()  # as the solution writes it
        for response in (f"The answer is \\boxed{{{final}}}.", f"So the answer is {final}."):
            if not grade(response, gold).correct:
                missed.append(f"{gold!r} vs {response!r}")
        wrong = str(int(float(gold)) + 1) if float(gold).is_integer() else f"{float(gold) + 1}"
        for response in (f"\\boxed{{{wrong}}}", f"So the answer is {wrong}."):
            if grade(response, gold).correct:
                fooled.append(f"{gold!r} vs {response!r}")
    return missed, fooled


def _math_golds_self_accept(rows: list[dict]) -> tuple[list[str], list[str]]:
    missed, fooled = [], []
    for row in rows:
        gold = row["answer"]
        for response in (f"The final answer is \\boxed{{{gold}}}.", row["solution"]):
            if not grade(response, gold).correct:
                missed.append(f"{gold!r} vs {response[-80:]!r}")
        corrupted = [f"\\boxed{{{gold}+1}}"]
        digit = re.search(r"\d", gold)
        if digit:  # a changed expression: its first digit moved by one
            moved = str((int(digit.group()) + 1) % 10)
            corrupted.append(f"\\boxed{{{gold[: digit.start()]}{moved}{gold[digit.end() :]}}}")
        for response in corrupted:
            if grade(response, gold).correct:
                fooled.append(f"{gold!r} vs {response!r}")
    return missed, fooled


def test_first_published_golds_self_accept() -> None:
    """The first 40 rows of each file (the slow test below reads them all)."""
    assert _gsm8k_golds_self_accept(published("gsm8k_test.jsonl")[:40]) == ([], [])
    assert _math_golds_self_accept(published("math500_test.jsonl")[:40]) == ([], [])


@pytest.mark.slow
def test_every_gsm8k_gold_self_accepts_and_corruptions_fail() -> None:
    rows = published("gsm8k_test.jsonl")
    assert len(rows) == 1319
    missed, fooled = _gsm8k_golds_self_accept(rows)
    assert missed == [] and fooled == []


@pytest.mark.slow
def test_every_math500_gold_self_accepts_and_corruptions_fail() -> None:
    rows = published("math500_test.jsonl")
    assert len(rows) == 500
    missed, fooled = _math_golds_self_accept(rows)
    assert missed == [] and fooled == []


def test_the_deadline_survives_a_swallowed_alarm() -> None:
    """An exception raised while a __del__ or a gc callback runs is dropped by the interpreter:
    math-verify's one-shot alarm then left the call without a deadline. Ours repeats."""
    import time

    from verirl.evals.math_answers import GradeTimeout, _deadline

    swallowed = 0
    t0 = time.monotonic()
    with pytest.raises(GradeTimeout), _deadline(0.2):
        while time.monotonic() - t0 < 10.0:
            try:
                time.sleep(0.01)
            except GradeTimeout:
                swallowed += 1  # what a gc callback does with it
                if swallowed > 1:
                    raise
    # the first GradeTimeout was swallowed and a second one came: the alarm repeated (with
    # a one-shot alarm the loop would have ended after 10 s with none raised)
    assert swallowed == 2


def test_a_grade_that_overruns_is_wrong_not_a_hang(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    import math_verify

    def slow_verify(*args: object, **kwargs: object) -> bool:
        time.sleep(30)
        return True

    monkeypatch.setattr(math_verify, "verify", slow_verify)
    # waited out, the slow verify would have said True: False is the deadline's verdict
    assert grade_5s("\\boxed{42}", "42", timeout_s=1).correct is False
