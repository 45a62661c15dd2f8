"""The apps of ``tool_world`` as typed tools: the ``tool_world`` toolset
(:class:`ToolWorldApps`), the replay its verifier runs, and canonical transcripts of calls.

Each method of :class:`ToolWorldApps` is a tool (a typed Python function with a docstring:
its schema comes from transformers' ``get_json_schema``) acting on one episode's copy of the
world; a bad call raises :class:`~verirl.tools.typed.ToolError` — the observation
``error: ...`` — and changes nothing. The verifier replays a transcript's calls through the
same tools (:func:`replay`), so an observation the model saw and the state the verifier checks
come from the same code.
"""

from __future__ import annotations

import copy
from typing import Any

from verirl.tools.calls import ParsedReply, ToolCall, decode_transcript, encode_transcript
from verirl.tools.session import MAX_CALLS_PER_TURN
from verirl.tools.toolset import TOOLSETS, Toolset, tool_names
from verirl.tools.typed import Tool, ToolError, ToolLimits
from verirl.types import TURN_SEPARATOR

MAX_CALLS = 200
"""At most this many calls of a transcript are replayed."""

NAMES = ["ann", "bob", "cyd", "dee", "eli", "fay", "gus", "hal", "ivy", "jon", "kim", "lou"]
ITEMS = ["lamp", "mug", "pen", "desk", "chair", "book", "cable", "plant", "clock", "fan"]
TITLES = ["dentist", "standup", "lunch", "gym", "review", "call", "yoga", "dinner", "demo"]
WORDS = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "zeta"]
_REPLAY_LIMITS = ToolLimits(timeout_s=5.0, max_output_chars=1500)


# ---- the world's apps, as typed tools ---------------------------------------------------------
APPS: tuple[str, ...] = ("files", "calendar", "contacts", "shop")
"""The apps; a tool's name starts with its app's (``files_read``)."""


@TOOLSETS.register("tool_world")
class ToolWorldApps(Toolset):
    """The apps of one ``tool_world`` episode: each method is a tool acting on this episode's
    copy of the world. A bad call raises :class:`~verirl.tools.typed.ToolError` (the
    observation ``error: ...``) and changes nothing. ``tools``: the tools offered, by name
    (all when ``None``); any other is an unknown tool."""

    def __init__(self, world: dict[str, Any], tools: list[str] | None = None) -> None:
        self.world = copy.deepcopy(world)
        self.offered = None if tools is None else frozenset(tools)

    def tools(self) -> dict[str, Tool]:
        every = super().tools()
        if self.offered is None:
            return every
        return {name: t for name, t in every.items() if name in self.offered}

    def files_list(self) -> list[str]:
        """List the paths of all files.

        Returns:
            The paths, sorted.
        """
        return sorted(self.world["files"])

    def files_read(self, path: str) -> str:
        """Read a file.

        Args:
            path: The file's path.
        """
        files = self.world["files"]
        if path not in files:
            raise ToolError("no such file")
        return str(files[path])

    def files_write(self, path: str, content: str) -> str:
        """Create or overwrite a file.

        Args:
            path: The file's path.
            content: The new content (at most 1000 characters).
        """
        if len(content) > 1000:
            raise ToolError("content longer than 1000 characters")
        self.world["files"][path] = content
        return "ok"

    def files_delete(self, path: str) -> str:
        """Delete a file.

        Args:
            path: The file's path.
        """
        if self.world["files"].pop(path, None) is None:
            raise ToolError("no such file")
        return "ok"

    def calendar_list(self, day: int) -> list[dict[str, Any]]:
        """List the calendar events of one day.

        Args:
            day: The day of the month (1 to 31).

        Returns:
            The events: id, title, day, hour.
        """
        return [e for e in self.world["calendar"]["events"] if e["day"] == day]

    def calendar_add(self, title: str, day: int, hour: int) -> dict[str, int]:
        """Add a calendar event.

        Args:
            title: The event's title.
            day: The day of the month (1 to 31).
            hour: The hour (0 to 23).

        Returns:
            The new event's id.
        """
        if not (0 <= hour < 24 and 1 <= day <= 31):
            raise ToolError("day must be 1..31 and hour 0..23")
        cal = self.world["calendar"]
        cal["next_id"] += 1
        cal["events"].append({"id": cal["next_id"], "title": title, "day": day, "hour": hour})
        return {"id": cal["next_id"]}

    def calendar_remove(self, event_id: int) -> str:
        """Remove a calendar event.

        Args:
            event_id: The event's id.
        """
        cal = self.world["calendar"]
        kept = [e for e in cal["events"] if e["id"] != event_id]
        if len(kept) == len(cal["events"]):
            raise ToolError("no such event")
        cal["events"] = kept
        return "ok"

    def contacts_find(self, name: str) -> dict[str, str]:
        """Look up a contact.

        Args:
            name: The contact's name.

        Returns:
            The contact's email and phone.
        """
        rec = self.world["contacts"].get(name)
        if rec is None:
            raise ToolError("no such contact")
        return dict(rec)

    def contacts_update(self, name: str, field: str, value: str) -> str:
        """Change a contact's email or phone.

        Args:
            name: The contact's name.
            field: "email" or "phone".
            value: The new value.
        """
        rec = self.world["contacts"].get(name)
        if rec is None or field not in ("email", "phone"):
            raise ToolError("no such contact or field (email, phone)")
        rec[field] = value
        return "ok"

    def shop_search(self, query: str) -> dict[str, int]:
        """Search the shop's catalogue.

        Args:
            query: Part of an item's name.

        Returns:
            The matching items and their prices.
        """
        return {k: v for k, v in self.world["shop"]["catalog"].items() if query in k}

    def shop_add_to_cart(self, item: str, qty: int) -> dict[str, int]:
        """Put an item in the cart.

        Args:
            item: The item's name.
            qty: How many (1 to 99).

        Returns:
            The cart.
        """
        shop = self.world["shop"]
        if item not in shop["catalog"] or not 1 <= qty <= 99:
            raise ToolError("no such item, or qty outside 1..99")
        shop["cart"][item] = shop["cart"].get(item, 0) + qty
        return dict(shop["cart"])

    def shop_checkout(self) -> dict[str, int]:
        """Pay for the cart.

        Returns:
            The amount paid.
        """
        shop = self.world["shop"]
        if not shop["cart"]:
            raise ToolError("the cart is empty")
        total = sum(shop["catalog"][k] * q for k, q in shop["cart"].items())
        if total > shop["balance"]:
            raise ToolError("not enough balance")
        shop["balance"] -= total
        shop["orders"].append(dict(sorted(shop["cart"].items())))
        shop["cart"] = {}
        return {"paid": total}

    def demonstration(self) -> list[dict[str, Any]]:
        """One worked call, of a kind the generator never asks for (reading a file)."""
        call = ToolCall("files_write", {"path": "notes/example.txt", "content": "demo-0"})
        return [
            {
                "role": "user",
                "content": "Tasks:\n1. Create the file notes/example.txt "
                "containing exactly 'demo-0'.",
            },
            {"role": "assistant", "content": "", "tool_calls": [call.chat()]},
        ]


TOOL_NAMES: tuple[str, ...] = tuple(tool_names(ToolWorldApps))
"""The tools of the world, by name (each method's name: read without building the tools'
schemas, which imports transformers — the verifier workers load every environment)."""


def replay(
    world: dict[str, Any], transcript: str, offered: list[str] | None = None
) -> tuple[ToolWorldApps, int]:
    """The apps after replaying ``transcript``'s calls (at most
    :data:`~verirl.tools.session.MAX_CALLS_PER_TURN` per turn, :data:`MAX_CALLS` in all)
    from ``world`` with the tools the episode ``offered``, and the number of turns whose calls
    could be read and that made one."""
    tools = ToolWorldApps(world, offered)
    readable = made = 0
    for turn in decode_transcript(transcript, TURN_SEPARATOR):
        if turn.error is not None or not turn.calls:
            continue
        readable += 1
        for call in turn.calls[:MAX_CALLS_PER_TURN]:
            if made >= MAX_CALLS:
                return tools, readable
            made += 1
            tools.call(call.name, call.arguments, _REPLAY_LIMITS)
    return tools, readable


def transcript_of(calls: list[tuple[str, dict[str, Any]]], per_turn: int = 1) -> str:
    """The canonical transcript of ``calls``, ``per_turn`` calls a turn."""
    replies = [
        ParsedReply("", tuple(ToolCall(n, a) for n, a in calls[i : i + per_turn]))
        for i in range(0, len(calls), per_turn)
    ]
    return encode_transcript(replies, TURN_SEPARATOR)
