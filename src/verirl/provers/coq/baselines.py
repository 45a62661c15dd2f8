"""Classical Coq provers, registered by name: fixed tactic scripts and CoqHammer.

A baseline answers every theorem with one proof script, and a benchmark runs it exactly like a
model's proof: the same checker (the ``coqidetop`` pool), the same safety filter, the same
``Print Assumptions`` check and the same time per check. What it may add is the library its
tactic lives in (``Require Import Lia.`` for ``lia``; ``From Hammer Require Import Hammer.``
for CoqHammer), put *before* the problem's own header so that the header's notations and
scopes stay the ones the statement was written against. Nothing in the statement changes.

- single tactics and short scripts: ``lia``, ``nia``, ``lra``, ``nra``, ``ring``, ``field``,
  ``auto``, ``intuition``, ``firstorder``, ``congruence``, ``reflexivity``, ``easy``, ... and
  ``intros; lia`` and its kin (``intros`` first: ``lia`` does not introduce ``forall``s over
  real numbers, ``ring`` needs an equation in the goal);
- CoqHammer 1.3 for Coq 8.16 (Czajka & Kaliszyk 2018, "Hammer for Coq: Automation for
  Dependent Type Theory", JAR 61:423-453): ``hammer`` (premise selection, external ATPs —
  E prover and CVC4 from Debian; Vampire and Z3's TPTP front end are not packaged — and
  proof reconstruction) and ``sauto`` (its ATP-free search, Czajka 2020, "Practical proof
  search for Coq by type inhabitation", IJCAR). The ATPs get half the check's time
  (``Set Hammer ATPLimit``), so that reconstruction fits in the rest.

A baseline is deterministic: one attempt per theorem, its pass@1 is the share it proves.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from verirl.provers.base import FormalProblem
from verirl.registry import Registry, Spec

LIA = "Require Import Lia."
LRA = "Require Import Lra."
HAMMER = "From Hammer Require Import Hammer."
HAMMER_TACTICS = "From Hammer Require Import Tactics."
HAMMER_STRATEGIES = 2
"""CoqHammer's strategies run in parallel (``GSMode``; its advice: the number of cores, the
default 8 assumes eight): 2, the cores of the machine the documented table was measured on."""


@dataclass(frozen=True)
class CoqBaseline:
    """A fixed proof script. ``tactic``: what goes between ``Proof.`` and ``Qed.``;
    ``imports``: sentences put before the problem's header (the tactic's library);
    ``roots``: library roots those imports need beyond the stdlib (``Hammer``);
    ``hammer``: set CoqHammer's ATP time limit from the check's budget."""

    name: str
    tactic: str
    description: str
    imports: tuple[str, ...] = ()
    roots: tuple[str, ...] = ()
    hammer: bool = False

    @property
    def proof(self) -> str:
        """The proof text checked for every theorem."""
        return f"Proof.\n  {self.tactic}\nQed."

    def prelude(self, timeout_s: float) -> str:
        """What goes before the problem's header for a check of ``timeout_s`` seconds."""
        lines = list(self.imports)
        if self.hammer:
            lines += [
                f"Set Hammer GSMode {HAMMER_STRATEGIES}.",
                f"Set Hammer ATPLimit {max(1, int(timeout_s // 2))}.",
                f"Set Hammer ReconstrLimit {max(1, int(timeout_s // 4))}.",
            ]
        return "\n".join(lines)

    def problem(self, problem: FormalProblem, timeout_s: float) -> FormalProblem:
        """``problem`` with this baseline's imports before its header."""
        head = self.prelude(timeout_s)
        if not head:
            return problem
        prelude = f"{head}\n{problem.prelude}" if problem.prelude else head
        return dataclasses.replace(problem, prelude=prelude)


BASELINES: Registry[Spec[CoqBaseline]] = Registry("Coq baseline prover")
"""The baselines by name: ``BASELINES.register(name, description=...)(CoqBaseline(...))``."""
_BUILT_IN: list[CoqBaseline] = []


_ARITH = {
    "lia": ((LIA,), "linear integer arithmetic (nat, Z): Micromega's decision procedure"),
    "nia": ((LIA,), "lia with products of hypotheses (non-linear integer arithmetic)"),
    "lra": ((LRA,), "linear real (and rational) arithmetic: Micromega over ordered fields"),
    "nra": ((LRA,), "lra with products of hypotheses (non-linear real arithmetic)"),
}
_PLAIN = {
    "ring": "ring normalisation: closes equations of commutative (semi-)rings",
    "field": "field normalisation: ring with division, side conditions left as goals",
    "auto": "depth-5 search with the core hint database",
    "eauto": "auto with existential variables",
    "intuition": "propositional tautologies, then auto on the leaves",
    "firstorder": "first-order intuitionistic proof search",
    "tauto": "intuitionistic propositional tautologies",
    "congruence": "equality reasoning with uninterpreted functions and constructors",
    "reflexivity": "the goal is an equation whose sides compute to the same value",
    "easy": "Coq's small bundle of closing tactics (trivial, contradiction, inversion, ...)",
    "trivial": "auto of depth 0",
}

for _tac, (_imports, _what) in _ARITH.items():
    _BUILT_IN.append(CoqBaseline(_tac, f"{_tac}.", _what, _imports))
    _BUILT_IN.append(
        CoqBaseline(f"intros; {_tac}", f"intros; {_tac}.", f"intros, then {_tac}", _imports)
    )
for _tac, _what in _PLAIN.items():
    _BUILT_IN.append(CoqBaseline(_tac, f"{_tac}.", _what))
for _tac in ("ring", "field", "auto", "congruence", "reflexivity"):
    _BUILT_IN.append(CoqBaseline(f"intros; {_tac}", f"intros; {_tac}.", f"intros, then {_tac}"))
_BUILT_IN.append(
    CoqBaseline(
        "intros; subst; nia",
        "intros; subst; nia.",
        "intros, substitute the equations between variables, then nia",
        (LIA,),
    )
)
_BUILT_IN.append(
    CoqBaseline(
        "intros; field_simplify; nra",
        "intros; field_simplify; nra.",
        "intros, clear denominators, then nra",
        (LRA,),
    )
)
_BUILT_IN.append(
    CoqBaseline(
        "hammer",
        "hammer.",
        "CoqHammer: premise selection, E prover and CVC4, proof reconstruction",
        (HAMMER,),
        ("Hammer",),
        hammer=True,
    )
)
_BUILT_IN.append(
    CoqBaseline(
        "sauto",
        "sauto.",
        "CoqHammer's sauto: ATP-free proof search by type inhabitation",
        (HAMMER_TACTICS,),
        ("Hammer",),
    )
)
_BUILT_IN.append(
    CoqBaseline(
        "intros; sauto",
        "intros; sauto.",
        "intros, then CoqHammer's sauto",
        (HAMMER_TACTICS,),
        ("Hammer",),
    )
)

for _baseline in _BUILT_IN:
    BASELINES.register(_baseline.name, description=_baseline.description)(_baseline)

HAMMER_BASELINES = ("hammer", "sauto", "intros; sauto")
"""The baselines that need CoqHammer (``libcoq-hammer``) installed."""


def script_baselines() -> list[str]:
    """Every registered baseline that needs no CoqHammer (the single tactics and scripts)."""
    return [name for name in BASELINES if not BASELINES.get(name).part.roots]


def hammer_installed() -> bool:
    """Whether Debian's ``libcoq-hammer`` (its Coq library) is installed."""
    from verirl.provers.coq.install import has_library

    return has_library("Hammer")


__all__ = [
    "BASELINES",
    "HAMMER_BASELINES",
    "CoqBaseline",
    "hammer_installed",
    "script_baselines",
]
