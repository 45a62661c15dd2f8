"""Joining (or starting) Ray, and what every verirl actor does first.

``connect(address, num_cpus)`` reuses a Ray the process already initialised, else joins
``address`` (``"auto"``: the cluster of ``ray start --head`` on this machine;
``"ray://host:10001"``: a remote one), else starts a private Ray on this machine. Whoever
started Ray shuts it down (:func:`disconnect`), so a test or a run leaves nothing running.

Actors run in fresh worker processes: :func:`actor_setup` gives them the driver's import path
(so a source checkout or a test's plugin module imports there too), imports the run's plugin
modules so their registrations exist, and sets torch's thread count.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from verirl.errors import UserInputError


def require_ray() -> Any:
    """The ``ray`` module, or a clear error saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise UserInputError(
            "the ray placement (or the 'ray' executor) needs Ray: pip install 'verirl[ray]' "
            f"(ray==2.60.0); import failed: {exc}"
        ) from None
    return ray


def connect(address: str | None = None, num_cpus: int | None = None) -> bool:
    """Make sure Ray is initialised; True when this call started it (the caller then owns
    the shutdown). ``address`` None starts a private local Ray with ``num_cpus`` CPUs."""
    ray = require_ray()
    if ray.is_initialized():
        return False
    if address is None:
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # no token under $HOME for a private Ray
        ray.init(
            address="local",
            num_cpus=num_cpus,
            include_dashboard=False,
            log_to_driver=False,
        )
    else:
        try:
            ray.init(address=address, log_to_driver=False)
        except ConnectionError as exc:
            raise UserInputError(
                f"run.placement.params.address: cannot reach a Ray cluster at {address!r} "
                f"({exc}); start one with `ray start --head` or leave it unset for a private "
                "local Ray"
            ) from None
    return True


def disconnect(started: bool) -> None:
    """Shut Ray down if :func:`connect` started it."""
    if started:
        import ray

        if ray.is_initialized():
            ray.shutdown()


@dataclass(frozen=True)
class ActorEnv:
    """What an actor needs to import the driver's code: its ``sys.path``, the run's plugin
    modules, the torch thread count (None: leave torch's default) and the driver's code
    sandbox configuration (a :class:`~verirl.sandbox.SandboxConfig` as JSON)."""

    sys_path: tuple[str, ...]
    plugins: tuple[str, ...] = ()
    threads: int | None = None
    sandbox: str | None = None

    @classmethod
    def here(cls, plugins: Sequence[str] = (), threads: int | None = None) -> ActorEnv:
        from verirl.sandbox import current_sandbox_config

        cwd = os.getcwd()
        paths = [os.path.abspath(p) if p else cwd for p in sys.path]
        sandbox = current_sandbox_config().model_dump_json()
        return cls(tuple(dict.fromkeys(paths)), tuple(plugins), threads, sandbox)


def actor_setup(env: ActorEnv) -> None:
    """Run first in every verirl actor (see the module docstring)."""
    for path in reversed(env.sys_path):
        if path not in sys.path and os.path.isdir(path):
            sys.path.insert(0, path)
    if env.threads:
        import torch

        torch.set_num_threads(env.threads)
    from verirl.registry import load_plugins
    from verirl.sandbox import configure_worker_sandbox

    configure_worker_sandbox(env.sandbox)
    load_plugins(env.plugins)
