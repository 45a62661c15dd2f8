"""Backends: where the loop's parts run (this process, torchrun ranks, Ray actors) and whether
rollouts are produced synchronously or by an asynchronous producer with bounded staleness."""

from __future__ import annotations

import os

from verirl.backends.base import BACKENDS, Backend, BackendSpec, register_backend
from verirl.config import TrainConfig
from verirl.device import Placement
from verirl.errors import UserInputError


def backend_name(cfg: TrainConfig, environ: dict[str, str] | None = None) -> str:
    """The registered backend a run uses: ``run.backend`` (``local`` becomes ``torchrun``
    inside a torchrun group of more than one process), with ``-async`` when ``run.async``
    sets a staleness bound."""
    env = os.environ if environ is None else environ
    name: str = cfg.run.backend
    if name == "local" and int(env.get("WORLD_SIZE", "1")) > 1:
        name = "torchrun"
    if cfg.run.async_.max_staleness is not None:
        name += "-async"
    return name


def select(
    cfg: TrainConfig, placement: Placement, environ: dict[str, str] | None = None
) -> Backend:
    """Build the backend :func:`backend_name` names."""

    import verirl.backends.async_local
    import verirl.backends.ray
    import verirl.backends.torchrun  # noqa: F401  (they register themselves)

    name = backend_name(cfg, environ)
    if name not in BACKENDS:
        raise UserInputError(
            f"no backend {name!r}: run.async runs on run.backend=local (one process, not "
            "under torchrun: a data-parallel learner group there would need every rank to "
            "take its batch from the one producer) or run.backend=ray "
            f"(known: {', '.join(BACKENDS.names())})"
        )
    return BACKENDS.get(name).factory(cfg, placement)


__all__ = ["BACKENDS", "Backend", "BackendSpec", "backend_name", "register_backend", "select"]
