"""Cheats, live: each kind is rejected with a reason by both checkers before Coq sees it, and
nothing is written outside the checkers' temporary directories. Control tests show that the
same text *would* cheat (or write a file) if it reached Coq unfiltered."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.provers.coq.marks import needs_coq
from verirl.provers.base import FormalProblem, ProofChecker
from verirl.provers.coq.coqc import CoqcChecker
from verirl.provers.coq.idetop import CoqIdeChecker

pytestmark = [
    pytest.mark.coq,
    needs_coq,
]

PROBLEM = FormalProblem("coq", "add_0_r", "Theorem add_0_r : forall n : nat, n + 0 = n.")
FALSE_PROBLEM = FormalProblem("coq", "no", "Theorem no : 1 = 2.")


def cheats(target: Path) -> list[tuple[str, str, str]]:
    """(kind, proof, word the reason names); file-writing ones aim at ``target``."""
    t = str(target)
    return [
        ("admit", "Proof. intros n. admit. Qed.", "admit"),
        ("Admitted", "Proof. intros n. Admitted.", "Admitted"),
        ("give_up", "Proof. give_up. Qed.", "give_up"),
        ("Abort", "Proof. Abort.", "Abort"),
        ("Axiom", "Axiom cheat : forall P : Prop, P. apply cheat. Qed.", "Axiom"),
        ("Parameter", "Parameter cheat : 1 = 2. exact cheat. Qed.", "Parameter"),
        ("Hypothesis", "Hypothesis cheat : 1 = 2. exact cheat. Qed.", "Hypothesis"),
        ("Variable", "Variable cheat : 1 = 2. exact cheat. Qed.", "Variable"),
        ("Conjecture", "Conjecture cheat : 1 = 2. exact cheat. Qed.", "Conjecture"),
        ("Redirect", f'Redirect "{t}" Print nat. admit. Qed.', "Redirect"),
        ("Extraction", f'Extraction "{t}.ml" nat. Qed.', "Extraction"),
        ("Load", f'Load "{t}". Qed.', "Load"),
        ("Cd", f'Cd "{target.parent}". Qed.', "Cd"),
        ("Declare ML Module", 'Declare ML Module "ltac_plugin". Qed.', "Declare ML Module"),
        ("Require", "Require Import Coq.Logic.Classical. Qed.", "Require"),
        ("Import", "Import Nat. Qed.", "Import"),
        ("Drop", "Drop. Qed.", "Drop"),
        ("Timeout", "Timeout 1 reflexivity. Qed.", "Timeout"),
        ("Fail", "Fail reflexivity. Qed.", "Fail"),
        ("Unset Guard Checking", "Unset Guard Checking. Qed.", "Unset"),
        ("new statement", "Qed. Theorem no' : True. Proof. exact I. Qed.", "Qed must be the last"),
        ("helper lemma", "Lemma cheat : 1 = 2. Admitted. exact cheat. Qed.", "Lemma"),
        ("helper definition", "Definition x := 1. reflexivity. Qed.", "Definition"),
        ("native_compute", "native_compute. reflexivity. Qed.", "native_compute"),
    ]


@pytest.fixture(scope="module")
def ide() -> Iterator[CoqIdeChecker]:
    with CoqIdeChecker(workers=1) as checker:
        yield checker


@pytest.mark.parametrize("backend", ["coqc", "ide"])
def test_every_cheat_is_rejected_and_writes_nothing(
    backend: str, tmp_path: Path, ide: CoqIdeChecker, monkeypatch: pytest.MonkeyPatch
) -> None:
    checker: ProofChecker = CoqcChecker() if backend == "coqc" else ide
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    target = tmp_path / "out" / "cheat_output"
    target.parent.mkdir()
    starts_before = getattr(checker, "starts", 0)
    before = (
        sorted(os.listdir(tmp_path)),
        sorted(os.listdir(target.parent)),
        sorted(os.listdir(workdir)),
    )
    for kind, proof, word in cheats(target):
        for problem in (PROBLEM, FALSE_PROBLEM):
            res = checker.check(problem, proof, timeout_s=5)
            assert res.status == "rejected" and not res.passed, (kind, res)
            assert res.rejection is not None and word in res.rejection, (kind, res.rejection)
    after = (
        sorted(os.listdir(tmp_path)),
        sorted(os.listdir(target.parent)),
        sorted(os.listdir(workdir)),
    )
    assert after == before
    assert getattr(checker, "starts", 0) == starts_before  # no Coq process was needed


def test_comments_and_strings_do_not_trigger_the_filter(ide: CoqIdeChecker) -> None:
    proof = (
        '(* admit. Admitted. Axiom x : False. *) intros n. idtac "Admitted". '
        "induction n; simpl; [reflexivity | rewrite IHn; reflexivity]. Qed."
    )
    assert ide.check(PROBLEM, proof).passed


# ---- controls: the filtered text really is dangerous --------------------------------------
def run_raw_coqc(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "Raw.v").write_text(text, encoding="utf-8")
    return subprocess.run(
        ["coqc", "-q", "Raw.v"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )


def test_control_admitted_fools_raw_coqc(tmp_path: Path) -> None:
    res = run_raw_coqc(tmp_path, f"{FALSE_PROBLEM.statement}\nProof. Admitted.\n")
    assert res.returncode == 0  # coqc alone accepts an unproved (false!) theorem
    assert CoqcChecker().check(FALSE_PROBLEM, "Proof. Admitted.").status == "rejected"


def test_control_redirect_writes_a_file_in_raw_coqc(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "leak"
    target.parent.mkdir()
    res = run_raw_coqc(tmp_path, f'Redirect "{target}" Print nat.\n')
    assert res.returncode == 0
    assert (target.parent / "leak.out").exists()  # the write the filter prevents
