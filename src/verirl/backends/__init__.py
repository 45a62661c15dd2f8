"""Backends: a placement × a schedule, each chosen as ``{name, params}``.

- placement (``run.placement``, :data:`PLACEMENTS`): where the loop's parts run — ``local``
  (this process), ``torchrun`` (one rank of a data-parallel learner group: ``local`` becomes
  it under torchrun), or a plug-in's: ``ray`` (actors; :mod:`verirl.integrations.ray`, found
  by its entry point) (:mod:`verirl.backends.placement`);
- schedule (``run.schedule``, :data:`SCHEDULES`): when rollouts are produced — ``synchronous``
  or ``bounded_staleness`` (``params.max_staleness``), or a plug-in's
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
)
from verirl.backends.schedules import (
    SCHEDULES,
    BoundedStaleness,
    BoundedStalenessParams,
    Schedule,
    build_schedule,
)
from verirl.backends.torchrun import TorchrunBackend


def placement_name(name: str, environ: Mapping[str, str] | None = None) -> str:
    """The placement a run uses: ``run.placement.name``, with ``local`` becoming
    ``torchrun`` inside a torchrun group of more than one process."""
    env = os.environ if environ is None else environ
    if name == "local" and int(env.get("WORLD_SIZE", "1")) > 1:
        return "torchrun"
    return name


__all__ = [
    "PLACEMENTS",
    "SCHEDULES",
    "Backend",
    "BackendSettings",
    "BoundedStaleness",
    "BoundedStalenessParams",
    "LocalBackend",
    "RolloutStream",
    "Schedule",
    "TorchrunBackend",
    "build_placement",
    "build_schedule",
    "placement_name",
]
