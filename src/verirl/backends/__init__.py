"""Backends: a placement × a schedule.

- placement (``run.backend``, :data:`PLACEMENTS`): where the loop's parts run — ``local``
  (this process), ``torchrun`` (one rank of a data-parallel learner group: ``local`` becomes
  it under torchrun), ``ray`` (actors; :mod:`verirl.integrations.ray.placement`, registered
  here by its import path), or a plug-in's (:mod:`verirl.backends.placement`);
- schedule (``run.schedule``, :data:`SCHEDULES`): when rollouts are produced — ``synchronous``
  or ``bounded_staleness`` (``run.async.max_staleness``), or a plug-in's
  (:mod:`verirl.backends.schedules`).

A backend places parts and follows; it never drives the trainer (:mod:`verirl.trainer`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from verirl.backends.local import LocalBackend
from verirl.backends.placement import (
    PLACEMENTS,
    Backend,
    BackendSettings,
    RolloutStream,
    build_placement,
    register_placement,
)
from verirl.backends.schedules import (
    SCHEDULES,
    BoundedStaleness,
    Schedule,
    build_schedule,
    register_schedule,
    schedule_name,
)
from verirl.backends.torchrun import TorchrunBackend
from verirl.registry import Spec

# Ray is a plug-in: its placement lives in verirl.integrations.ray and is named, not imported.
RAY_PLACEMENT = "verirl.integrations.ray.placement:RayBackend"
PLACEMENTS.add(
    Spec("ray", RAY_PLACEMENT, description="verifier actors, engine replicas, a learner group")
)


def placement_name(backend: str, environ: Mapping[str, str] | None = None) -> str:
    """The placement a run uses: ``run.backend``, with ``local`` becoming ``torchrun``
    inside a torchrun group of more than one process."""
    env = os.environ if environ is None else environ
    if backend == "local" and int(env.get("WORLD_SIZE", "1")) > 1:
        return "torchrun"
    return backend


__all__ = [
    "PLACEMENTS",
    "RAY_PLACEMENT",
    "SCHEDULES",
    "Backend",
    "BackendSettings",
    "BoundedStaleness",
    "LocalBackend",
    "RolloutStream",
    "Schedule",
    "TorchrunBackend",
    "build_placement",
    "build_schedule",
    "placement_name",
    "register_placement",
    "register_schedule",
    "schedule_name",
]
