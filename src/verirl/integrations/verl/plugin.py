"""verl's plug-in hook: importing this module registers verirl's reward managers and
advantage estimators in verl's registries (verl imports it through the ``verl.plugins`` entry
point on ``import verl``, in the driver and in every Ray worker)."""

from __future__ import annotations

from verirl.integrations.verl import advantage, reward

__all__ = ["advantage", "reward"]
