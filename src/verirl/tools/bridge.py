"""Token-exact tool episodes: the model's sampled tokens verbatim, and only the glue — what
the environment adds between two model turns — tokenized.

After a model turn the episode appends the tool results (``tool`` messages; a ``user`` message
when the calls could not be read) and the next assistant header. Their tokens come from the
chat template: the conversation is rendered once ending with the assistant turn, once with the
new messages and the generation prompt; the glue is what the second rendering has after the
assistant turn's stop token (so a newline a template writes after the end-of-turn token, as
ChatML does, is part of the glue — not lost, as slicing renders at message boundaries loses it;
TRL #5317, verl #6501). The glue starts right after a special token, so tokenizing it alone
gives the tokens a full rendering has there. When the model was cut off before its stop token,
the glue starts with it.

The bridge requires that appending the new messages leaves everything up to that stop token
as it was (prefix preservation at the model's turn). A template that changes earlier turns
(Qwen3 dropping ``<think>`` from earlier turns) raises :class:`BridgeError`; the template check
(:mod:`verirl.tools.template_check`) finds this before a run. Its stated fallback
(:func:`fallback_glue`) renders the new messages after a minimal conversation instead (TRL's
way): the glue is then right for the new messages, but a fresh rendering of the whole
conversation no longer matches the episode's tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Message = dict[str, Any]


class BridgeError(ValueError):
    """The chat template cannot be bridged at this turn (one line says where and why)."""


@dataclass(frozen=True)
class ChatRenderer:
    """A tokenizer with the chat template and tools an episode renders with."""

    tokenizer: Any
    template: str | None = None
    tools: tuple[dict[str, Any], ...] | None = None

    def text(self, messages: Sequence[Message], add_generation_prompt: bool) -> str:
        out = self.tokenizer.apply_chat_template(
            list(messages),
            tools=list(self.tools) if self.tools else None,
            chat_template=self.template,
            tokenize=False,
            add_generation_prompt=add_generation_prompt,
        )
        if not isinstance(out, str):  # pragma: no cover - tokenize=False returns text
            raise BridgeError("the chat template did not render text")
        return out

    def encode(self, text: str) -> list[int]:
        return [int(t) for t in self.tokenizer.encode(text, add_special_tokens=False)]

    def ids(self, messages: Sequence[Message], add_generation_prompt: bool) -> list[int]:
        return self.encode(self.text(messages, add_generation_prompt))

    def with_tools(self, tools: Sequence[dict[str, Any]] | None) -> ChatRenderer:
        return ChatRenderer(self.tokenizer, self.template, tuple(tools) if tools else None)


def glue_text(
    renderer: ChatRenderer,
    history: Sequence[Message],
    assistant: Message,
    new: Sequence[Message],
    stop: str,
    closed: bool = True,
) -> str:
    """The text between the model's turn ``assistant`` (after ``history``) and its next
    turn: the rest of the turn after the stop token ``stop``, the ``new`` messages and the
    generation prompt. ``closed``: the model sampled the stop token itself."""
    before = renderer.text([*history, assistant], add_generation_prompt=False)
    after = renderer.text([*history, assistant, *new], add_generation_prompt=True)
    cut = before.rfind(stop)
    if cut < 0:
        raise BridgeError(
            f"the chat template does not end an assistant turn with the stop token {stop!r}"
        )
    cut += len(stop)
    if not after.startswith(before[:cut]):
        at = _first_difference(before[:cut], after)
        raise BridgeError(
            "appending the next messages changes the rendering of earlier turns (not "
            f"prefix-preserving) at character {at}: {before[at : at + 40]!r} became "
            f"{after[at : at + 40]!r}"
        )
    glue = after[cut:]
    return glue if closed else stop + glue


def fallback_glue(
    renderer: ChatRenderer, assistant: Message, new: Sequence[Message], stop: str, closed: bool
) -> str:
    """The stated fallback for a template that is not prefix-preserving: the glue rendered
    after a minimal one-message history (the turn's own calls kept, for templates that name
    the results after them)."""
    return glue_text(renderer, [{"role": "user", "content": "."}], assistant, new, stop, closed)


def _first_difference(a: str, b: str) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))
