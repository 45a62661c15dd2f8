"""What the proof environments (``coq_proofs``, ``lean_proofs``) share: a graded theorem bank,
batched checking through the run's :class:`~verirl.provers.settings.Provers`, and verdicts
with tactic steps for process credit (Kim & Yun 2026, "Process-Verified Reinforcement
Learning for Theorem Proving via Lean", arXiv:2606.20068).

A subclass names its proof assistant (``prover``, ``prover_label``), its theorem bank
(:meth:`bank`), how a problem becomes a :class:`~verirl.provers.base.FormalProblem`
(:meth:`formal_problem`) and how an output becomes proof text or an early verdict
(:meth:`_prepare`: no proof found, rejected by the pre-filter).
"""

from __future__ import annotations

import threading
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from verirl.envs.base import Environment
from verirl.provers.base import FormalProblem, ProofChecker, proof_verdict
from verirl.provers.settings import Provers
from verirl.types import Problem, Verdict


class ProofEnvironment(Environment):
    """Base of environments whose verifier is a proof assistant (see the module docstring)."""

    prover: ClassVar[str | None]
    prover_label: ClassVar[str]  # the assistant's name in verdict details ("Coq", "Lean")
    produces: ClassVar[frozenset[str]] = frozenset({"steps"})

    def __init__(self) -> None:
        self._provers: Provers | None = None
        self._provers_lock = threading.Lock()

    # ---- the bank ----------------------------------------------------------------------
    @abstractmethod
    def bank(self) -> Mapping[int, Sequence[Any]]:
        """The bundled theorems by grade."""

    def theorems_at(self, difficulty: int) -> tuple[int, Sequence[Any]]:
        """The grade used at ``difficulty`` (the hardest bundled grade above it; a missing
        grade falls back to the one below) and its theorems."""
        groups = self.bank()
        grade = min(difficulty, max(groups))
        while grade not in groups:
            grade -= 1
        return grade, groups[grade]

    def problem_space(self, difficulty: int) -> int | None:
        """One problem per bundled theorem of the grade (the bank is small by nature)."""
        return len(self.theorems_at(difficulty)[1])

    # ---- verification ------------------------------------------------------------------
    @staticmethod
    @abstractmethod
    def formal_problem(problem: Problem) -> FormalProblem:
        """The statement, prelude and name the checker needs."""

    @abstractmethod
    def _prepare(self, problem: Problem, output: str) -> Verdict | tuple[str, int]:
        """The proof text and its offset in ``output``, or the verdict when there is nothing
        to check."""

    def checker(self, provers: Provers) -> ProofChecker:
        """The run's checker for this environment's proof assistant."""
        assert self.prover is not None
        return provers.checker(self.prover)

    def verify(self, problem: Problem, output: str) -> Verdict:
        """Check the proof in ``output`` (default checker settings). Never raises on the
        output; a missing proof assistant is a configuration error and does raise."""
        return self.verify_batch([problem], [output])[0]

    def verify_batch(
        self, problems: Sequence[Problem], outputs: Sequence[str], provers: Any = None
    ) -> list[Verdict]:
        """Verdicts for many outputs, the proofs checked together by the checker's pool.
        Outputs without a proof, and cheats the pre-filter rejects, never reach it."""
        verdicts: list[Verdict | None] = []
        todo: list[tuple[int, FormalProblem, str, int]] = []
        for i, (problem, output) in enumerate(zip(problems, outputs, strict=True)):
            prepared = self._prepare(problem, output)
            if isinstance(prepared, Verdict):
                verdicts.append(prepared)
            else:
                verdicts.append(None)
                todo.append((i, self.formal_problem(problem), *prepared))
        if todo:
            provers = provers or self._default_provers()
            assert self.prover is not None
            checks = self.checker(provers).check_batch(
                [(fp, text) for _, fp, text, _ in todo], timeout_s=provers.timeout_s(self.prover)
            )
            for (i, _, _, offset), check in zip(todo, checks, strict=True):
                verdicts[i] = proof_verdict(check, offset, self.prover_label)
        return [v for v in verdicts if v is not None]

    def _default_provers(self) -> Provers:
        """Checkers with default settings for calls outside a run (one per instance)."""
        with self._provers_lock:
            if self._provers is None:
                self._provers = Provers()
            return self._provers
