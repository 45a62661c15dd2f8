"""The settings of the verification stage that the config schema holds as a section
(``verification:``), kept apart from the executors so a schema imports a schema, not the
stage."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from verirl.registry import Plugin


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
        "run in processes of their own. Measured in docs/architecture.md (rewards while "
        "generating).",
    )

    @field_validator("stream", mode="before")
    @classmethod
    def _yaml_switch(cls, value: object) -> object:
        """YAML 1.1 reads a bare ``on``/``off`` as a boolean: take it as the switch meant."""
        if isinstance(value, bool):
            return "on" if value else "off"
        return value
