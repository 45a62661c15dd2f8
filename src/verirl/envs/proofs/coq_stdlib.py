"""Prove a lemma of the Coq standard library with only what precedes it (on demand).

The lemmas, their context and the Tactician/CoqHammer protocol are
:mod:`verirl.provers.coq.stdlib`'s; which ones the checker can run in their context is the
measured manifest of :mod:`verirl.provers.coq.stdlib_manifest`. The library is split by file:
training seeds draw from the training files and held-out seeds
(:func:`verirl.curriculum.eval_seed`, ≥ 2^31) from the held-out files, so a run's held-out
evaluation never sees a file it trained on.

**Difficulty** is the length of the library's own proof in tactics: difficulty ``d`` draws a
lemma whose library proof has ``d + 1`` tactics (``d = 0``: one-tactic proofs such as
``Proof. now destruct p. Qed.``); proofs of :data:`TOP_TACTICS` tactics or more share the top
difficulty, and a difficulty above it draws from the top.

The prompt shows the file, the lemma's context as far as a prompt can (the file's imports and,
for each open ``Section``/``Module``, its variables, hypotheses and notations) and the
statement; the output format, the safety filter, the verdicts and the tactic spans for process
credit are :class:`~verirl.envs.proofs.coq.CoqProofs`'s. The checker loads the file's prefix
(earlier lemmas and their proofs included) before the statement, so a proof that names the
lemma itself, or a later one, fails.

The environment depends on the installed Coq (its library sources) and a manifest for that
version, so it is registered on demand (``get_env("coq_stdlib")``) rather than in the default
catalogue: its problems are the same on every machine with Debian's Coq 8.16.1 (the files'
SHA-256 are checked), and an error names what is missing elsewhere.
"""

from __future__ import annotations

import contextvars
import functools
import random
from collections.abc import Mapping, Sequence
from typing import Any

from verirl.envs.base import ENVIRONMENTS, ON_DEMAND, Instance
from verirl.envs.proofs.coq import CoqProofs, _fence
from verirl.errors import UserInputError
from verirl.provers.base import FormalProblem
from verirl.provers.coq.stdlib import TOP_TACTICS
from verirl.types import Problem

NAME = "coq_stdlib"
EVAL_SEED_BASE = 2**31  # verirl.curriculum.EVAL_SEED_BASE (envs do not import the curriculum)

_SPLIT: contextvars.ContextVar[str] = contextvars.ContextVar("coq_stdlib_split", default="train")


def stdlib_prompt(lemma: Any) -> str:
    """The task for one library lemma (its context excerpt and statement)."""
    from verirl.provers.coq.install import coq_version
    from verirl.provers.coq.stdlib import prompt_context

    context = prompt_context(lemma)
    shown = f"Context (excerpt: imports and open sections):\n```coq\n{context}\n```\n\n"
    return (
        f"Prove the following lemma of the Coq {coq_version()} standard library, file "
        f"{lemma.file}, using only what comes before it in that file.\n\n"
        f"{shown if context.strip() else ''}Theorem:\n```coq\n{lemma.statement}\n```"
    )


@functools.cache
def _manifest() -> Any:
    from verirl.provers.coq.stdlib_manifest import load_manifest

    return load_manifest()


@functools.cache
def _bank(split: str) -> dict[int, tuple[Any, ...]]:
    """The split's lemmas the manifest keeps, by difficulty (library proof length − 1)."""
    from verirl.provers.coq.stdlib import (
        difficulty_of,
        file_split,
        library_files,
        library_lemmas,
    )

    try:
        files = [f for f in library_files() if file_split(f) == split]
    except FileNotFoundError as exc:
        raise UserInputError(f"{NAME}: {exc}") from None
    manifest = _manifest()
    files = [f for f in files if f in manifest.files]
    manifest.check_sources(files)
    groups: dict[int, list[Any]] = {}
    for lemma in library_lemmas(files=files):
        if lemma.skip is None and manifest.excluded(lemma) is None:
            groups.setdefault(difficulty_of(lemma), []).append(lemma)
    if not groups:
        raise UserInputError(f"{NAME}: no {split} lemma left (is the library installed?)")
    return {d: tuple(groups[d]) for d in sorted(groups)}


def _lemma(problem: Problem) -> Any:
    from verirl.provers.coq.stdlib import file_lemmas

    d = problem.data
    lemmas = file_lemmas(str(d["file"]))
    index = int(d["index"])
    if not 0 <= index < len(lemmas) or lemmas[index].name != d["theorem"]:
        raise UserInputError(
            f"{NAME}: {d['file']} has no lemma {d['theorem']} at index {index} here (another "
            "Coq library version?)"
        )
    return lemmas[index]


class CoqStdlib(CoqProofs):
    """Prove a Coq standard-library lemma in its file's context (module docstring)."""

    name = NAME
    size_measure = "tactics in the library's own proof"
    difficulty_scales = (
        f"library lemmas whose own proof has d + 1 tactics (proofs of {TOP_TACTICS}+ tactics at "
        f"d = {TOP_TACTICS - 1} and above); training seeds draw from the training files, "
        "held-out seeds from the held-out files"
    )
    tags = ("coq", "formal", "process")

    def generate(self, difficulty: int, seed: int) -> Problem:
        split = "heldout" if isinstance(seed, int) and seed >= EVAL_SEED_BASE else "train"
        token = _SPLIT.set(split)
        try:
            return super().generate(difficulty, seed)
        finally:
            _SPLIT.reset(token)

    def bank(self) -> Mapping[int, Sequence[Any]]:
        return _bank(_SPLIT.get())

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        from verirl.provers.coq.install import coq_version

        grade, lemmas = self.theorems_at(difficulty)
        lemma = rng.choice(lemmas)
        data = {
            "system": "coq",
            "theorem": lemma.name,
            "statement": lemma.statement,
            "file": lemma.file,
            "index": lemma.index,
            "tactics": lemma.tactics,
            "grade": grade,
            "split": _SPLIT.get(),
            "coq": coq_version(),
        }
        return Instance(prompt=stdlib_prompt(lemma), answer=_fence(lemma.proof), data=data)

    @staticmethod
    def formal_problem(problem: Problem) -> FormalProblem:
        return _manifest().problem(_lemma(problem))

    def solve(self, problem: Problem) -> str:
        """The library's own proof of the lemma."""
        return _fence(_lemma(problem).proof)

    def size(self, problem: Problem) -> float:
        return float(problem.data["tactics"])


@ON_DEMAND.register(NAME, description="the installed Coq's library")
def register_on_demand(name: str) -> bool:
    """Register ``coq_stdlib`` (:data:`verirl.envs.ON_DEMAND`); False for another name."""
    if name != NAME:
        return False
    ENVIRONMENTS.register(NAME)(CoqStdlib)
    return True


__all__ = ["NAME", "TOP_TACTICS", "CoqStdlib", "register_on_demand", "stdlib_prompt"]
