"""Hostile proof texts against both Coq backends: they return the same verdict and never raise
(lone surrogates, characters XML forbids), and a passing proof is accepted only when
``Print Assumptions`` shows it rests on allowed axioms."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.provers.coq.marks import needs_coq
from verirl.provers.base import FormalProblem
from verirl.provers.coq.attempt import (
    prelude_assumptions,
    statement_name,
    untrusted_assumptions,
)
from verirl.provers.coq.coqc import CoqcChecker
from verirl.provers.coq.idetop import CoqIdeChecker, XmlReplies, xml_safe
from verirl.provers.coq.safety import check_proof

ONE = FormalProblem("coq", "one", "Theorem one : 1 = 1.")
CLASSIC = FormalProblem(
    "coq", "em", "Theorem em (P : Prop) : P \\/ ~ P.", "Require Import Classical."
)


# ---- pure parts (no Coq needed) ------------------------------------------------------------
def test_surrogates_are_rejected_by_the_filter() -> None:
    rej = check_proof("reflexivity. (* \ud800 *)")
    assert rej is not None and "surrogate" in rej.reason and "U+D800" in rej.reason
    assert check_proof('idtac "\uffff". reflexivity.') is None


def test_xml_safe_replaces_only_forbidden_characters() -> None:
    assert xml_safe("a\uffffb\ufffe\x01") == "a\ufffdb\ufffd\ufffd"
    assert xml_safe("&#xFFFF; &#65535; &#x41; &#10;") == "&#65533; &#65533; &#x41; &#10;"
    assert xml_safe("ok \U0010ffff \t\n") == "ok \U0010ffff \t\n"
    replies = XmlReplies()
    replies.feed('<value val="good"><string>\uffff</string></value>'.encode())
    assert replies.elements[0].findtext("string") == "\ufffd"


def test_statement_name() -> None:
    assert statement_name("Theorem t (n : nat) : n = n.") == "t"
    assert statement_name("#[local] Lemma foo' : True.") == "foo'"
    assert statement_name("Goal True.") == "Unnamed_thm"
    assert statement_name("Local Definition d : nat.") == "d"


def test_untrusted_assumptions_parsing() -> None:
    assert untrusted_assumptions("Closed under the global context\n", ()) == []
    out = "Axioms:\nclassic : forall P : Prop, P \\/ ~ P\nfoo : nat\n"
    assert untrusted_assumptions(out, ()) == ["classic", "foo"]
    assert untrusted_assumptions(out, ("Classical_Prop.classic", "foo")) == ["classic"]
    assert untrusted_assumptions(out, ("classic", "foo")) == []
    wrapped = "Axioms:\nlong : forall x : nat,\n       x = x\n"
    assert untrusted_assumptions(wrapped, ()) == ["long"]
    assert untrusted_assumptions("Section Variables:\nk : nat\n", ()) == []
    odd = "Constants/Inductives relying on type-in-type:\nbad\n"
    assert untrusted_assumptions(odd, ()) == ["Constants/Inductives relying on type-in-type"]
    assert untrusted_assumptions("garbage", ()) is None
    # a long type puts the name alone on its line (Coq 8.16, `lra` on R): both axioms count
    reals = (
        "Axioms:\nClassicalDedekindReals.sig_forall_dec\n  : forall P : nat -> Prop,\n"
        "    {n : nat | ~ P n} + {forall n : nat, P n}\n"
        "FunctionalExtensionality.functional_extensionality_dep\n"
        "  : forall (A : Type) (B : A -> Type) (f g : forall x : A, B x),\n"
        "    (forall x : A, f x = g x) -> f = g\n"
    )
    assert untrusted_assumptions(reals, ()) == [
        "ClassicalDedekindReals.sig_forall_dec",
        "FunctionalExtensionality.functional_extensionality_dep",
    ]
    allowed = ("sig_forall_dec", "functional_extensionality_dep")
    assert untrusted_assumptions(reals, allowed) == []


def test_prelude_assumptions() -> None:
    prelude = (
        "Axiom ax1 : False.\nParameter p q : nat.\nParameters (r : nat) (s : bool).\n"
        "Lemma stub : 1 = 1.\nAdmitted.\nLemma done : 2 = 2.\nProof. reflexivity. Qed.\n"
    )
    names = prelude_assumptions(prelude)
    assert {"ax1", "p", "q", "r", "s", "stub"} <= names
    assert "done" not in names and "False" not in names


# ---- both backends, live ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def backends() -> Iterator[tuple[CoqcChecker, CoqIdeChecker]]:
    coqc, ide = CoqcChecker(), CoqIdeChecker(workers=1)
    yield coqc, ide
    ide.close()


def _both(backends, problem, proof, **kw):  # type: ignore[no-untyped-def]
    coqc, ide = backends
    a, b = coqc.check(problem, proof, **kw), ide.check(problem, proof, **kw)
    assert (a.status, a.first_error_index) == (b.status, b.first_error_index), (a, b)
    return a, b


@pytest.mark.coq
@needs_coq
@pytest.mark.parametrize(
    ("proof", "status"),
    [
        ("reflexivity. (* \ud800 *)", "rejected"),
        ("reflexivity. (* \udfff *)", "rejected"),
        ("reflexivity. (* \x00 *)", "rejected"),
        ('idtac "\uffff". reflexivity.', "pass"),  # used to crash coqidetop's reply
        ('idtac "\ufffe". reflexivity.', "pass"),
        ('idtac "\U0010ffff \u2028 \u202e". reflexivity.', "pass"),
        ('idtac "\uffff". exact I.', "error"),
    ],
)
def test_backends_agree_on_odd_characters(backends, proof: str, status: str) -> None:  # type: ignore[no-untyped-def]
    starts = backends[1].starts
    a, _ = _both(backends, ONE, proof, timeout_s=20)
    assert a.status == status
    if status != "rejected":
        assert backends[1].starts <= max(starts, 1)  # no crash, no worker restart


@pytest.mark.coq
@needs_coq
def test_print_assumptions_fails_a_proof_by_an_axiom(backends) -> None:  # type: ignore[no-untyped-def]
    a, b = _both(backends, CLASSIC, "apply classic.", timeout_s=20)
    assert a.status == "rejected" and "classic" in (a.rejection or "")
    assert "classic" in (b.rejection or "")
    # idtac cannot fake the closed-context answer
    a, _ = _both(backends, CLASSIC, 'idtac "Closed under the global context". apply classic.')
    assert a.status == "rejected"


@pytest.mark.coq
@needs_coq
def test_allowed_axioms_and_prelude_axioms_pass() -> None:
    for cls in (CoqcChecker, CoqIdeChecker):
        checker = cls(allowed_axioms=("classic",))
        try:
            assert checker.check(CLASSIC, "apply classic.", timeout_s=20).passed
        finally:
            checker.close()
    premise = FormalProblem(
        "coq", "z", "Theorem z : p = 0.", "Parameter p : nat.\nAxiom hp : p = 0."
    )
    for cls in (CoqcChecker, CoqIdeChecker):
        checker = cls()
        try:
            assert checker.check(premise, "exact hp.", timeout_s=20).passed
        finally:
            checker.close()


@pytest.mark.coq
@needs_coq
def test_lia_needs_no_axiom(backends) -> None:  # type: ignore[no-untyped-def]
    problem = FormalProblem("coq", "l", "Lemma l (n : nat) : n + 0 = n.", "Require Import Lia.")
    a, b = _both(backends, problem, "lia.", timeout_s=20)
    assert a.passed and b.passed
