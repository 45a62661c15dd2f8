"""The batched verification stage and the executors it runs verifier calls on.

- :mod:`~verirl.verification.batch`: :class:`BatchVerifier`, every environment verification
  of a step (and of each turn of an episode) in one batched call, each with a deadline;
- :mod:`~verirl.verification.executors`: where the calls run — ``inline``, ``threads``,
  ``processes``, or a plug-in's (``ray``: :mod:`verirl.integrations.ray.executor`);
- :mod:`~verirl.verification.settings`: the section the config holds.
"""

from __future__ import annotations

from verirl.verification.batch import BatchVerifier, verify_one, verify_proof_one
from verirl.verification.executors import (
    EXECUTORS,
    Executor,
    InlineExecutor,
    Outcome,
    ProcessExecutor,
    ThreadExecutor,
)

__all__ = [
    "EXECUTORS",
    "BatchVerifier",
    "Executor",
    "InlineExecutor",
    "Outcome",
    "ProcessExecutor",
    "ThreadExecutor",
    "verify_one",
    "verify_proof_one",
]
