"""Moved: the backend base class is the placement of :mod:`verirl.backends.placement`
(registry :data:`~verirl.backends.placement.PLACEMENTS`, ``run.backend``); when rollouts are
produced is a schedule's business (:mod:`verirl.backends.schedules`). This module only
re-exports the old names (``BACKENDS`` is ``PLACEMENTS``, ``register_backend`` is
``register_placement``) so that old imports keep working; it warns once
(``DeprecationWarning``) and will be removed."""

from __future__ import annotations

import warnings

from verirl.backends.placement import PLACEMENTS, Backend, register_placement

warnings.warn(
    "verirl.backends.base moved to verirl.backends.placement", DeprecationWarning, stacklevel=2
)

BACKENDS = PLACEMENTS
register_backend = register_placement

__all__ = ["BACKENDS", "Backend", "register_backend"]
