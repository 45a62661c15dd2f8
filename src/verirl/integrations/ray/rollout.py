"""Rollout workers: N replicas of any registered engine (``rollout.engine``: ``hf``, ``vllm``,
a plugin's) as Ray actors, behind the :class:`~verirl.rollout.base.RolloutEngine` interface.

Each :class:`RolloutReplica` builds the policy its :class:`ReplicaSpec` names, takes the driver's
weights, and builds ``rollout.engine`` over it with seed ``run.seed + rank`` (so one replica
samples exactly what the local engine samples). ``generate`` shards the prompts into
contiguous slices, one per replica, and concatenates the answers in order. ``sync_weights``
(called by the loop after every learner update) hands every replica the learner group's
rank-0 weights, already in the object store (or puts the driver's weights there once), then
calls its engine's own ``sync_weights`` (a no-op for ``hf``, a weight reload for an engine
that keeps its own copy). Its cost — seconds and megabytes — is reported by
:meth:`RayRolloutEngine.metrics` and logged every step (``ray/weight_sync_s``,
``ray/weight_sync_mb``, ``ray/generate_s``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch

from verirl.backends.placement import BackendSettings
from verirl.backends.staleness import merged_checksum
from verirl.integrations.ray.cluster import ActorEnv, actor_setup
from verirl.integrations.ray.learner import (
    as_tensor,
    get_or_lost,
    load_trainable,
    trainable_state,
)
from verirl.integrations.ray.settings import RayParams
from verirl.models import PolicySpec, build_policy
from verirl.rollout.base import ENGINES, Generation, HoldsOwnWeights
from verirl.train.health import checksum_mismatch, weights_checksum
from verirl.types import SamplingParams


@dataclass(frozen=True)
class ReplicaSpec:
    """What an engine replica needs: the policy to build and the engine (``rollout.engine``)."""

    policy: PolicySpec
    engine: str
    engine_params: dict[str, Any]

    @classmethod
    def from_settings(cls, settings: BackendSettings) -> ReplicaSpec:
        e = settings.engine
        return cls(settings.policy, e.name, dict(e.params))


class RolloutReplica:
    """One engine replica (run as a Ray actor)."""

    def __init__(
        self,
        env: ActorEnv,
        spec: ReplicaSpec,
        weights: Mapping[str, np.ndarray],
        rank: int,
    ) -> None:
        actor_setup(env)
        self.model, tokenizer, placement = build_policy(spec.policy)
        load_trainable(self.model, weights)
        self.engine = ENGINES.get(spec.engine).build(
            spec.engine_params, self.model, tokenizer, placement, spec.policy.seed + rank
        )

    def generate(
        self, prompts: Sequence[Sequence[int]], sampling: SamplingParams
    ) -> list[list[Generation]]:
        return self.engine.generate(prompts, sampling)

    def load_weights(self, weights: Mapping[str, np.ndarray], merged: int = 0) -> float:
        """Load the learner's weights and sync the engine; return ``sync/mismatch``: the
        relative difference between the checksums of the weights sent and of the weights
        this replica's policy now holds (0.0 when they landed). ``merged``: the learner's
        :func:`~verirl.backends.staleness.merged_checksum` (LoRA: the merged weights
        W + s·BA); when given and this replica's differs, 1.0 (the adapters may have landed
        while what the engine samples with — scaling, active adapters — did not). An engine
        with a copy of its own (vLLM) is read back: 1.0 when that copy differs."""
        load_trainable(self.model, weights)
        self.engine.sync_weights()
        params = dict(self.model.named_parameters())
        sent = weights_checksum(as_tensor(v, params[n].dtype) for n, v in weights.items())
        held = weights_checksum(params[n] for n in weights)
        if merged and merged_checksum(self.model) != merged:
            return 1.0
        # an engine with weights of its own (vLLM's worker) is read back and compared with
        # the policy it synced from: a load that never reached the engine is a mismatch
        if isinstance(self.engine, HoldsOwnWeights) and self.engine.weights_mismatch(self.model):
            return 1.0
        return checksum_mismatch(held, sent)

    def state_dict(self) -> dict[str, Any]:
        return dict(self.engine.state_dict())

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.engine.load_state_dict(state)

    def weights(self) -> dict[str, np.ndarray]:
        return trainable_state(self.model)

    def pid(self) -> int:
        import os

        return os.getpid()


def shards(n: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` contiguous ``[start, end)`` slices of ``range(n)``, sizes differing by ≤ 1
    (empty slices dropped)."""
    base, extra = divmod(n, parts)
    out, start = [], 0
    for k in range(parts):
        end = start + base + (1 if k < extra else 0)
        if end > start:
            out.append((start, end))
        start = end
    return out


class RayRolloutEngine:
    """The driver's handle on the replicas (see the module docstring)."""

    def __init__(
        self,
        settings: BackendSettings,
        model: torch.nn.Module,
        weights_ref: Callable[[], Any] | None = None,
    ) -> None:
        import ray

        self.model = model
        self._weights_ref = weights_ref  # the learner group's latest weights, if it has them
        res = RayParams.of(settings).rollout
        env = ActorEnv.here(settings.plugins, settings.threads)
        cls: Any = ray.remote(RolloutReplica)
        weights = ray.put(trainable_state(model))
        spec = ReplicaSpec.from_settings(settings)
        self.replicas: list[Any] = [
            cls.options(num_cpus=res.num_cpus, num_gpus=res.num_gpus, max_restarts=0).remote(
                env, spec, weights, rank
            )
            for rank in range(res.workers)
        ]
        self._cost = {"weight_sync_s": 0.0, "weight_sync_mb": 0.0, "generate_s": 0.0}
        self._mismatch: float | None = None  # after the last sync: max over the replicas

    def _get(self, refs: Any, what: str) -> Any:
        return get_or_lost(refs, f"a rollout replica was lost during {what}")

    def generate(
        self, prompts: Sequence[Sequence[int]], sampling: SamplingParams
    ) -> list[list[Generation]]:
        t0 = time.perf_counter()
        refs = []
        for k, (a, b) in enumerate(shards(len(prompts), len(self.replicas))):
            s = sampling if sampling.seed is None else replace(sampling, seed=sampling.seed + k)
            refs.append(self.replicas[k].generate.remote([list(p) for p in prompts[a:b]], s))
        out = [g for part in self._get(refs, "generation") for g in part]
        self._cost["generate_s"] += time.perf_counter() - t0
        return out

    def sync_weights(self) -> None:
        import ray

        ref = self._weights_ref() if self._weights_ref is not None else None
        if ref is None:
            ref = ray.put(trainable_state(self.model))
        self.sync_weights_to(ref, merged_checksum(self.model))  # the driver's = the learner's

    def sync_weights_to(self, ref: Any, merged: int = 0) -> float:
        """Every replica loads the weights ``ref`` holds (an object-store reference to a
        trainable-weights dict) and checks them (``merged``: the learner's merged-LoRA
        checksum, 0 without LoRA); returns ``sync/mismatch``, the largest relative checksum
        gap between what was sent and what a replica holds (0.0 when they all landed)."""
        t0 = time.perf_counter()
        gaps = self._get(
            [r.load_weights.remote(ref, merged) for r in self.replicas], "a weight sync"
        )
        self._mismatch = max(gaps, default=0.0)
        self._cost["weight_sync_s"] += time.perf_counter() - t0
        self._cost["weight_sync_mb"] += sum(
            p.numel() * p.element_size() for p in self.model.parameters() if p.requires_grad
        )
        return self._mismatch

    def metrics(self, reset: bool = True) -> dict[str, float]:
        """Seconds generating and syncing weights, and megabytes sent, since the last reset."""
        out = {f"ray/{k}": v for k, v in self._cost.items()}
        out["ray/weight_sync_mb"] /= 1e6
        if self._mismatch is not None:  # read by the weight_mismatch health detector
            out["sync/mismatch"] = self._mismatch
        if reset:
            self._cost = dict.fromkeys(self._cost, 0.0)
        return out

    def state_dict(self) -> dict[str, Any]:
        return {"replicas": self._get([r.state_dict.remote() for r in self.replicas], "a save")}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore each replica's engine state, and give every replica the driver's weights
        (a resumed run restored them into the driver's policy)."""
        import ray

        ref = ray.put(trainable_state(self.model))
        self._get([r.load_weights.remote(ref) for r in self.replicas], "a restore")
        saved = state.get("replicas")
        if saved is None:  # a local engine's state: the first replica continues it
            saved = [state, *(None for _ in self.replicas[1:])]
        if not isinstance(saved, list) or len(saved) != len(self.replicas):
            return  # another replica count: each replica keeps its own seed's stream
        pairs = [(r, s) for r, s in zip(self.replicas, saved, strict=True) if s is not None]
        self._get([r.load_state_dict.remote(s) for r, s in pairs], "a restore")

    def pids(self) -> list[int]:
        return [int(p) for p in self._get([r.pid.remote() for r in self.replicas], "a query")]

    def replica_weights(self) -> list[dict[str, torch.Tensor]]:
        """Each replica's trainable weights (for checks), as tensors of the driver's dtypes."""
        dtypes = {n: p.dtype for n, p in self.model.named_parameters()}
        return [
            {n: as_tensor(a, dtypes[n]) for n, a in w.items()}
            for w in self._get([r.weights.remote() for r in self.replicas], "a query")
        ]

    def close(self) -> None:
        import ray

        for r in self.replicas:
            ray.kill(r, no_restart=True)
        self.replicas = []
