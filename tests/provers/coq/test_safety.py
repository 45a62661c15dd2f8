"""The lexical safety filter (no Coq needed): what it refuses, what it lets through."""

from __future__ import annotations

import pytest

from verirl.provers.coq.safety import (
    check_prelude,
    check_proof,
    check_statement,
    module_allowed,
)

# (proof text, a word the reason must contain)
CHEATS = [
    ("Proof. intros n. admit. Qed.", "admit"),
    ("Proof. intros n. Admitted.", "Admitted"),
    ("Proof. give_up. Qed.", "give_up"),
    ("Proof. Abort.", "Abort"),
    ("all: admit.", "admit"),
    ("try (exact ltac:(admit)).", "admit"),
    ("Axiom cheat : forall P : Prop, P. apply cheat. Qed.", "Axiom"),
    ("Parameter p : nat. Qed.", "Parameter"),
    ("Hypothesis h : False. Qed.", "Hypothesis"),
    ("Variable v : False. Qed.", "Variable"),
    ("Conjecture c : False. Qed.", "Conjecture"),
    ('Redirect "/tmp/verirl_redirect" Print nat. Qed.', "Redirect"),
    ('Extraction "/tmp/verirl_extract.ml" nat. Qed.', "Extraction"),
    ("Recursive Extraction nat. Qed.", "Extraction"),
    ('Load "/etc/passwd". Qed.', "Load"),
    ('Cd "/tmp". Qed.', "Cd"),
    ('Declare ML Module "evil". Qed.', "Declare ML Module"),
    ("Require Import Coq.Logic.Classical. Qed.", "Require"),
    ("Import Nat. Qed.", "Import"),
    ("Drop. Qed.", "Drop"),
    ("Time reflexivity. Qed.", "Time"),
    ("Timeout 1 reflexivity. Qed.", "Timeout"),
    ("Fail reflexivity. Qed.", "Fail"),
    ("Unset Guard Checking. Qed.", "Unset"),
    ("Set Printing All. Qed.", "Set"),
    ("Qed. Theorem other : True. Proof. exact I. Qed.", "Qed must be the last"),
    ("exact I. Qed. Lemma x : True.", "Qed must be the last"),
    ("Lemma helper : True. exact I. Qed.", "Lemma"),
    ("Definition d := 1. reflexivity. Qed.", "Definition"),
    ("Ltac t := idtac. t. Qed.", "Ltac"),
    ("#[local] Hint Resolve I. auto. Qed.", "attribute"),
    ("Proof (conj I I).", "Proof followed by a term"),
    ("intros. Proof. auto. Qed.", "Proof may only open"),
    ("native_compute. reflexivity. Qed.", "native_compute"),
    ("par: auto. Qed.", "par:"),
    ("Undo. Qed.", "Undo"),
    ("Restart. Qed.", "Restart"),
    ("intros. Qed foo.", "no argument"),
    ("intros. exact I", "terminating"),
    ("intros. (* open comment", "unterminated comment"),
    ('idtac "open string', "unterminated string"),
    ("intros.\x00 exact I.", "control character"),
    ("1 + 1 = 2.", "does not start with a tactic"),
]


@pytest.mark.parametrize(("proof", "word"), CHEATS)
def test_cheats_are_rejected_with_a_reason(proof: str, word: str) -> None:
    rej = check_proof(proof)
    assert rej is not None, proof
    assert word in rej.reason, (proof, rej.reason)


ALLOWED = [
    "Proof. intros n. induction n as [| n IH]. - reflexivity. - simpl. rewrite IH. auto. Qed.",
    "(* admit. Admitted. Axiom x : False. *) intros. exact I.",
    'idtac "Admitted admit Redirect". fail 0 "no Qed here". Qed.',
    "Proof with auto. split... Qed.",
    "Proof using. exact I. Defined.",
    "split; [exact I | ]. 2: { exact I. } all: try easy. Unshelve. Qed.",
    "time (reflexivity). timeout 2 (auto). Qed.",
    "apply Nat.add_comm.",
    "(reflexivity).",
    "my_admit_free_tactic. admitted_not_a_word_here.",
    "",
]


@pytest.mark.parametrize("proof", ALLOWED)
def test_proofs_made_of_tactics_pass(proof: str) -> None:
    assert check_proof(proof) is None


def test_rejection_names_the_offending_sentence() -> None:
    rej = check_proof("intros. simpl. admit. Qed.")
    assert rej is not None and rej.sentence_index == 2


def test_overlong_proofs_are_refused() -> None:
    assert check_proof("idtac. " * 600) is not None
    assert check_proof("(" * 30_000) is not None


def test_prelude_rules() -> None:
    ok = (
        "Require Import Arith Lia List.\nFrom Coq Require Import Bool.\nImport ListNotations.\n"
        "Declare Scope my_scope.\nDefinition x := 1.\nAxiom ex : True."
    )
    assert check_prelude(ok) is None
    for bad, word in [
        ('Load "x".', "Load"),
        ('Redirect "f" Print nat.', "Redirect"),
        ("Require Import Evil.Module.", "allowlist"),
        ("From mathcomp Require Import ssreflect.", "allowlist"),
        ('Declare ML Module "foo".', "ML"),
        ('Add LoadPath "/tmp" as Foo.', "LoadPath"),
        ('Local Redirect "f" Print nat.', "Redirect"),
        ('Extraction "f.ml" nat.', "Extraction"),
    ]:
        rej = check_prelude(bad)
        assert rej is not None and word in rej.reason, (bad, rej)
    assert check_prelude("From mathcomp Require Import ssreflect.", ["mathcomp"]) is None


def test_module_allowlist() -> None:
    assert module_allowed("Coq.Arith.PeanoNat")
    assert module_allowed("Lia") and module_allowed("Arith")
    assert not module_allowed("Top.Evil") and not module_allowed("Hammer")


def test_statement_rules() -> None:
    assert check_statement("Theorem t : forall n : nat, n = n.") is None
    assert check_statement("Lemma l (n : nat) : n + 0 = n.") is None
    assert check_statement("Goal True.") is None
    assert check_statement("Theorem t : True. Proof.") is not None
    assert check_statement("Axiom a : False.") is not None
    assert check_statement("Theorem t : True") is not None
