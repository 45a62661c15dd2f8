"""The theorem bank both proof systems share: a graded set of theorems to prove, each with a
reference proof, read from a file shipped with verirl (``provers/data/coq_theorems.v``,
``provers/data/lean_theorems.lean``) or from a user's file by the system's loader
(:func:`verirl.provers.coq.theorems.load_coq_file`,
:func:`verirl.provers.lean.theorems.load_lean_file`)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Generic, TypeVar

from verirl.provers.base import Theorem, proof_system

T = TypeVar("T", bound=Theorem)


class TheoremBank(Generic[T]):
    """A graded set of theorems: every one has a grade and a reference proof, names unique."""

    def __init__(self, theorems: Sequence[T], what: str) -> None:
        self.what = what
        self.theorems: tuple[T, ...] = tuple(theorems)
        for t in self.theorems:
            if t.grade is None or t.proof is None:
                raise ValueError(f"{what}: theorem {t.name} lacks a grade or a reference proof")
        names = [t.name for t in self.theorems]
        if len(set(names)) != len(names):
            raise ValueError(f"{what}: theorem names must be unique")

    def by_grade(self) -> dict[int, tuple[T, ...]]:
        """The theorems grouped by grade, grades in increasing order."""
        groups: dict[int, list[T]] = {}
        for t in self.theorems:
            assert t.grade is not None
            groups.setdefault(t.grade, []).append(t)
        return {g: tuple(groups[g]) for g in sorted(groups)}

    def get(self, name: str) -> T:
        """The theorem called ``name`` (KeyError listing a few names otherwise)."""
        for t in self.theorems:
            if t.name == name:
                return t
        known = ", ".join(t.name for t in self.theorems[:5])
        raise KeyError(f"no theorem {name!r} in the {self.what} (e.g. {known}, ...)")


@functools.cache
def bundled_bank(system: str) -> TheoremBank[Theorem]:
    """The graded theorems shipped with verirl for ``system`` (``"coq"`` or ``"lean"``)."""
    from verirl.provers.coq.theorems import parse_theorems
    from verirl.provers.lean.theorems import parse_lean_theorems

    system = proof_system(system)
    bundled: dict[str, tuple[str, Callable[..., Sequence[Theorem]]]] = {
        "coq": ("data/coq_theorems.v", parse_theorems),
        "lean": ("data/lean_theorems.lean", parse_lean_theorems),
    }
    if system not in bundled:
        raise KeyError(f"no bundled theorems for {system!r}; known: {sorted(bundled)}")
    path, parse = bundled[system]
    text = resources.files("verirl.provers").joinpath(path).read_text("utf-8")
    name = path.rsplit("/", 1)[-1]
    theorems = parse(text, prelude_mode="header", source=f"verirl:{name}")
    return TheoremBank(theorems, f"bundled {system} theorems")
