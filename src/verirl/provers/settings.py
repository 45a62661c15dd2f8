"""Proof checkers built from the configuration (``provers:`` section of a run config).

A run owns one :class:`Provers`: it builds each proof assistant's checker lazily from its
settings the first time a problem of that system is verified, keeps it (with its worker
processes) for the run, and closes it at the end. Nothing here is module-level state: two
runs, or a test and a run, each have their own checkers.

Settings (every field documented; defaults are the process-verified proving paper's where it
gives one — Kim & Yun 2026, "Process-Verified Reinforcement Learning for Theorem Proving via
Lean", §4: a 15 s check timeout, a timeout is a failure):

- ``coq``: ``backend`` (``coqide``: a pool of long-lived ``coqidetop`` workers, or ``coqc``:
  a fresh process per proof), ``workers``, ``timeout_s``, ``memory_mb``;
- ``lean``: ``backend`` (``repl``: a leanprover-community/repl process, or ``kimina``: a
  Kimina Lean Server over HTTP), the REPL ``command`` or the server ``url``, ``timeout_s``,
  ``memory_mb``, ``allowed_axioms`` (what ``#print axioms`` may list for a passing proof).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from verirl.errors import UserInputError
from verirl.provers.base import DEPRECATED_SYSTEM_NAMES, ProofChecker, proof_system
from verirl.provers.lean.options import LeanOptions
from verirl.registry import Registry, Spec

logger = logging.getLogger("verirl.provers")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _known_backend(system: str, backend: str) -> str:
    if backend not in CHECKERS[system]:
        known = ", ".join(CHECKERS[system].names())
        raise ValueError(f"unknown {system} checker backend {backend!r}; known: {known}")
    return backend


class CoqSettings(_Section):
    backend: str = Field(
        "coqide",
        description="A registered Coq checker (verirl.provers.settings.CHECKERS['coq']): "
        "'coqide': a pool of long-lived coqidetop workers (fast: no process start per proof); "
        "'coqc': a fresh coqc process per proof (slower, simplest isolation).",
    )
    workers: int = Field(
        2, ge=1, description="Proofs checked in parallel (worker processes; one per core)."
    )
    timeout_s: float = Field(
        15.0,
        gt=0,
        description="Time allowed per proof; a timeout is a failure. Process-verified proving "
        "paper: 15 s.",
    )
    memory_mb: int = Field(3072, ge=64, description="Address-space limit of each Coq process.")

    @field_validator("backend")
    @classmethod
    def _registered(cls, value: str) -> str:
        return _known_backend("coq", value)


class LeanSettings(_Section):
    backend: str = Field(
        "repl",
        description="A registered Lean checker (verirl.provers.settings.CHECKERS['lean']): "
        "'repl': a leanprover-community/repl process on this machine; 'kimina': a Kimina Lean "
        "Server reached over HTTP (Kimina-Prover's checker).",
    )
    command: list[str] | None = Field(
        None,
        description="REPL command line, e.g. ['lake', '-d', '/opt/mathlib', 'env', "
        "'/opt/repl/.lake/build/bin/repl'] (None: $VERIRL_LEAN_REPL).",
    )
    url: str | None = Field(
        None,
        description="Kimina server address, e.g. 'http://127.0.0.1:8000' (None: "
        "$VERIRL_KIMINA_URL).",
    )
    timeout_s: float = Field(
        15.0, gt=0, description="Time allowed per proof (process-verified proving paper: 15 s)."
    )
    memory_mb: int | None = Field(
        8192, ge=64, description="Address-space limit of the REPL process (None: no limit)."
    )
    allowed_axioms: list[str] = Field(
        default_factory=lambda: list(LeanOptions().allowed_axioms),
        description="Axioms a passing proof may depend on (`#print axioms` runs after the "
        "theorem checks; the prelude's own axioms are allowed too). sorryAx, "
        "Lean.ofReduceBool (native_decide), Lean.ofReduceNat and Lean.trustCompiler are "
        "never allowed.",
    )

    @field_validator("backend")
    @classmethod
    def _registered(cls, value: str) -> str:
        return _known_backend("lean", value)


# ---- the checkers, registered per proof system ------------------------------------------
CHECKERS: dict[str, Registry[Spec[Callable[[Any], ProofChecker]]]] = {
    "coq": Registry("coq checker backend"),
    "lean": Registry("lean checker backend"),
}
"""Checker backends per proof system (``provers.<system>.backend``): ``@CHECKERS[system].
register(backend, description=...)`` on ``factory(settings)``, the system's settings section
(:class:`CoqSettings`, :class:`LeanSettings`)."""


@CHECKERS["coq"].register("coqide", description="a pool of long-lived coqidetop workers")
def _coqide(s: CoqSettings) -> ProofChecker:
    from verirl.provers.coq.idetop import CoqIdeChecker

    return CoqIdeChecker(s.workers, memory_mb=s.memory_mb)


@CHECKERS["coq"].register("coqc", description="a fresh coqc process per proof")
def _coqc(s: CoqSettings) -> ProofChecker:
    from verirl.provers.coq.coqc import CoqcChecker

    return CoqcChecker(memory_mb=s.memory_mb, workers=s.workers)


@CHECKERS["lean"].register("repl", description="a leanprover-community/repl process")
def _lean_repl(s: LeanSettings) -> ProofChecker:
    from verirl.provers.lean.repl import LeanReplChecker

    return LeanReplChecker(s.command, memory_limit_mb=s.memory_mb, allowed_axioms=s.allowed_axioms)


@CHECKERS["lean"].register("kimina", description="a Kimina Lean Server over HTTP")
def _kimina(s: LeanSettings) -> ProofChecker:
    from verirl.provers.lean.kimina import KiminaChecker

    return KiminaChecker(s.url, allowed_axioms=s.allowed_axioms)


class ProversConfig(_Section):
    coq: CoqSettings = Field(default_factory=CoqSettings)
    lean: LeanSettings = Field(default_factory=LeanSettings)

    @model_validator(mode="before")
    @classmethod
    def _deprecated_names(cls, data: Any) -> Any:
        """Read a section written under a deprecated system name (``lean4:``) as ``lean:``."""
        if not isinstance(data, dict):
            return data
        out = dict(data)
        for old in [k for k in out if k in DEPRECATED_SYSTEM_NAMES]:
            new = proof_system(old)
            section = out.pop(old)
            current = out.get(new)
            # the loader fills every section with defaults first: the old name's fields win
            if isinstance(current, dict) and isinstance(section, dict):
                section = {**current, **section}
            out[new] = section
        return out


class Provers:
    """The run's proof checkers, one per proof assistant, built on first use."""

    def __init__(self, config: ProversConfig | None = None) -> None:
        self.config = config or ProversConfig()
        self._lock = threading.Lock()
        self._checkers: dict[str, ProofChecker] = {}

    def timeout_s(self, system: str) -> float:
        return float(self._settings(system).timeout_s)

    def checker(self, system: str) -> ProofChecker:
        """The checker for ``system`` (``"coq"`` or ``"lean"``), started on first use."""
        with self._lock:
            system = proof_system(system)
            if system not in self._checkers:
                try:
                    self._checkers[system] = self._build(system)
                except UserInputError:
                    raise
                except Exception as exc:  # no binary, no server, bad command: a setup problem
                    fields = (
                        "provers.coq.backend"
                        if system == "coq"
                        else "provers.lean.command / provers.lean.url"
                    )
                    raise UserInputError(
                        f"cannot start the {system} checker ({type(exc).__name__}: {exc}); "
                        f"install it or set {fields}"
                    ) from exc
            return self._checkers[system]

    def start(self, systems: Iterable[str]) -> None:
        """Start the checker of every proof system in ``systems`` now, so a missing or
        misconfigured prover stops a run before any work (not as a verifier error later)."""
        for system in sorted({proof_system(s) for s in systems}):
            logger.info("%s checker ready (%s)", system, self.checker(system).name)

    @property
    def started(self) -> list[str]:
        """The proof systems whose checkers are running."""
        with self._lock:
            return sorted(self._checkers)

    def close(self) -> None:
        """Stop every checker (a later :meth:`checker` call starts a new one)."""
        with self._lock:
            checkers, self._checkers = self._checkers, {}
        for c in checkers.values():
            c.close()

    def __enter__(self) -> Provers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- construction ------------------------------------------------------------------
    def _settings(self, system: str) -> CoqSettings | LeanSettings:
        system = proof_system(system)
        if system == "coq":
            return self.config.coq
        if system == "lean":
            return self.config.lean
        raise UserInputError(f"unknown proof system {system!r}: use 'coq' or 'lean'")

    def _build(self, system: str) -> ProofChecker:
        system = proof_system(system)
        s = self._settings(system)
        return CHECKERS[system].get(s.backend).part(s)
