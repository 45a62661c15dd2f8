"""The batched verification stage: executors with deadlines, counted errors and timeouts."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

import pytest

from verirl.envs import get_env
from verirl.rewards.executors import EXECUTORS, InlineExecutor, ProcessExecutor, ThreadExecutor
from verirl.rewards.verification import BatchVerifier
from verirl.types import Problem, Verdict


def _double(x: int) -> int:
    return 2 * x


def _slow_or_fail(x: float) -> float:
    if x < 0:
        raise ZeroDivisionError("negative input")
    time.sleep(x)
    return x


def _die(x: int) -> int:
    os._exit(3)


@pytest.mark.parametrize("name", ["inline", "threads", "processes"])
def test_every_executor_maps_in_order_and_reports_errors(name: str) -> None:
    with EXECUTORS.get(name).build({}) as ex:
        assert [o.value for o in ex.map(_double, [1, 2, 3])] == [2, 4, 6]
        out = ex.map(_slow_or_fail, [0.0, -1.0])
        assert out[0].ok and out[0].value == 0.0
        assert not out[1].ok and "ZeroDivisionError: negative input" in (out[1].error or "")


def test_processes_enforce_the_deadline_and_replace_the_worker() -> None:
    with ProcessExecutor() as ex:
        t0 = time.perf_counter()
        out = ex.map(_slow_or_fail, [30.0, 0.0, 0.01], timeout_s=1.0)
        assert time.perf_counter() - t0 < 15  # the 30 s call was stopped
        assert out[0].timed_out and not out[0].ok
        assert [o.value for o in out[1:]] == [0.0, 0.01]
        assert ex.map(_double, [5])[0].value == 10  # the pool still serves calls


def _registered_environments(_: int) -> int:
    """How many environments the worker has registered, without loading any itself."""
    from verirl.envs.base import ENVIRONMENTS

    return len(ENVIRONMENTS.names())


def test_process_workers_load_every_environment_before_their_first_call() -> None:
    """Loading the families costs seconds; inside a call it counted against the deadline."""
    from verirl.envs import env_names

    expected = len(env_names())
    with ProcessExecutor() as ex:
        assert [o.value for o in ex.map(_registered_environments, [0, 1])] == [expected] * 2


def test_a_worker_that_dies_costs_its_item_only() -> None:
    with ProcessExecutor() as ex:
        out = ex.map(_die, [1])
        assert not out[0].ok and "worker died" in (out[0].error or "")
        assert ex.map(_double, [4])[0].value == 8


def test_threads_and_inline_report_overruns() -> None:
    with ThreadExecutor() as ex:
        out = ex.map(_slow_or_fail, [2.0], timeout_s=0.2)
        assert out[0].timed_out
    out = InlineExecutor().map(_slow_or_fail, [0.3], timeout_s=0.1)
    assert out[0].timed_out  # reported after the fact (inline cannot stop a call)


# ---- the verifier --------------------------------------------------------------------------
class _Slow:
    """An executor that times out every call (stands in for a hung verifier)."""

    def map(self, fn, items: Sequence[object], timeout_s: float | None = None):  # type: ignore[no-untyped-def]
        from verirl.rewards.executors import Outcome

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
