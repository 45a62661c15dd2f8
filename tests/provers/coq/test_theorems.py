"""The bundled graded theorems (all reference proofs check) and the ``.v`` file loader."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest

from tests.provers.coq.marks import needs_coq
from verirl.provers.bank import bundled_bank
from verirl.provers.coq.attempt import prepare_attempt
from verirl.provers.coq.coqc import CoqcChecker
from verirl.provers.coq.idetop import CoqIdeChecker
from verirl.provers.coq.theorems import load_coq_file, parse_theorems


def test_bundle_has_graded_theorems_with_reference_proofs() -> None:
    theorems = bundled_bank("coq").theorems
    assert len(theorems) >= 80
    groups = bundled_bank("coq").by_grade()
    assert list(groups) == list(range(len(groups))) and len(groups) >= 4  # no gaps
    for t in theorems:
        assert t.proof is not None and t.grade is not None
        att = prepare_attempt(t.proof)
        assert att.rejection is None, (t.name, att.rejection)  # a model could write it
        assert t.statement.startswith(("Theorem", "Lemma", "Example"))
    # grade 0 means one tactic; higher grades need more on average
    assert all(len(prepare_attempt(t.proof or "").tactics) == 1 for t in groups[0])
    mean = [
        sum(len(prepare_attempt(t.proof or "").tactics) for t in g) / len(g)
        for g in groups.values()
    ]
    assert mean == sorted(mean) and mean[-1] >= 4 * mean[0]
    assert bundled_bank("coq").get("add_comm_induction").grade == 4
    with pytest.raises(KeyError, match=r"no theorem .* in the bundled coq theorems"):
        bundled_bank("coq").get("does_not_exist")


@pytest.mark.coq
@needs_coq
def test_bundled_file_compiles_with_coqc(tmp_path: Path) -> None:
    text = resources.files("verirl.provers").joinpath("data/coq_theorems.v").read_text("utf-8")
    (tmp_path / "Bundle.v").write_text(text, encoding="utf-8")
    res = subprocess.run(
        ["coqc", "-q", "Bundle.v"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, res.stderr


@pytest.fixture(scope="module")
def ide() -> Iterator[CoqIdeChecker]:
    with CoqIdeChecker(workers=2) as checker:
        yield checker


@pytest.mark.coq
@needs_coq
def test_every_reference_proof_checks_on_its_own(ide: CoqIdeChecker) -> None:
    theorems = bundled_bank("coq").theorems
    results = ide.check_batch([(t.problem(), t.proof or "") for t in theorems])
    failed = [
        (t.name, r.status, r.messages[:1])
        for t, r in zip(theorems, results, strict=True)
        if not r.passed
    ]
    assert not failed


@pytest.mark.coq
@needs_coq
def test_a_wrong_proof_of_a_bundled_theorem_fails(ide: CoqIdeChecker) -> None:
    t = bundled_bank("coq").get("add_comm_induction")
    res = ide.check(t.problem(), "Proof. intros n m. reflexivity. Qed.")
    assert res.status == "error" and res.first_error_index == 1


USER_FILE = """(* a user's file *)
Require Import Arith Lia.

Definition triple (n : nat) := 3 * n.

(* grade: 1 *)
Lemma triple_0 : triple 0 = 0.
Proof. reflexivity. Qed.

Lemma triple_add : forall a b, triple (a + b) = triple a + triple b.
Proof.
  intros a b. unfold triple. lia.
Admitted.

Section S.
Variable k : nat.
Theorem uses_k : k + 0 = k.
Admitted.
End S.

Theorem uses_earlier : triple (1 + 1) = triple 1 + triple 1.
Proof.
Admitted.
"""


def test_loader_reads_stubs_and_reference_proofs(tmp_path: Path) -> None:
    path = tmp_path / "user.v"
    path.write_text(USER_FILE, encoding="utf-8")
    theorems = load_coq_file(path)
    assert [t.name for t in theorems] == ["triple_0", "triple_add", "uses_k", "uses_earlier"]
    assert theorems[0].proof == "Proof. reflexivity. Qed." and theorems[0].grade == 1
    assert [t.proof for t in theorems[1:]] == [None, None, None]
    assert theorems[1].grade is None
    # "preceding": everything before the theorem, so later lemmas can use earlier ones
    assert "Definition triple" in theorems[3].prelude and "triple_add" in theorems[3].prelude
    assert theorems[2].prelude.rstrip().endswith("Variable k : nat.")
    stubs = load_coq_file(path, only_stubs=True)
    assert [t.name for t in stubs] == ["triple_add", "uses_k", "uses_earlier"]
    header = parse_theorems(USER_FILE, prelude_mode="header")
    assert all(t.prelude.startswith("Require Import Arith Lia.") for t in header)
    assert all("triple_0" not in t.prelude for t in header)


@pytest.mark.coq
@needs_coq
def test_loaded_stubs_can_be_proved(tmp_path: Path) -> None:
    path = tmp_path / "user.v"
    path.write_text(USER_FILE, encoding="utf-8")
    stubs = {t.name: t for t in load_coq_file(path, only_stubs=True)}
    checker = CoqcChecker()
    assert checker.check(stubs["triple_add"].problem(), "intros a b. unfold triple. lia.").passed
    assert checker.check(stubs["uses_k"].problem(), "apply Nat.add_0_r.").passed
    res = checker.check(stubs["uses_earlier"].problem(), "apply triple_add. Qed.")
    assert res.passed  # the earlier lemma is in the prelude
