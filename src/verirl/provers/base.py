"""The proof-checker interface shared by the Coq and Lean backends.

A checker takes a formal problem (prelude + theorem statement) and the model's proof text and
returns a :class:`ProofCheck`: whether the whole proof passed, the tactic spans in the
coordinates of the proof text, the index of the first failing tactic and the messages. It
never raises on model output: every failure is a ``status``. It raises only for
configuration errors (e.g. a missing binary), naming what to install.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from verirl.types import Span, Verdict

ProofSystem = Literal["coq", "lean"]
DEPRECATED_SYSTEM_NAMES = {"lean4": "lean"}
"""Old names of proof systems, still read (with a ``DeprecationWarning``) where a user or a
stored problem wrote them."""


def proof_system(name: str) -> str:
    """``name`` with a deprecated spelling (``"lean4"``) replaced by the current one
    (``"lean"``), warning once per call site."""
    new = DEPRECATED_SYSTEM_NAMES.get(name)
    if new is None:
        return name
    warnings.warn(
        f"the proof system name {name!r} is deprecated; write {new!r}",
        DeprecationWarning,
        stacklevel=3,
    )
    return new


Status = Literal["pass", "error", "incomplete", "timeout", "rejected", "crash"]


@dataclass(frozen=True)
class FormalProblem:
    """A theorem to prove. ``prelude`` (imports, opens, helper definitions) is identical
    across many problems, so workers can load it once; ``statement`` is the declaration the
    proof must close (``Theorem t : ... .`` in Coq, ``theorem t ... := by`` in Lean).
    ``allowed_axioms``: axioms the problem's context itself rests on, which a proof may use
    on top of the checker's own list (Coq: the standard library's declared axioms for a
    statement over the reals, a library functor's parameters); the proof text can never
    declare one."""

    system: ProofSystem
    name: str
    statement: str
    prelude: str = ""
    allowed_axioms: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "system", proof_system(self.system))


@dataclass(frozen=True)
class Theorem:
    """One theorem: its name, statement, prelude, reference proof (None for a stub), grade
    (None when the file gives none), where it came from (``source`` and the 1-based ``line``
    of the statement; 0 when the loader does not track lines)."""

    system: ClassVar[ProofSystem]
    name: str
    statement: str
    prelude: str
    proof: str | None
    grade: int | None = None
    source: str = ""
    line: int = 0

    def problem(self) -> FormalProblem:
        return FormalProblem(
            system=self.system, name=self.name, statement=self.statement, prelude=self.prelude
        )


@dataclass(frozen=True)
class TacticSpan:
    """One tactic (Coq sentence / Lean tactic) as ``[start, end)`` character offsets into the
    model's proof text. ``index`` counts the credited tactics from 0."""

    index: int
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class ProverMessage:
    severity: Literal["error", "warning", "info"]
    text: str
    start: int | None = None  # character offset into the proof text; None when outside it
    end: int | None = None


@dataclass(frozen=True)
class ProofCheck:
    """The checker's answer for one proof attempt.

    - ``passed``: the proof was accepted with no error, no admitted goal and nothing rejected.
    - ``status``: ``pass``, ``error`` (a tactic failed), ``incomplete`` (no tactic failed but
      goals remain), ``timeout``, ``rejected`` (the safety filter refused it, see
      ``rejection``), or ``crash`` (the prover process died).
    - ``first_error_index``: index into ``tactics`` of the first failing tactic, or ``None``.
    """

    passed: bool
    status: Status
    tactics: tuple[TacticSpan, ...] = ()
    first_error_index: int | None = None
    messages: tuple[ProverMessage, ...] = ()
    timed_out: bool = False
    rejection: str | None = None
    elapsed_s: float = 0.0
    backend: str = ""
    raw: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class ProofChecker(Protocol):
    """A backend that checks proofs. ``close`` releases its worker processes."""

    name: str

    def check(
        self, problem: FormalProblem, proof: str, *, timeout_s: float = 15.0
    ) -> ProofCheck: ...

    def check_batch(
        self, items: Sequence[tuple[FormalProblem, str]], *, timeout_s: float = 15.0
    ) -> list[ProofCheck]: ...

    def close(self) -> None: ...


def proof_verdict(check: ProofCheck, offset: int, prover: str) -> Verdict:
    """The :class:`~verirl.types.Verdict` for a checker's answer on a proof that starts at
    character ``offset`` of the model output (tactic spans shifted there): reward 1 when it
    passed, else 0 with a detail that names the first failing tactic — never the answer.
    ``prover`` names the proof assistant in the detail ("Coq", "Lean")."""
    steps = tuple(Span(offset + t.start, offset + t.end) for t in check.tactics)
    extra = {
        "status": check.status,
        "backend": check.backend,
        "elapsed_s": round(check.elapsed_s, 4),
    }
    if check.passed:
        return Verdict(1.0, True, f"proof accepted by {prover}", steps, None, extra)
    if check.status == "rejected":
        detail = f"rejected: {check.rejection}"
    elif check.status == "timeout":
        detail = "the proof did not finish within the time limit"
    elif check.status == "incomplete":
        detail = "unsolved goals remain at the end of the proof"
    elif check.status == "crash":
        first = check.messages[0].text if check.messages else "the checker failed"
        detail = f"the {prover} checker failed: {first[:300]}"
    else:
        errors = [m for m in check.messages if m.severity == "error"] or list(check.messages)
        first = errors[0].text if errors else check.status
        where = ""
        if check.first_error_index is not None:
            tactic = " ".join(check.tactics[check.first_error_index].text.split())
            where = f" at tactic {check.first_error_index + 1} ({tactic[:80]})"
        detail = f"{prover} error{where}: {first[:300]}"
    return Verdict(0.0, False, detail, steps, check.first_error_index, extra)
