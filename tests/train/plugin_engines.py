"""A test-only rollout engine, loaded through ``run.plugins``: it answers every prompt with a
fixed text (tokenized), so a training run can put real proofs in front of a real checker."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from verirl.rollout.base import ENGINES, Generation
from verirl.types import SamplingParams


class FixedTextParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    texts: list[str] = ["```coq\nProof. reflexivity. Qed.\n```"]


class FixedTextEngine:
    def __init__(self, params: FixedTextParams, tokenizer: Any) -> None:
        self.texts = params.texts
        self.tokenizer = tokenizer
        self.calls = 0

    def generate(
        self, prompts: Sequence[Sequence[int]], sampling: SamplingParams
    ) -> list[list[Generation]]:
        out = []
        for _ in prompts:
            group = []
            for _ in range(sampling.n):
                text = self.texts[self.calls % len(self.texts)]
                self.calls += 1
                ids = tuple(self.tokenizer.encode(text, add_special_tokens=False))
                group.append(Generation(ids, (-1.0,) * len(ids), text, "stop"))
            out.append(group)
        return out

    def sync_weights(self) -> None:
        return None

    def state_dict(self) -> dict[str, Any]:
        return {"calls": self.calls}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.calls = int(state["calls"])


@ENGINES.register("test_fixed_text", FixedTextParams)
def build(params: FixedTextParams, model: Any, tokenizer: Any, placement: Any, seed: int) -> Any:
    return FixedTextEngine(params, tokenizer)
