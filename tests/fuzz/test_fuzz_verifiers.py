"""Fuzz every registered environment and both proof filters with hostile outputs; the deadline
that bounds a verifier call in training, tested on a verifier that runs past it.

The counted run verifies ``VERIRL_FUZZ_COUNT`` outputs (default 10,000) spread over all
registered environments (the registry is iterated: new environments are fuzzed with no change
here). A call's budget is ``VERIRL_FUZZ_BUDGET`` reference workloads (default
:data:`~tests.fuzz.runner.BUDGET_UNITS`, about 1 s on a 2-core machine), timed in the
same run (:mod:`tests.calibration`): no wall-clock time is assumed. What bounds a call in
training is not this budget but the verification stage's deadline, tested directly below.
For a large run use ``bench/fuzz_verifiers.py``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from tests.calibration import Budget, timed
from tests.fuzz.hostile import hostile_texts
from tests.fuzz.runner import BUDGET_UNITS, fuzz_environments
from verirl.envs import env_names, get_env
from verirl.provers.coq.attempt import prepare_attempt
from verirl.provers.lean.safety import lean_proof_violation, locate_lean_proof
from verirl.types import Problem, Verdict
from verirl.verification.batch import BatchVerifier
from verirl.verification.executors import InlineExecutor, ProcessExecutor

COUNT = int(os.environ.get("VERIRL_FUZZ_COUNT", "10000"))
BUDGET = Budget(float(os.environ.get("VERIRL_FUZZ_BUDGET", str(BUDGET_UNITS))))


def test_every_environment_survives_hostile_outputs() -> None:
    report = fuzz_environments(COUNT, budget=BUDGET)
    assert report.environments == len(env_names()) >= 90
    # only prover-backed environments may be skipped (no Lean here; no Coq on a bare machine)
    assert all(get_env(n).prover is not None for n in report.skipped), report.skipped
    assert report.outputs >= 0.9 * COUNT * (1 - 4 / report.environments)
    assert not report.failures, "\n".join(report.failures[:40])


def _filters(text: str) -> tuple[str | None, int, str | None]:
    reason = lean_proof_violation(text)
    loc = locate_lean_proof(text, "theorem t : 1 = 1 := by", "import Mathlib")
    att = prepare_attempt(text)
    return reason, loc.proof_start, att.rejection


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_texts())
def test_proof_filters_never_raise_and_are_fast(text: str) -> None:
    t0 = time.perf_counter()
    reason, proof_start, rejection = _filters(text)
    over = BUDGET.overrun(lambda: _filters(text), time.perf_counter() - t0)
    assert over is None, f"{over:.0f} reference workloads (budget {BUDGET.units:.0f})"
    assert reason is None or isinstance(reason, str)
    assert 0 <= proof_start <= len(text)
    if any("\ud800" <= ch <= "\udfff" for ch in text):
        assert reason is not None and rejection is not None  # not text: never run


# ---- the deadline: what bounds a verifier call in training ---------------------------------
def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_stage_deadline_stops_a_verifier_that_spins(tmp_path: Path) -> None:
    """A verifier stuck in pure Python (the plugin makes ``addition`` spin for 120 s in the
    workers) scores as a timeout, invalid (-0.5), counted; its worker is killed, not waited
    for, and the pool goes on. The deadline is what stops it: no clock is read here."""
    env = get_env("addition")
    problem = env.generate(0, 3)
    marker = tmp_path / "spinning-worker.pid"
    with ProcessExecutor(plugins=["tests.fuzz.spinning_verifier"]) as pool:
        stage = BatchVerifier(pool, timeout_s=1.0)
        stuck, right = stage.verify(
            [problem, problem], [f"\\boxed{{spin:{marker}}}", f"\\boxed{{{problem.answer}}}"]
        )
        assert stuck is not None and right is not None
        assert (stuck.reward, stuck.correct, stuck.extra) == (-0.5, False, {"status": "timeout"})
        assert right.correct
        assert stage.metrics()["verifier_timeouts"] == 1
        pid = int(marker.read_text())
        # the worker that spun is gone (killed at the deadline: a finished call leaves its
        # worker serving the pool); its exit is reaped asynchronously, so poll for it
        for _ in range(600):
            if not _alive(pid):
                break
            time.sleep(0.05)
        assert not _alive(pid)
        (again,) = stage.verify([problem], [f"\\boxed{{{problem.answer}}}"])
        assert again is not None and again.correct


def test_an_inline_deadline_reports_the_overrun_as_a_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Inline, the stage cannot stop a call; it scores one that ran past its deadline as a
    timeout all the same (the call here spins four times its deadline)."""
    env = get_env("addition")
    problem = env.generate(0, 3)
    original = type(env).check

    def slow_check(self: object, p: Problem, answer: str) -> Verdict:
        end = time.monotonic() + 0.2
        while time.monotonic() < end:
            pass
        return original(env, p, answer)

    monkeypatch.setattr(type(env), "check", slow_check)
    stage = BatchVerifier(InlineExecutor(), timeout_s=0.05)
    (verdict,) = stage.verify([problem], [f"\\boxed{{{problem.answer}}}"])
    assert verdict is not None
    assert (verdict.reward, verdict.correct, verdict.extra) == (-0.5, False, {"status": "timeout"})


def test_a_budget_counts_only_calls_slow_every_time() -> None:
    """The fuzz budget's retiming: a call over budget once (a burst of load) is within it
    when timed again; one slow every time is reported in reference units."""
    budget = Budget(units=2.0)
    fast = budget.overrun(lambda: None, elapsed=10 * budget.seconds)
    assert fast is None
    spin_s = 5 * budget.seconds

    def slow() -> None:
        end = time.perf_counter() + spin_s
        while time.perf_counter() < end:
            pass

    units = budget.overrun(slow, elapsed=timed(slow))
    assert units is not None and units > budget.units
