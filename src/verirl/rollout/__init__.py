"""Rollout engines (transformers, vLLM), collectors, prompt formatting and sequence scoring.

The built-in engines and collectors are imported on the first lookup of :data:`ENGINES` or
:data:`COLLECTORS` (transformers and the tools load only then)."""

from verirl.rollout.base import ENGINES, Generation, RolloutEngine
from verirl.rollout.collect import COLLECTORS
from verirl.rollout.prompts import PromptFormatter


@ENGINES.builtins
def _engines() -> None:
    from verirl.rollout import hf, vllm_engine  # noqa: F401


@COLLECTORS.builtins
def _collectors() -> None:
    from verirl.rollout import multiturn, tool_episodes  # noqa: F401


__all__ = ["COLLECTORS", "ENGINES", "Generation", "PromptFormatter", "RolloutEngine"]
