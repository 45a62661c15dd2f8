"""Moved: the Trainer lives in :mod:`verirl.trainer` (above the backends). This module only
re-exports it so that ``from verirl.train.loop import Trainer`` keeps working; it warns once
(``DeprecationWarning``) and will be removed."""

from __future__ import annotations

import warnings

from verirl.trainer import StepOutput, Trainer, new_run_dir, summary_json

warnings.warn("verirl.train.loop moved to verirl.trainer", DeprecationWarning, stacklevel=2)

__all__ = ["StepOutput", "Trainer", "new_run_dir", "summary_json"]
