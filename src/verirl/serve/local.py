"""Moved: the in-process gym of the episode adapters lives in :mod:`verirl.episodes.local`.
This module only re-exports it so that old imports keep working; it warns once
(``DeprecationWarning``) and will be removed."""

from __future__ import annotations

import warnings

from verirl.episodes.local import MAX_OUTPUT_CHARS, LocalGym

warnings.warn("verirl.serve.local moved to verirl.episodes.local", DeprecationWarning, stacklevel=2)

__all__ = ["MAX_OUTPUT_CHARS", "LocalGym"]
