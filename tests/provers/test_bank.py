"""The shared theorem bank: both systems' bundled theorems through one implementation."""

from __future__ import annotations

import pytest

from verirl.provers.bank import TheoremBank, bundled_bank
from verirl.provers.coq.theorems import CoqTheorem
from verirl.provers.lean.theorems import LeanTheorem


@pytest.mark.parametrize(("system", "cls"), [("coq", CoqTheorem), ("lean", LeanTheorem)])
def test_bundled_banks_are_graded_with_proofs(system: str, cls: type) -> None:
    bank = bundled_bank(system)
    assert bank.theorems and all(isinstance(t, cls) for t in bank.theorems)
    groups = bank.by_grade()
    assert list(groups) == sorted(groups)
    assert sum(len(g) for g in groups.values()) == len(bank.theorems)
    first = bank.theorems[0]
    assert bank.get(first.name) is first
    assert first.problem().system == system
    with pytest.raises(KeyError, match="no theorem 'nope'"):
        bank.get("nope")


def test_bank_refuses_stubs_and_duplicates() -> None:
    t = CoqTheorem(
        name="t", statement="Theorem t : True.", prelude="", proof="Proof. Qed.", grade=1
    )
    stub = CoqTheorem(name="s", statement="Theorem s : True.", prelude="", proof=None, grade=1)
    with pytest.raises(ValueError, match="lacks a grade or a reference proof"):
        TheoremBank([t, stub], "test bank")
    with pytest.raises(ValueError, match="unique"):
        TheoremBank([t, t], "test bank")


def test_lean4_is_a_deprecated_alias_of_lean() -> None:
    assert bundled_bank("lean") is bundled_bank("lean")
    with pytest.warns(DeprecationWarning, match="'lean4' is deprecated"):
        bank = bundled_bank("lean4")
    assert bank.theorems == bundled_bank("lean").theorems
