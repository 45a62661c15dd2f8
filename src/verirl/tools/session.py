"""One tool episode's turn logic, the same on every path.

The local collector, ``verirl serve``'s episodes and TRL's ``environment_factory`` adapter all
take a model turn the same way, through :class:`ToolSession`:

1. the reply is read by the model family's parser (:mod:`verirl.tools.formats`);
2. an unreadable call is a wrong-format turn: the model gets a ``user`` message saying why,
   no tool runs;
3. otherwise each call (up to :data:`MAX_CALLS_PER_TURN`) runs through its toolset, bounded
   in time and output; its result goes back as a ``tool`` message (named, with the call's id);
4. a readable reply without calls is the final answer and ends the episode;
5. the turn joins the canonical transcript (:mod:`verirl.tools.calls`) that the
   environment's verifier replays.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from verirl.tools.calls import ParsedReply, encode_transcript, with_ids
from verirl.tools.formats import ToolFormat
from verirl.tools.toolset import Toolset, merged_tools
from verirl.tools.typed import ToolLimits, ToolResult, error_result
from verirl.types import TURN_SEPARATOR

Message = dict[str, Any]

MAX_CALLS_PER_TURN = 8
"""Calls of one reply that run (later ones get an error result); verifiers that replay a
transcript replay as many."""


@dataclass(frozen=True)
class TurnOutcome:
    """A taken turn: the parsed ``reply`` (calls given ids), the tools' ``results``, the
    ``messages`` the environment answers with (none after a final reply) and ``final``."""

    reply: ParsedReply
    results: tuple[ToolResult, ...]
    messages: tuple[Message, ...]
    final: bool

    @property
    def observation(self) -> str:
        """The results as one text (for logs and plain-text clients)."""
        return "\n".join(str(m["content"]) for m in self.messages)


class ToolSession:
    """The tools and transcript of one episode; see the module docstring."""

    def __init__(
        self,
        toolsets: Sequence[Toolset],
        fmt: ToolFormat,
        limits: ToolLimits | None = None,
        separator: str | None = None,
    ) -> None:
        self.toolsets = list(toolsets)
        self.fmt = fmt
        self.limits = limits or ToolLimits()
        self.separator = TURN_SEPARATOR if separator is None else separator
        self.tools = merged_tools(self.toolsets)
        self.replies: list[ParsedReply] = []

    def schemas(self) -> list[dict[str, Any]]:
        return [t.schema for _, t in self.tools.values()]

    def demonstration(self) -> list[Message]:
        return [m for ts in self.toolsets for m in ts.demonstration()]

    def take_turn(self, text: str) -> TurnOutcome:
        """Read the model's reply ``text`` and answer it (module docstring); never raises."""
        reply = with_ids(self.fmt.parse(text), len(self.replies) + 1)
        self.replies.append(reply)
        if reply.error is not None:
            note = {
                "role": "user",
                "content": f"error: the tool call could not be read ({reply.error})",
            }
            return TurnOutcome(reply, (), (note,), False)
        if not reply.calls:
            return TurnOutcome(reply, (), (), True)
        results = []
        for i, call in enumerate(reply.calls):
            if i >= MAX_CALLS_PER_TURN:
                results.append(
                    error_result(
                        call.name,
                        f"more than {MAX_CALLS_PER_TURN} calls in one reply; this one was not run",
                        self.limits,
                        refused=True,
                    )
                )
            elif call.name not in self.tools:
                known = ", ".join(sorted(self.tools)) or "(none)"
                reason = f"unknown tool {call.name!r}; tools: {known}"
                results.append(error_result(call.name, reason, self.limits, refused=True))
            else:
                results.append(self.tools[call.name][1].call(call.arguments, self.limits))
        messages = tuple(
            _tool_message(c.name, c.id, r) for c, r in zip(reply.calls, results, strict=True)
        )
        return TurnOutcome(reply, tuple(results), messages, False)

    def transcript(self, replies: Sequence[ParsedReply] | None = None) -> str:
        """The canonical transcript of the turns so far (or of ``replies``)."""
        return encode_transcript(self.replies if replies is None else replies, self.separator)

    def close(self) -> None:
        for ts in self.toolsets:
            with contextlib.suppress(Exception):  # closing must not fail an episode
                ts.close()


def _tool_message(name: str, call_id: str | None, result: ToolResult) -> Message:
    msg: Message = {"role": "tool", "name": name, "content": result.text}
    if call_id is not None:
        msg["tool_call_id"] = call_id
    return msg
