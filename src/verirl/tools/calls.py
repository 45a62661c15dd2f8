"""Tool calls as data: what a parser reads out of a reply, and the canonical transcript a
tool environment's verifier replays.

A model family writes its calls its own way (``<tool_call>`` JSON, ``[TOOL_CALLS]``, a bare
JSON object); a parser (:mod:`verirl.tools.formats`) turns a reply into a
:class:`ParsedReply`: the text around the calls, the calls, or the reason they could not be
read. The verifier of a tool environment must not depend on the family, so episodes hand it
the *canonical transcript*: one JSON object per model turn,

    {"content": "...", "calls": [{"name": "files_write", "arguments": {...}}]}
    {"error": "<tool_call> is not closed"}                 (an unreadable call)

joined by the environment package's turn separator. The verifier replays the calls (it never
trusts a recorded observation), so every path — the local loop, ``verirl serve``, TRL —
gets the same verdict for the same calls.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

MAX_TURNS_READ = 200
"""At most this many turns of a transcript are read (a hostile transcript stays bounded)."""


@dataclass(frozen=True)
class ToolCall:
    """One call: the tool's ``name`` and its ``arguments`` as the model wrote them (a JSON
    object; anything else is refused by the tool, as an observation); ``id`` when the model or
    the loop named the call (templates such as Mistral's pair results by id)."""

    name: str
    arguments: Any = field(default_factory=dict)
    id: str | None = None

    def chat(self) -> dict[str, Any]:
        """The call as a chat message's ``tool_calls`` entry (OpenAI format)."""
        out: dict[str, Any] = {
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }
        if self.id is not None:
            out["id"] = self.id
        return out

    def plain(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments}


@dataclass(frozen=True)
class ParsedReply:
    """A reply read by a tool-call parser: its ``content`` (the text outside the calls), its
    ``calls``, and ``error`` when a call was started but cannot be read (wrong format)."""

    content: str = ""
    calls: tuple[ToolCall, ...] = ()
    error: str | None = None

    @property
    def readable(self) -> bool:
        return self.error is None

    @property
    def final(self) -> bool:
        """A readable reply without calls: the model's final answer, ending the episode."""
        return self.error is None and not self.calls

    def message(self, raw: str = "") -> dict[str, Any]:
        """The assistant message for the chat history: content and structured calls, or the
        ``raw`` text as content when the calls could not be read."""
        if self.error is not None:
            return {"role": "assistant", "content": raw}
        msg: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.calls:
            msg["tool_calls"] = [c.chat() for c in self.calls]
        return msg


def with_ids(reply: ParsedReply, turn: int) -> ParsedReply:
    """``reply`` with an id on every call that has none: nine digits (turn, call), the form
    Mistral's templates accept."""
    if all(c.id is not None for c in reply.calls):
        return reply
    calls = tuple(
        c if c.id is not None else ToolCall(c.name, c.arguments, f"{turn % 10000:04d}{i:05d}")
        for i, c in enumerate(reply.calls)
    )
    return ParsedReply(reply.content, calls, reply.error)


# ---- the canonical transcript ------------------------------------------------------------
def encode_turn(reply: ParsedReply) -> str:
    """One turn of the canonical transcript (one line of JSON)."""
    if reply.error is not None:
        return json.dumps({"error": reply.error}, ensure_ascii=False)
    return json.dumps(
        {"content": reply.content, "calls": [c.plain() for c in reply.calls]},
        ensure_ascii=False,
    )


def encode_transcript(replies: Sequence[ParsedReply], separator: str) -> str:
    return separator.join(encode_turn(r) for r in replies)


def decode_turn(text: str) -> ParsedReply:
    """The turn :func:`encode_turn` wrote (the first JSON object in ``text``; text around
    it is ignored); anything else is an unreadable turn (never raises)."""
    start = text.find("{")
    try:
        obj, _ = json.JSONDecoder().raw_decode(text, max(start, 0))
    except (ValueError, RecursionError):
        return ParsedReply(error="a turn of the transcript is not one JSON object")
    if not isinstance(obj, dict):
        return ParsedReply(error="a turn of the transcript is not one JSON object")
    if "error" in obj:
        return ParsedReply(error=str(obj["error"])[:300] or "unreadable")
    content = obj.get("content", "")
    calls = obj.get("calls", [])
    if not isinstance(content, str) or not isinstance(calls, list):
        return ParsedReply(error='a turn is {"content": str, "calls": [...]}')
    out = []
    for c in calls:
        if not (isinstance(c, dict) and isinstance(c.get("name"), str)):
            return ParsedReply(error='a call is {"name": str, "arguments": {...}}')
        args = c.get("arguments", {})
        out.append(ToolCall(c["name"], args))
    return ParsedReply(content, tuple(out))


def decode_transcript(text: str, separator: str) -> list[ParsedReply]:
    """The turns of a canonical transcript (at most :data:`MAX_TURNS_READ`)."""
    if not isinstance(text, str):
        return [ParsedReply(error="the transcript is not text")]
    return [decode_turn(t) for t in text.split(separator)[:MAX_TURNS_READ]]
