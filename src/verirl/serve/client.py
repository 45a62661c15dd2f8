"""Moved: the training side's client of a ``verirl serve`` gym lives in
:mod:`verirl.sources.server` (the ``server`` problem source). This module only re-exports it
so that old imports keep working; it warns once (``DeprecationWarning``) and will be removed."""

from __future__ import annotations

import warnings

from verirl.sources.server import (
    MAX_REPLY_BYTES,
    MAX_TASKS_PER_CALL,
    VERIFY_CHUNK,
    GymClient,
    GymServerError,
    ServerTasks,
    ServerVerifier,
    connect,
    server_limits,
)

warnings.warn(
    "verirl.serve.client moved to verirl.sources.server", DeprecationWarning, stacklevel=2
)

__all__ = [
    "MAX_REPLY_BYTES",
    "MAX_TASKS_PER_CALL",
    "VERIFY_CHUNK",
    "GymClient",
    "GymServerError",
    "ServerTasks",
    "ServerVerifier",
    "connect",
    "server_limits",
]
