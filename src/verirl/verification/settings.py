"""The settings of the verification stage that the config schema holds as sections
(``verification:``, ``ray.verifiers``), kept apart from the executors so a schema imports a
schema, not the stage."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from verirl.registry import Plugin


class RayPoolParams(BaseModel):
    """Parameters of the ``ray`` executor (and of ``ray.verifiers`` with ``run.backend=ray``)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)
    actors: int = Field(2, ge=1, description="Verifier actors (each owns its own checkers).")
    num_cpus: float = Field(1.0, gt=0, description="CPUs Ray reserves for each verifier actor.")
    concurrency: int = Field(
        1,
        ge=1,
        description="Calls one actor serves at once (threads: useful when its Coq pool has "
        "several workers or its verifier waits on a subprocess). Calls beyond "
        "actors × concurrency wait in the driver (back-pressure).",
    )
    grace_s: float = Field(
        10.0,
        gt=0,
        description="Time past a call's deadline after which its actor counts as hung: it is "
        "killed and replaced, and its calls score as timeouts.",
    )
    prefetch: int = Field(
        1,
        ge=0,
        description="Calls queued at each actor place behind the one it runs, so an actor "
        "never waits for the driver between calls. In flight at most: actors × concurrency "
        "× (1 + prefetch) calls.",
    )
    max_batch: int = Field(
        8,
        ge=1,
        description="Items per actor call at most. Each call takes ⌈r / (2 · actors · "
        "concurrency)⌉ of the r items still waiting (capped here), so Ray's cost per call is "
        "shared by several items while calls shrink towards the end of a batch and every "
        "actor stays busy; a call lost with its actor costs all of its items a timeout.",
    )
    address: str | None = Field(
        None,
        description="Ray cluster to join when Ray is not started yet (None: a private local "
        "Ray; 'auto': the running cluster).",
    )


class VerificationConfig(BaseModel):
    """Where environment verifiers run and how long one may take."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    executor: Plugin = Field(
        default_factory=lambda: Plugin(name="processes", params={"workers": 2}),
        description="Where environment verifiers run: 'processes' (a warm worker pool that "
        "enforces each call's deadline by replacing a stuck worker; params: workers), "
        "'threads' (params: workers), or 'inline' (this process, no enforced deadline).",
    )
    timeout_s: float = Field(
        10.0,
        gt=0,
        description="Deadline of one verification; past it the answer scores as invalid "
        "(−0.5) and is counted in reward/verifier_timeouts. Proof checks use "
        "provers.<system>.timeout_s instead.",
    )
    stream: Literal["auto", "on", "off"] = Field(
        "auto",
        description="Rewards while generating: a finished sequence goes to the verifiers "
        "while the rest of its batch still decodes (and, multi-turn, while other episodes "
        "still act), so a slow verifier (a proof checker, the sandbox, a judge) overlaps "
        "generation; the verdicts are the same. 'auto': on unless the executor is 'inline' "
        "(whose calls would then leave the main thread, and with them the signal-based "
        "deadlines of some checkers) — proof checks stream under 'inline' too, their checkers "
        "run in processes of their own. Measured in docs/verification.md.",
    )
