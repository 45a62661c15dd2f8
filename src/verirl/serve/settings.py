"""The gym's configuration: what ``verirl serve`` takes, and what a training config embeds.

:class:`GymConfig` holds the sections a gym needs — which problems (``curriculum:``), how
answers are verified (``verification:``, ``provers:``, ``sandbox:``), where a run's problems
come from (``envs:``), how the server listens and bounds requests (``serve:``) and the
``run:`` settings a gym reads (``seed``, ``plugins``). A training config
(:class:`verirl.config.TrainConfig`) is a gym config plus the training sections, so every key
means the same in both. Pure settings: importing this needs no web framework.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from verirl.curriculum import CurriculumConfig
from verirl.provers.settings import ProversConfig
from verirl.sandbox import SandboxConfig
from verirl.verification.settings import VerificationConfig

TOKEN_ENV = "VERIRL_SERVE_TOKEN"
"""Environment variable holding the access token (the ``--token`` option overrides it)."""


class ServeConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    host: str = Field(
        "127.0.0.1",
        description="Address to bind. Loopback by default; any other address requires a token "
        f"(--token or ${TOKEN_ENV}), checked on every route but /health.",
    )
    port: int = Field(8000, ge=0, le=65535, description="TCP port (0: any free port).")
    state_path: str = Field(
        "verirl-serve.sqlite",
        description="SQLite file holding the named curricula (WAL mode, one transaction per "
        "verdict); a restart, even after kill -9, resumes from it.",
    )
    durability: Literal["process", "power"] = Field(
        "process",
        description="'process': a committed verdict survives the server process being killed "
        "(SQLite WAL, synchronous=NORMAL); 'power': also an OS crash or power loss "
        "(synchronous=FULL, an fsync per verdict: slower).",
    )
    default_turns: int = Field(
        1,
        ge=1,
        le=64,
        description="Turns per episode when reset does not say (K of multi-turn refinement; "
        "tool_world takes one tool call per turn and usually needs more).",
    )
    default_tool_calls: int = Field(
        16,
        ge=1,
        le=1024,
        description="Steps of a stateful tool environment's episode (tool_world: one tool call "
        "per step) when reset does not say.",
    )
    max_turns: int = Field(64, ge=1, le=1024, description="The most turns reset may ask for.")
    max_body_bytes: int = Field(
        1_048_576, ge=1024, description="Largest request body (HTTP) or message (WebSocket)."
    )
    max_answer_chars: int = Field(
        65_536,
        ge=16,
        description="Longest model output verified in one step or verify item (POST /verify "
        "and a step answer a longer one with a too_long verdict, reward -1). "
        "max_body_bytes must hold 12 bytes per character of it (ASCII JSON's worst case: a "
        "character past U+FFFF is two \\u escapes).",
    )
    max_batch: int = Field(512, ge=1, description="Most items in one POST /verify.")
    max_sessions: int = Field(
        256, ge=1, description="Most concurrent /ws sessions (OpenEnv max_concurrent_envs)."
    )
    max_curricula: int = Field(1024, ge=1, description="Most named curricula the server keeps.")
    http: Literal["auto", "httptools", "h11"] = Field(
        "auto",
        description="uvicorn's HTTP parser: 'auto' takes httptools when it is installed (the "
        "serve extra installs it; faster), else h11.",
    )
    loop: Literal["auto", "uvloop", "asyncio"] = Field(
        "auto",
        description="uvicorn's event loop: 'auto' takes uvloop when it is installed (the serve "
        "extra installs it, except on Windows; faster), else asyncio.",
    )
    gc_freeze: bool = Field(
        True,
        description="After start-up, move every object then alive (the environments, the "
        "web stack: about 340,000) out of the garbage collector's sight (gc.freeze): a full "
        "collection otherwise scans them all, a pause of 0.1-0.3 s in some request.",
    )
    request_ids: int = Field(
        256,
        ge=1,
        le=100_000,
        description="Request ids of counted POST /verify calls kept per curriculum, with their "
        "replies: a retry of one of them is answered from the store and not counted again.",
    )
    problem_cache: int = Field(
        4096, ge=0, description="Generated problems kept in memory (LRU) for verification."
    )

    @model_validator(mode="after")
    def _an_answer_fits_in_a_body(self) -> ServeConfig:
        need = 12 * (self.max_answer_chars + 1) + 4096
        if self.max_body_bytes < need:
            raise ValueError(
                f"serve.max_body_bytes ({self.max_body_bytes}) cannot carry one answer of "
                f"serve.max_answer_chars ({self.max_answer_chars}) characters: it needs at "
                f"least {need} bytes (12 per character, ASCII JSON's worst case, plus 4096)"
            )
        return self


class EnvsConfig(BaseModel):
    """Where a training run's problems and verdicts come from (:mod:`verirl.sources`): this
    process, or a ``verirl serve`` gym."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    server: str | None = Field(
        None,
        description="URL of a `verirl serve` gym (http://HOST:PORT). Set: the server's named "
        "curriculum (envs.curriculum) hands out the problems and its batched POST /verify "
        "gives the verdicts, which move that curriculum server-side; unset: this process's "
        "own curriculum and verifiers.",
    )
    curriculum: str | None = Field(
        None,
        description="The server's curriculum to train from (created from this config's "
        "curriculum: section when the server does not keep it yet). Default: run.name.",
    )
    token_env: str = Field(
        TOKEN_ENV,
        description="Environment variable holding the server's access token (a token is "
        "never written in the config, which is copied into the run directory).",
    )
    timeout_s: float = Field(300.0, gt=0, description="Seconds one request to the server may take.")
    retries: int = Field(
        5,
        ge=0,
        le=20,
        description="Connection errors retried per request, waiting 0.5, 1, 2, 4, ... s "
        "(at most 10 s) between tries; then the run stops with one line naming the server.",
    )

    @property
    def source(self) -> str:
        """The registered problem source these settings choose (``local`` or ``server``)."""
        return "local" if self.server is None else "server"


class GymRunConfig(BaseModel):
    """The ``run:`` settings a gym reads (a training run's ``run:`` section has more)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    seed: int = Field(0, description="Seed of every random source (sampling, curriculum, init).")
    plugins: list[str] = Field(
        default_factory=list,
        description="Python modules imported before the config is checked, so that your own "
        "environments, reward sources, credit estimators or collectors register themselves.",
    )


def default_curriculum() -> CurriculumConfig:
    """The default job's curriculum: three arithmetic environments, τ_num = 48."""
    return CurriculumConfig(environments=["addition", "multiplication", "chain_sum"], tau_num=48)


class GymConfig(BaseModel):
    """A gym: its problems, its verifiers and how it is served (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    run: GymRunConfig = Field(default_factory=GymRunConfig)
    curriculum: CurriculumConfig = Field(
        default_factory=default_curriculum,
        description="Which problems are trained on. The default job: three arithmetic "
        "environments with RLVE's adaptive windows, τ_num = 8 prompts × 6 samples (RLVE's "
        "8 prompts × 16 at its group size 16).",
    )
    verification: VerificationConfig = Field(default_factory=VerificationConfig)
    provers: ProversConfig = Field(
        default_factory=ProversConfig,
        description="Proof checkers (Coq, Lean) for proof environments, built from here.",
    )
    sandbox: SandboxConfig = Field(
        default_factory=SandboxConfig,
        description="The sandbox model-written code runs in (code environments): workers, "
        "isolation mode, limits. VERIRL_SANDBOX_WORKERS / VERIRL_SANDBOX_MODE override.",
    )
    serve: ServeConfig = Field(
        default_factory=ServeConfig,
        description="`verirl serve`: address, bounds on requests, where curricula are kept.",
    )
    envs: EnvsConfig = Field(
        default_factory=EnvsConfig,
        description="Problems and verdicts from this process (default) or from a `verirl "
        "serve` gym (envs.server).",
    )
