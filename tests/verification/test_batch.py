"""The batched verification stage: every environment verification of a batch with a deadline;
timeouts and verifier errors scored, counted and logged, never raised."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from verirl.envs import get_env
from verirl.types import Problem, Verdict
from verirl.verification.batch import BatchVerifier
from verirl.verification.executors import ProcessExecutor


class _Slow:
    """An executor that times out every call (stands in for a hung verifier)."""

    def map(self, fn, items: Sequence[object], timeout_s: float | None = None):  # type: ignore[no-untyped-def]
        from verirl.verification.executors import Outcome

        return [Outcome(error="exceeded", timed_out=True) for _ in items]

    def close(self) -> None:
        pass


def test_timeouts_score_invalid_and_are_counted() -> None:
    env = get_env("addition")
    p = env.generate(0, 1)
    v = BatchVerifier(_Slow())  # type: ignore[arg-type]
    (verdict,) = v.verify([p], ["\\boxed{1}"])
    assert verdict is not None and verdict.reward == -0.5 and not verdict.correct
    assert verdict.extra["status"] == "timeout"
    m = v.metrics()
    assert m["verifier_timeouts"] == 1 and m["verifier_errors"] == 0
    assert v.metrics()["verifier_timeouts"] == 0  # reset after reading


def test_verifier_exceptions_are_counted_and_logged(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    env = get_env("addition")
    p = env.generate(0, 7)

    def broken(problem: Problem, answer: str) -> Verdict:
        raise IndexError("verifier bug")

    monkeypatch.setattr(type(env), "check", lambda self, problem, answer: broken(problem, answer))
    v = BatchVerifier()
    with caplog.at_level("WARNING", logger="verirl.verification"):
        (verdict,) = v.verify([p], ["\\boxed{3}"])
    assert verdict is not None and verdict.reward == -1.0
    assert "IndexError: verifier bug" in verdict.extra["verifier_error"]
    assert v.metrics()["verifier_errors"] == 1
    assert "addition (difficulty 0, seed 7)" in caplog.text


def test_unparseable_answers_are_not_verifier_errors() -> None:
    env = get_env("addition")
    v = BatchVerifier()
    (verdict,) = v.verify([env.generate(0, 0)], ["\\boxed{not a number}"])
    assert verdict is not None and verdict.reward == -1.0
    assert v.metrics()["verifier_errors"] == 0


def test_free_form_problems_are_left_to_the_reward_source() -> None:
    p = Problem(env="my_dataset", difficulty=0, seed=0, prompt="q", answer="4")
    assert BatchVerifier().verify([p], ["\\boxed{4}"]) == [None]


def test_processes_give_the_same_verdicts_as_inline() -> None:
    env = get_env("multiplication")
    problems = [env.generate(1, s) for s in range(8)]
    texts = [f"\\boxed{{{env.solve(p) if s % 2 else '7'}}}" for s, p in enumerate(problems)]
    with ProcessExecutor() as ex:
        parallel = BatchVerifier(ex).verify(problems, texts)
    assert parallel == BatchVerifier().verify(problems, texts)
    assert [v.correct for v in parallel if v] == [bool(s % 2) for s in range(8)]
