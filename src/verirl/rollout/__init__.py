"""Rollout engines (transformers, vLLM), prompt formatting and sequence scoring."""

from verirl.rollout.base import Generation, RolloutEngine
from verirl.rollout.prompts import PromptFormatter

__all__ = ["Generation", "PromptFormatter", "RolloutEngine"]
