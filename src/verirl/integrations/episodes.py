"""Moved: the episode API of the adapters lives in :mod:`verirl.episodes` (and the in-process
episodes in :mod:`verirl.episodes.local`), renamed for what they are: ``CurriculumSource`` is
:class:`~verirl.episodes.Episodes`, ``LocalSource`` is
:class:`~verirl.episodes.local.LocalEpisodes`. This module only re-exports them under both
names so that old imports keep working; it warns once (``DeprecationWarning``) and will be
removed."""

from __future__ import annotations

import warnings

from verirl.episodes import (
    MAX_OUTPUT_CHARS,
    Episodes,
    EpisodeSession,
    EpisodeStart,
    GymSession,
    StepOutcome,
    explicit_task,
    tool_call_reply,
)
from verirl.episodes.local import LocalEpisodes, LocalSession

warnings.warn(
    "verirl.integrations.episodes moved to verirl.episodes", DeprecationWarning, stacklevel=2
)

CurriculumSource = Episodes
LocalSource = LocalEpisodes

__all__ = [
    "MAX_OUTPUT_CHARS",
    "CurriculumSource",
    "EpisodeSession",
    "EpisodeStart",
    "Episodes",
    "GymSession",
    "LocalEpisodes",
    "LocalSession",
    "LocalSource",
    "StepOutcome",
    "explicit_task",
    "tool_call_reply",
]
