"""Test-only plugin (``run.plugins``): the vLLM engine's weight load does nothing in the async
producer's process (which imports the run's plugins too). The engine's bookkeeping still
records a sync: only reading vLLM's worker back shows the weights never arrived.

Only a child process is patched: the learner's process is the test runner's, and a patch
there would outlive the test and skip every later vLLM engine's loads in the same session."""

from __future__ import annotations

import multiprocessing
from typing import Any

from verirl.rollout import vllm_engine


def _skip(worker: Any, payload: Any) -> float:
    return 0.0


if multiprocessing.parent_process() is not None:
    vllm_engine._load_weights_cpu = _skip  # type: ignore[assignment]
