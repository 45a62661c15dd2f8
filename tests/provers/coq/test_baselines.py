"""The classical provers' registry: what each baseline checks, and its imports."""

from __future__ import annotations

import pytest

from tests.provers.coq.marks import needs_coq
from verirl.errors import UnknownNameError, UserInputError
from verirl.evals.benchmarks import BenchmarkSettings
from verirl.evals.proving import BaselinePolicy, baseline_policies, run_proofs
from verirl.provers.base import FormalProblem
from verirl.provers.coq.attempt import prepare_attempt
from verirl.provers.coq.baselines import (
    BASELINES,
    HAMMER_BASELINES,
    CoqBaseline,
    script_baselines,
)

HEADER = "Require Import Reals.\nOpen Scope R_scope."
PROBLEM = FormalProblem("coq", "t", "Theorem t : forall x : R, x = x.", HEADER)


def test_the_issue_s_baselines_are_registered_and_pass_the_safety_filter() -> None:
    wanted = {"lia", "nia", "lra", "nra", "ring", "field", "auto", "intuition", "firstorder"}
    wanted |= {"intros; nia", "intros; lra", "hammer", "sauto"}
    assert wanted <= set(BASELINES)
    for name in BASELINES:
        attempt = prepare_attempt(BASELINES.get(name).part.proof)
        assert attempt.rejection is None, name
        assert len(attempt.tactics) == 1, name  # one tactic sentence between Proof and Qed


def test_a_baseline_imports_its_tactic_before_the_header() -> None:
    lia = BASELINES.get("intros; nia").part.problem(PROBLEM, 15.0)
    assert lia.prelude.startswith("Require Import Lia.\n" + HEADER)
    assert (lia.statement, lia.name) == (PROBLEM.statement, PROBLEM.name)
    assert BASELINES.get("ring").part.problem(PROBLEM, 15.0) == PROBLEM  # no import needed
    hammer = BASELINES.get("hammer").part.problem(PROBLEM, 15.0)
    lines = hammer.prelude.splitlines()
    assert lines[:4] == [
        "From Hammer Require Import Hammer.",
        "Set Hammer GSMode 2.",
        "Set Hammer ATPLimit 7.",
        "Set Hammer ReconstrLimit 3.",
    ]
    assert "Set Hammer ATPLimit 20.\nSet Hammer ReconstrLimit 10." in (
        BASELINES.get("hammer").part.prelude(40.0)
    )
    assert BASELINES.get("sauto").part.roots == ("Hammer",)


def test_scripts_and_all_select_the_registered_baselines() -> None:
    scripts = script_baselines()
    assert not set(scripts) & set(HAMMER_BASELINES) and "lia" in scripts
    assert [p.name for p in baseline_policies(["scripts"])] == scripts
    assert [p.name for p in baseline_policies(["all"])] == list(BASELINES)
    assert [p.name for p in baseline_policies(["lia", "lia", "hammer"])] == ["lia", "hammer"]
    with pytest.raises(UnknownNameError, match=r"known: .*lia"):
        baseline_policies(["omega"])


def test_a_name_cannot_be_registered_twice() -> None:
    with pytest.raises(ValueError, match="already registered"):
        BASELINES.register("lia")(CoqBaseline("lia", "lia.", "again"))


def test_a_baseline_policy_answers_every_theorem_with_its_script() -> None:
    policy = BaselinePolicy(BASELINES.get("lra").part)
    assert policy.deterministic
    out = policy.attempts([object(), object()], BenchmarkSettings())  # type: ignore[list-item]
    assert [[a.proof for a in row] for row in out] == [["Proof.\n  lra.\nQed."]] * 2


def test_a_deterministic_prover_refuses_several_samples() -> None:
    settings = BenchmarkSettings(samples=4, temperature=1.0, ks=(1, 4))
    policy = BaselinePolicy(BASELINES.get("lia").part)
    with pytest.raises(UserInputError, match="deterministic"):
        run_proofs("minif2f-rocq", "test", [], policy, None, settings, 15.0)


@pytest.mark.coq
@needs_coq
def test_a_context_that_fails_is_a_failed_attempt_not_a_crash_of_the_run() -> None:
    from verirl.evals.formal import FormalItem
    from verirl.evals.proving import check_attempts
    from verirl.provers.coq.idetop import CoqIdeChecker

    good = FormalProblem("coq", "g", "Theorem g : 1 = 1.")
    bad = FormalProblem("coq", "b", "Theorem b : 1 = 1.", "Require Import NoSuchLibrary.")
    items = [
        FormalItem("g", "g", good.statement, "", lambda: good, locality="a"),
        FormalItem("b", "b", bad.statement, "", lambda: bad, locality="b"),
    ]
    policy = BaselinePolicy(BASELINES.get("reflexivity").part)
    with CoqIdeChecker(workers=2) as checker:
        attempts = policy.attempts(items, BenchmarkSettings())
        (g,), (b,) = check_attempts(items, attempts, policy, checker, 15.0)
    assert g is not None and g.passed
    assert b is not None and not b.passed and "NoSuchLibrary" in b.raw["context"]
