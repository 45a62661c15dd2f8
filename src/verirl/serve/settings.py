"""The ``serve:`` section of a config: how ``verirl serve`` listens, bounds requests and keeps
its curricula (pure settings; importing this needs no web framework)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

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
