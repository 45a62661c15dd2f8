"""The verifier resources of a training run or a gym, built in one place.

Both the trainer and ``verirl serve`` need the same three things, in the same order: the code
sandbox configured first (the executor's worker processes inherit its configuration), then the
executor the verification stage runs verifier calls on (the registry's, or one the run's
placement provides: the Ray pool), then the proof checkers (started on first use, or by the
problem source for the environments it trains on). :func:`build_verifier_resources` is that
assembly; :meth:`VerifierResources.close` stops what it started.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from verirl.provers.settings import Provers, ProversConfig
from verirl.sandbox import SandboxConfig, configure_sandbox
from verirl.verification.batch import BatchVerifier
from verirl.verification.executors import EXECUTORS, Executor
from verirl.verification.settings import VerificationConfig


@dataclass
class VerifierResources:
    """The executor and the proof checkers verification runs on."""

    executor: Executor
    provers: Provers

    def verifier(self, timeout_s: float) -> BatchVerifier:
        """The batched verification stage over these resources."""
        return BatchVerifier(self.executor, self.provers, timeout_s)

    def close(self) -> None:
        """Stop the executor's workers and the proof checkers (idempotent)."""
        try:
            self.executor.close()
        finally:
            self.provers.close()


def build_verifier_resources(
    verification: VerificationConfig,
    provers: ProversConfig,
    sandbox: SandboxConfig,
    plugins: Sequence[str] = (),
    executor: Callable[[], Executor] | None = None,
) -> VerifierResources:
    """Configure the sandbox, then build the executor (``executor()`` when given, else the
    one ``verification.executor`` names, its workers importing ``plugins``) and the proof
    checkers of ``provers``."""
    configure_sandbox(sandbox)
    if executor is not None:
        built = executor()
    else:
        chosen = verification.executor
        built = EXECUTORS.get(chosen.name).build(chosen.params, tuple(plugins))
    return VerifierResources(built, Provers(provers))
