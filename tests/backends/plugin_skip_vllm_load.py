"""Test-only plugin (``run.plugins``): the vLLM engine's weight load does nothing, in every
process that imports it (the async producer imports the run's plugins too). The engine's
bookkeeping still records a sync: only reading vLLM's worker back shows the weights never
arrived."""

from __future__ import annotations

from typing import Any

from verirl.rollout import vllm_engine


def _skip(worker: Any, payload: Any) -> float:
    return 0.0


vllm_engine._load_weights_cpu = _skip  # type: ignore[assignment]
