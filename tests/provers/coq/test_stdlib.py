"""The Coq standard library on the Tactician/CoqHammer protocol: mining, the split, the library's
axioms, the measured manifest and the self-proof rule (live Coq)."""

from __future__ import annotations

import hashlib

import pytest

from tests.provers.coq.marks import needs_coq
from verirl.errors import UserInputError
from verirl.provers.coq.install import coq_version, stdlib_sources
from verirl.provers.coq.stdlib import (
    HELDOUT_SHARE,
    file_lemmas,
    file_sha256,
    file_split,
    formal_problem,
    library_axioms,
    library_files,
    mine_text,
    prompt_context,
)

needs_stdlib = pytest.mark.skipif(
    stdlib_sources() is None, reason="the Coq stdlib sources are not installed (apt-get coq)"
)

TEXT = """Require Import Arith.
Section S.
Variable A : Type.
Lemma one : forall l : list A, l = l.
Proof. reflexivity. Qed.
Lemma two : forall n : nat, n + 0 = n.
Proof.
  intros n. induction n.
  - reflexivity.
  - simpl. rewrite IHn. reflexivity.
Qed.
Lemma three : True.
Proof. Opaque plus. exact I. Qed.
Lemma four : True.
Admitted.
End S.
Declare ML Module "foo_plugin".
Lemma five : True.
Proof. exact I. Qed.
"""


def test_mining_finds_lemmas_their_proof_length_and_why_some_are_left_out() -> None:
    lemmas = mine_text(TEXT, "Demo/Demo.v")
    assert [(m.index, m.name) for m in lemmas] == [
        (0, "one"),
        (1, "two"),
        (2, "three"),
        (3, "four"),
        (4, "five"),
    ]
    one, two, three, four, five = lemmas
    assert (one.tactics, one.skip) == (1, None)
    assert (two.tactics, two.skip) == (6, None)  # intros, induction, - refl, - simpl, rewrite, refl
    assert TEXT[two.start :].startswith("Lemma two") and two.proof.endswith("Qed.")
    assert "not a tactic script" in (three.skip or "") and "Opaque" in (three.skip or "")
    assert "unproved (Admitted)" in (four.skip or "")
    assert "Declare ML Module" in (five.skip or "")  # its prefix loads a plugin
    assert two.module == "Coq.Demo.Demo" and two.id == "Demo/Demo.v:two"
    assert all("Init" in (m.skip or "") for m in mine_text(TEXT, "Init/Demo.v"))


def test_the_split_is_the_documented_hash_of_the_file() -> None:
    for file in ("Lists/List.v", "Reals/Rtrigo1.v", "Arith/PeanoNat.v"):
        digest = hashlib.sha256(f"verirl/coq-stdlib/0/{file}".encode()).digest()
        held = int.from_bytes(digest[:8], "big") / 2**64 < HELDOUT_SHARE
        assert file_split(file) == ("heldout" if held else "train")
    names = [f"Dir{i}/File{i}.v" for i in range(2000)]
    share = sum(file_split(n) == "heldout" for n in names) / len(names)
    assert 0.08 < share < 0.12
    assert [file_split(n, seed=1) for n in names] != [file_split(n) for n in names]


@needs_stdlib
def test_the_library_s_axioms_are_its_declared_ones_never_admit() -> None:
    axioms = library_axioms()
    assert {"classic", "sig_forall_dec", "functional_extensionality_dep"} <= set(axioms)
    assert "proof_admitted" not in axioms  # Compat/AdmitAxiom.v: False, the `admit` of old


@needs_stdlib
def test_the_prompt_shows_imports_and_the_open_section() -> None:
    lemma = next(m for m in file_lemmas("Lists/List.v") if m.name == "app_nil_r")
    shown = prompt_context(lemma)
    assert "Import ListNotations." in shown and "Variable A : Type." in shown
    assert "app_nil_r" not in shown


@pytest.mark.coq
@needs_coq
@needs_stdlib
def test_a_proof_that_names_its_own_lemma_or_a_later_one_fails() -> None:
    from verirl.provers.coq.idetop import CoqIdeChecker

    lemmas = {m.name: m for m in file_lemmas("Bool/Bool.v")}
    target, later = lemmas["negb_involutive"], lemmas["negb_involutive_reverse"]
    assert later.index > target.index
    problem = formal_problem(target)
    assert problem.prelude == (stdlib_sources() / "Bool/Bool.v").read_text()[: target.start]
    with CoqIdeChecker(workers=1) as checker:
        assert checker.check(problem, target.proof).passed  # the library's own proof
        for cheat in (
            "exact negb_involutive.",
            "exact Bool.negb_involutive.",
            "exact Coq.Bool.Bool.negb_involutive.",
        ):
            res = checker.check(problem, cheat)
            assert res.status == "error" and "not found" in res.messages[0].text, cheat
        res = checker.check(problem, "intros b; symmetry; apply negb_involutive_reverse.")
        assert res.status == "error" and "not found" in res.messages[0].text
        # the later lemma may use the earlier one: it precedes
        assert checker.check(
            formal_problem(later), "intros b; symmetry; apply negb_involutive."
        ).passed


@pytest.mark.coq
@needs_coq
@needs_stdlib
def test_measuring_a_file_records_its_exclusions_and_context_assumptions() -> None:
    from verirl.provers.coq.idetop import CoqIdeChecker
    from verirl.provers.coq.stdlib_manifest import measure_file

    with CoqIdeChecker(workers=1) as checker:
        entry = measure_file(checker, "Numbers/Natural/Abstract/NAdd.v")
    assert entry.sha256 == file_sha256("Numbers/Natural/Abstract/NAdd.v")
    assert entry.excluded == {}  # every library proof passes in its functor's context
    assert {"add_0_l", "add_succ_l"} <= set(entry.assumptions)  # the functor's parameters


@needs_stdlib
def test_the_bundled_manifest_matches_the_installed_library() -> None:
    from verirl.provers.coq.stdlib_manifest import load_manifest

    if coq_version() != "8.16.1":
        pytest.skip(f"the bundled manifest is Coq 8.16.1's; this is {coq_version()}")
    manifest = load_manifest()
    manifest.check_sources()
    kept = [m for f in manifest.files for m in file_lemmas(f) if m.skip is None]
    excluded = [m for m in kept if manifest.excluded(m) is not None]
    assert len(kept) > 10_000 and len(excluded) < len(kept) // 10
    assert set(manifest.files) <= set(library_files())
    stranger = mine_text(TEXT, "Demo/Demo.v")[0]
    with pytest.raises(UserInputError, match="not in the Coq stdlib manifest"):
        manifest.excluded(stranger)
