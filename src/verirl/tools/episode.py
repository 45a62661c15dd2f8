"""The tokens of one tool episode, built the same way wherever the episode runs.

:class:`TokenEpisode` holds the prompt's ids and, turn by turn, the model's sampled ids
verbatim followed by the glue to the next turn (:mod:`verirl.tools.bridge`), with the loss
mask (1 on the model's tokens, 0 on the glue), the behaviour log-probs (0.0 on the glue) and
each turn's span. The ``tool_calls`` collector builds its episodes with it, and so can a
client of ``verirl serve`` (the server answers each reply with the messages to append): one
builder, so the same replies give the same tokens on every path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from verirl.tools.bridge import BridgeError, ChatRenderer, fallback_glue, glue_text

Message = dict[str, Any]


@dataclass
class TokenEpisode:
    """See the module docstring. ``messages`` is the conversation so far (the prompt's
    messages, then each turn's assistant message and what answered it); ``fallback``: when
    the bridge cannot keep earlier turns unchanged, glue with the stated fallback instead of
    raising :class:`~verirl.tools.bridge.BridgeError`."""

    renderer: ChatRenderer
    messages: list[Message]
    stop: str
    stop_id: int
    fallback: bool = False
    prompt: tuple[int, ...] = ()
    response: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    mask: list[int] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)
    fallbacks: int = 0

    def __post_init__(self) -> None:
        if not self.prompt:
            self.prompt = tuple(self.renderer.ids(self.messages, add_generation_prompt=True))

    def context(self) -> list[int]:
        """The ids the model's next turn is sampled after."""
        return [*self.prompt, *self.response]

    def add_turn(self, sampled: Sequence[int], logprobs: Sequence[float] | None = None) -> int:
        """Append a turn's sampled ids verbatim; returns where they start in ``response``."""
        start = len(self.response)
        self.response.extend(int(t) for t in sampled)
        self.logprobs.extend(float(x) for x in (logprobs or [0.0] * len(sampled)))
        self.mask.extend([1] * len(sampled))
        self.spans.append((start, len(self.response)))
        return start

    def close_turn(self, assistant: Message, new: Sequence[Message] = ()) -> bool:
        """Record the last turn's ``assistant`` message and, when the episode goes on, the
        ``new`` messages that answer it with the glue to the next turn. Returns False when no
        glue can be built (the episode must end)."""
        if not new:
            self.messages.append(assistant)
            return True
        closed = bool(self.spans) and self._last_sampled() == self.stop_id
        try:
            glue = glue_text(self.renderer, self.messages, assistant, list(new), self.stop, closed)
        except BridgeError:
            if not self.fallback:
                raise
            try:
                glue = fallback_glue(self.renderer, assistant, list(new), self.stop, closed)
            except BridgeError:
                self.messages.append(assistant)
                return False
            self.fallbacks += 1
        ids = self.renderer.encode(glue)
        self.response.extend(ids)
        self.logprobs.extend([0.0] * len(ids))
        self.mask.extend([0] * len(ids))
        self.messages += [assistant, *new]
        return True

    def _last_sampled(self) -> int | None:
        start, end = self.spans[-1]
        return self.response[end - 1] if end > start else None
