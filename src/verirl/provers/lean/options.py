"""The options every Lean backend shares, defined once (the REPL checker, the Kimina client
and the run config's ``provers.lean`` section all read them from here)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from verirl.provers.lean.axioms import DEFAULT_ALLOWED_AXIOMS, validate_allowed_axioms

TacticSource = Literal["auto", "repl", "layout"]
UnsolvedGoals = Literal["skip_at_by", "skip_all"]


@dataclass(frozen=True)
class LeanOptions:
    """How a Lean backend checks a proof, whatever reaches Lean.

    - ``tactic_source``: where tactic spans come from: ``"repl"`` (Lean's own tactic ranges),
      ``"layout"`` (:func:`verirl.provers.lean.text.split_lean_proof`) or ``"auto"`` (Lean's
      when it reports them, else the layout's).
    - ``unsolved_goals``: how an "unsolved goals" error is placed
      (:func:`verirl.provers.lean.reply.first_error_offset`).
    - ``split_semicolons``, ``split_bullets``: layout splitter options.
    - ``reject_unsafe``: run the safety filter (``sorry``, ``axiom``, ``#eval``, ...) and
      answer ``rejected`` without running Lean. Turn off only to replay recorded transcripts.
    - ``check_axioms``: after a proof passes, ask ``#print axioms <theorem>`` and reject a
      proof that rests on an axiom outside ``allowed_axioms`` and the prelude's own.
    - ``allowed_axioms``: default ``propext``, ``Classical.choice``, ``Quot.sound``;
      ``sorryAx``, ``Lean.ofReduceBool``, ``Lean.ofReduceNat`` and ``Lean.trustCompiler``
      are refused with ``ValueError``.
    - ``backend_version``: a label recorded in ``ProofCheck.raw`` (e.g. ``"v4.9.0-rc1"``).
    """

    tactic_source: TacticSource = "auto"
    unsolved_goals: UnsolvedGoals = "skip_at_by"
    split_semicolons: bool = False
    split_bullets: bool = True
    reject_unsafe: bool = True
    check_axioms: bool = True
    allowed_axioms: tuple[str, ...] = DEFAULT_ALLOWED_AXIOMS
    backend_version: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "allowed_axioms", validate_allowed_axioms(self.allowed_axioms))

    @classmethod
    def build(cls, options: LeanOptions | None, overrides: dict[str, Any]) -> LeanOptions:
        """``options`` (default: the defaults) with ``overrides`` applied; an unknown name
        raises ``TypeError`` naming it and the known ones."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise TypeError(f"unknown Lean option(s) {unknown}; known: {sorted(known)}")
        return dataclasses.replace(options or cls(), **overrides)
