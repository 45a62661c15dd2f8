"""Problems → chat messages → prompt token ids (the model's chat template applied)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from verirl.types import Problem

Message = dict[str, str]


@dataclass(frozen=True)
class PromptFormatter:
    """Builds the chat for a problem and tokenizes it with the tokenizer's chat template.

    ``system`` is the system message; ``None`` keeps the template's default (SmolLM2's
    template inserts its own). ``examples`` are (user, assistant) pairs shown before the
    problem as earlier turns of the chat: a few-shot demonstration of the answer format.
    Multi-turn callers pass the conversation so far as ``history``: alternating assistant /
    user messages after the problem's user message.
    """

    tokenizer: Any
    system: str | None = None
    examples: tuple[tuple[str, str], ...] = ()

    def messages(self, problem: Problem, history: Sequence[Message] = ()) -> list[Message]:
        msgs: list[Message] = []
        if self.system is not None:
            msgs.append({"role": "system", "content": self.system})
        for user, assistant in self.examples:  # few-shot demonstrations of the answer format
            msgs.append({"role": "user", "content": user})
            msgs.append({"role": "assistant", "content": assistant})
        msgs.append({"role": "user", "content": problem.prompt})
        msgs.extend(history)
        return msgs

    def encode_messages(self, messages: Sequence[Message]) -> list[int]:
        """Token ids of ``messages`` followed by the assistant generation prompt."""
        out = self.tokenizer.apply_chat_template(
            list(messages), add_generation_prompt=True, tokenize=True, return_dict=False
        )
        if isinstance(out, dict) or hasattr(out, "keys"):
            out = out["input_ids"]
        return [int(t) for t in out]

    def encode(self, problem: Problem, history: Sequence[Message] = ()) -> list[int]:
        return self.encode_messages(self.messages(problem, history))
