"""The coqidetop pool agrees with one-shot coqc on real proofs mined from the Coq stdlib sources
Debian installs, and on mutations of them (a tactic deleted, two swapped, one replaced)."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.provers.coq.marks import needs_coq
from verirl.provers.base import FormalProblem
from verirl.provers.coq.attempt import CoqProblemError, prepare_attempt
from verirl.provers.coq.coqc import CoqcChecker
from verirl.provers.coq.idetop import CoqIdeChecker
from verirl.provers.coq.safety import check_proof
from verirl.provers.coq.sentences import Sentence, scan

STDLIB = Path("/usr/lib/ocaml/coq/theories")
pytestmark = [
    pytest.mark.coq,
    pytest.mark.slow,
    needs_coq,
    pytest.mark.skipif(not STDLIB.is_dir(), reason=f"Coq stdlib sources not found at {STDLIB}"),
]

# Files whose top-level lemmas restate cleanly after `Require Import <the file's module>`.
FILES = [
    "Bool/Bool.v",
    "Arith/Compare_dec.v",
    "Arith/EqNat.v",
    "Logic/Decidable.v",
    "Lists/List.v",
    "Arith/Factorial.v",
    "ZArith/Zbool.v",
    "NArith/Ndist.v",
    "Bool/Zerob.v",
    "Arith/Wf_nat.v",
    "ZArith/Zeven.v",
]
PER_FILE = 4
WRONG_TACTICS = ["exact I.", "reflexivity.", "discriminate.", "apply le_n.", "assumption."]


@dataclass(frozen=True)
class Mined:
    source: str
    problem: FormalProblem
    proof: str


def _words(s: Sentence) -> list[str]:
    return re.findall(r"[A-Za-z_][A-Za-z0-9_']*", s.code)


def mine_file(rel: str, limit: int) -> list[Mined]:
    """Top-level ``Lemma``/``Theorem`` blocks of 2-14 tactics ending in ``Qed``, outside any
    Section/Module, with the file's Require/Import/Open/Implicit lines as the prelude plus
    ``Require Import`` of the file's own module (for the lemmas before it)."""
    text = (STDLIB / rel).read_text(encoding="utf-8")
    module = "Coq." + rel[:-2].replace("/", ".")
    sentences = scan(text).sentences
    requires: list[str] = []
    context: list[str] = []
    depth, k, out = 0, 0, []
    while k < len(sentences) and len(out) < limit:
        s = sentences[k]
        words = [] if s.structural else _words(s)
        head = words[0] if words else ""
        if head == "Section" or (head == "Module" and ":=" not in s.code):
            depth += 1
        elif head == "End":
            depth -= 1
        elif depth == 0 and head in ("Require", "From"):
            requires.append(" ".join(s.text.split()))
        elif depth == 0 and (head in ("Import", "Implicit") or "Scope" in words[:3]):
            context.append(" ".join(s.text.split()))
        if depth == 0 and head in ("Lemma", "Theorem") and len(words) > 1:
            j = k + 1
            while j < len(sentences) and not (
                _words(sentences[j])[:1]
                and _words(sentences[j])[0] in ("Qed", "Defined", "Admitted", "Abort")
            ):
                j += 1
            if j < len(sentences) and _words(sentences[j])[0] == "Qed" and 4 <= j - k <= 16:
                proof = text[sentences[k + 1].start : sentences[j].end]
                if _words(sentences[k + 1])[:1] == ["Proof"] and check_proof(proof) is None:
                    prelude = "\n".join([*requires, f"Require Import {module}.", *context])
                    out.append(Mined(rel, FormalProblem("coq", words[1], s.text, prelude), proof))
            k = j + 1
            continue
        k += 1
    return out


def mutations(proof: str, rng: random.Random) -> list[tuple[str, str]]:
    """(kind, mutated proof): one deletion, one swap of adjacent tactics, one replacement."""
    att = prepare_attempt(proof)
    tac = [
        s
        for k, s in enumerate(att.sentences)
        if not s.structural and att.sentence_tactic[k] is not None
    ]
    out = []
    if tac:
        s = rng.choice(tac)
        out.append(("delete", proof[: s.start] + proof[s.end :]))
        s = rng.choice(tac)
        out.append(("replace", proof[: s.start] + rng.choice(WRONG_TACTICS) + proof[s.end :]))
    if len(tac) >= 2:
        i = rng.randrange(len(tac) - 1)
        a, b = tac[i], tac[i + 1]
        out.append(
            ("swap", proof[: a.start] + b.text + proof[a.end : b.start] + a.text + proof[b.end :])
        )
    return out


@pytest.fixture(scope="module")
def corpus() -> list[Mined]:
    mined = [m for rel in FILES if (STDLIB / rel).exists() for m in mine_file(rel, PER_FILE)]
    if len(mined) < 20:
        pytest.skip(f"only {len(mined)} stdlib proofs could be mined")
    return mined


@pytest.fixture(scope="module")
def checkers() -> Iterator[tuple[CoqcChecker, CoqIdeChecker]]:
    with CoqIdeChecker(workers=2) as ide:
        yield CoqcChecker(workers=2), ide


def test_idetop_agrees_with_coqc_on_stdlib_proofs_and_mutations(
    corpus: list[Mined], checkers: tuple[CoqcChecker, CoqIdeChecker]
) -> None:
    coqc, ide = checkers
    usable: list[Mined] = []
    for m in corpus:  # keep the lemmas whose restated statement loads in this context
        try:
            ide.check(m.problem, "Proof. Qed.")
        except CoqProblemError:
            continue
        usable.append(m)
    assert len(usable) >= 25, f"only {len(usable)} of {len(corpus)} mined statements load"

    rng = random.Random(20261130)
    items: list[tuple[str, FormalProblem, str]] = []
    for m in usable:
        items.append(("original", m.problem, m.proof))
        items.extend((kind, m.problem, text) for kind, text in mutations(m.proof, rng))
    pairs = [(p, text) for _, p, text in items]
    by_coqc = coqc.check_batch(pairs, timeout_s=20)
    by_ide = ide.check_batch(pairs, timeout_s=20)

    disagreements = []
    for (kind, problem, text), a, b in zip(items, by_coqc, by_ide, strict=True):
        if (a.status, a.first_error_index) != (b.status, b.first_error_index):
            disagreements.append(
                (
                    kind,
                    problem.name,
                    text,
                    a.status,
                    a.first_error_index,
                    b.status,
                    b.first_error_index,
                    a.messages[:1],
                    b.messages[:1],
                )
            )
        assert [(t.start, t.end) for t in a.tactics] == [(t.start, t.end) for t in b.tactics]
    originals = [a for (kind, _, _), a in zip(items, by_coqc, strict=True) if kind == "original"]
    mutated = [a for (kind, _, _), a in zip(items, by_coqc, strict=True) if kind != "original"]
    passed_originals = sum(a.passed for a in originals)
    failing_mutations = sum(not a.passed for a in mutated)
    statuses = sorted({a.status for a in by_coqc})
    print(
        f"\nagreement: {len(items) - len(disagreements)}/{len(items)} "
        f"({len(originals)} stdlib proofs, {passed_originals} pass; {len(mutated)} mutations, "
        f"{failing_mutations} fail; statuses {statuses}); mean time per proof: coqc "
        f"{sum(a.elapsed_s for a in by_coqc) / len(items):.3f} s, coqidetop "
        f"{sum(b.elapsed_s for b in by_ide) / len(items):.4f} s"
    )
    assert not disagreements, disagreements[:3]
    assert passed_originals >= 0.9 * len(originals)
    assert failing_mutations >= len(mutated) // 2  # the mutations do exercise failures
    assert any(a.first_error_index not in (None, 0) for a in mutated)
