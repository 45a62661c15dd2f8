"""The rollout engine interface: token ids in, sampled continuations with log-probs out.

The trainer talks to an engine only through :class:`RolloutEngine`, and builds it by name from
the engine registry (``rollout.engine: {name: hf, params: ...}``), so a vLLM (or any other)
backend can replace the transformers one without touching the loop. An engine knows nothing
about problems or rewards; :mod:`verirl.rollout.prompts` turns problems into prompt ids.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from verirl.registry import Registry, Spec
from verirl.types import FinishReason, SamplingParams

if TYPE_CHECKING:
    from verirl.rollout.scoring import SequenceScorer


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


OnFinish = Callable[[int, int, "Generation"], None]
"""``on_finish(prompt, sample, generation)``: called by an engine that streams its results
(``streams_finished``) as each sequence ends — ``prompt`` indexes the call's prompts,
``sample`` the prompt's ``n`` samples."""


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


@runtime_checkable
class Sleeps(Protocol):
    """An engine that can free its memory while the learner updates (vLLM on a GPU: the KV
    cache and its weight copy) and wakes on its next call."""

    def sleep(self) -> None: ...


@runtime_checkable
class HoldsOwnWeights(Protocol):
    """An engine that samples from a copy of the weights of its own (vLLM's worker): a weight
    sync is checked by reading that copy back."""

    def weights_mismatch(self, model: Any = None) -> list[str]:
        """The parameter names whose copy differs from ``model``'s (default: the module the
        engine syncs from); empty when the engine samples with exactly those weights."""
        ...


@runtime_checkable
class ScoresSequences(Protocol):
    """An engine that scores given sequences on its own weights (``reward.params.scorer:
    engine``: vLLM's prompt log-probs)."""

    def sequence_scorer(self) -> SequenceScorer: ...


# ---- the engine registry -------------------------------------------------------------------
def generate_streaming(
    engine: RolloutEngine,
    prompts: Sequence[Sequence[int]],
    sampling: SamplingParams,
    on_finish: OnFinish | None,
) -> list[list[Generation]]:
    """``engine.generate``, with ``on_finish`` called for every sequence: as it ends when the
    engine streams (``streams_finished``), else for all of them after the call."""
    if on_finish is None:
        return engine.generate(prompts, sampling)
    if getattr(engine, "streams_finished", False):
        return engine.generate(prompts, sampling, on_finish=on_finish)  # type: ignore[call-arg]
    groups = engine.generate(prompts, sampling)
    for p, group in enumerate(groups):
        for j, gen in enumerate(group):
            on_finish(p, j, gen)
    return groups


Exactness = bool | Callable[[Any], bool]


@dataclass(frozen=True)
class EngineSpec(Spec[Callable[..., RolloutEngine]]):
    """A registered engine, built as ``build(params, model, tokenizer, placement, seed)``.
    Beside what every :class:`~verirl.registry.Spec` holds it declares ``logprobs_exact``:
    whether its sampling log-probs are the learner's own (an engine that runs the learner's
    module, like ``hf``), or a function of its parsed parameters that says so (``hf`` with a
    low-precision copy is not); when not (vLLM's kernels), ``optim.old_logprobs = auto``
    recomputes π_old with the learner."""

    logprobs_exact: Exactness = True

    def exact_logprobs(self, params: Any = None) -> bool:
        """Whether the engine built with ``params`` (its config section) samples with the
        learner's own log-probs."""
        if callable(self.logprobs_exact):
            return bool(self.logprobs_exact(self.parse(params or {})))
        return self.logprobs_exact


ENGINES: Registry[EngineSpec] = Registry("rollout engine", EngineSpec)
"""Engines by name (``rollout.engine``): ``spec.build(params, model, tokenizer, placement,
seed)``; an engine registers with ``@ENGINES.register(name, params, logprobs_exact=...)``."""
