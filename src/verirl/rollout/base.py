"""The rollout engine interface: token ids in, sampled continuations with log-probs out.

The trainer talks to an engine only through :class:`RolloutEngine`, and builds it by name from
the engine registry (``rollout.engine: {name: hf, params: ...}``), so a vLLM (or any other)
backend can replace the transformers one without touching the loop. An engine knows nothing
about problems or rewards; :mod:`verirl.rollout.prompts` turns problems into prompt ids.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel

from verirl.registry import Registry
from verirl.types import FinishReason, SamplingParams


@dataclass(frozen=True)
class Generation:
    """One sampled continuation of one prompt.

    ``logprobs[t]`` is log π(token_ids[t] | prompt, token_ids[<t]) under the distribution the
    token was sampled from (temperature applied; top-p truncation *not* renormalised into it,
    so it is the policy's own log-prob at that temperature).
    """

    token_ids: tuple[int, ...]
    logprobs: tuple[float, ...]
    text: str
    finish_reason: FinishReason


@runtime_checkable
class RolloutEngine(Protocol):
    """Samples continuations from the current policy."""

    def generate(
        self, prompts: Sequence[Sequence[int]], sampling: SamplingParams
    ) -> list[list[Generation]]:
        """For each prompt (token ids, chat template applied) draw ``sampling.n``
        continuations. Returns one list of ``n`` generations per prompt, in order."""
        ...

    def sync_weights(self) -> None:
        """Make the next ``generate`` use the learner's latest weights (a no-op for an
        engine that shares the learner's module)."""
        ...

    def state_dict(self) -> dict[str, Any]:
        """The engine's own state for a checkpoint (e.g. its sampling generator)."""
        ...

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned."""
        ...


@runtime_checkable
class ReportsCost(Protocol):
    """An engine that measures its own cost (e.g. Ray replicas: generation and weight-sync
    seconds, megabytes sent); the loop logs ``metrics()`` every step."""

    def metrics(self, reset: bool = True) -> dict[str, float]:
        """Cost since the last reset, as ``{"name": value}``."""
        ...


# ---- the engine registry -------------------------------------------------------------------
EngineFactory = Callable[..., RolloutEngine]


@dataclass(frozen=True)
class EngineSpec:
    """A registered engine: ``factory(params, model, tokenizer, placement, seed)``.

    ``logprobs_exact``: whether its sampling log-probs are the learner's own (an engine that
    runs the learner's module, like ``hf``); when not (vLLM's kernels), ``optim.old_logprobs
    = auto`` recomputes π_old with the learner.
    """

    name: str
    factory: EngineFactory
    params: type[BaseModel]
    logprobs_exact: bool = True

    def build(
        self,
        params: BaseModel | dict[str, Any] | None,
        model: Any,
        tokenizer: Any,
        placement: Any,
        seed: int = 0,
    ) -> RolloutEngine:
        if params is None or isinstance(params, dict):
            params = self.params.model_validate(params or {})
        return self.factory(params, model, tokenizer, placement, seed)


ENGINES: Registry[EngineSpec] = Registry("rollout engine")


def register_engine(
    name: str, params: type[BaseModel], *, logprobs_exact: bool = True
) -> Callable[[EngineFactory], EngineFactory]:
    """Register ``factory(params, model, tokenizer, placement, seed) -> RolloutEngine`` as
    engine ``name`` (``rollout.engine.name``) with parameter model ``params``."""

    def decorator(factory: EngineFactory) -> EngineFactory:
        ENGINES.register(name)(EngineSpec(name, factory, params, logprobs_exact))
        return factory

    return decorator


def get_engine(name: str) -> EngineSpec:
    import importlib
    import pkgutil

    import verirl.rollout as pkg

    for mod in pkgutil.iter_modules(pkg.__path__):  # every engine module registers itself
        if not mod.name.startswith("_"):
            importlib.import_module(f"verirl.rollout.{mod.name}")
    return ENGINES.get(name)
