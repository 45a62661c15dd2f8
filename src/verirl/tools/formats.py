"""Tool-call formats: how a model family writes its calls, and the parser that reads them.

A :class:`ToolFormat` reads a reply into a :class:`~verirl.tools.calls.ParsedReply` and writes
one (``render``: the text a model of the family emits for given calls, which its chat template
must put back unchanged into the history — the template check compares them). Registered by
name; :func:`detect_format` picks one from a chat template's text.

=================  =====================================================================
``hermes``         Hermes / Qwen2.5 / Qwen3: ``<tool_call>\\n{"name": ..., "arguments": {...}}
                   \\n</tool_call>``, one block per call
``chatml_tools``   the project's ChatML tool template for SmolLM2 (whose own template has no
                   tool support), in the format SmolLM2-Instruct was tuned on: one
                   ``<tool_call>[{"name": ..., "arguments": {...}}, ...]</tool_call>`` block
                   holding a JSON list
``llama3_json``    Llama 3.1 / 3.2 custom tools: the reply is one JSON object
                   ``{"name": ..., "parameters": {...}}`` (an optional ``<|python_tag|>``)
``mistral``        ``[TOOL_CALLS] [{"name": ..., "arguments": {...}}]`` (v3) or
                   ``[TOOL_CALLS]name[ARGS]{...}`` (v11 and later)
=================  =====================================================================

A reply that starts a call but cannot be read (unclosed tag, invalid JSON, a call without a
name) parses to ``ParsedReply(error=...)``: a wrong-format verdict for the turn, never an
exception. Replies longer than :data:`MAX_REPLY_CHARS` are not read.
"""

from __future__ import annotations

import functools
import json
import re
from abc import ABC, abstractmethod
from typing import Any, ClassVar

from verirl.registry import Registry, Spec, named
from verirl.tools.calls import ParsedReply, ToolCall

MAX_REPLY_CHARS = 200_000
MAX_CALLS = 64


class ToolFormat(ABC):
    """A family's tool-call format: :meth:`parse` a reply, :meth:`render` calls."""

    name: ClassVar[str]
    template: ClassVar[str | None] = None
    """The project template (:mod:`verirl.tools.templates`) this format comes with, when the
    model's own chat template has no tool support."""
    argument_key: ClassVar[str] = "arguments"

    def parse(self, text: object) -> ParsedReply:
        """The reply's content and calls; unreadable calls give ``error`` (never raises)."""
        if not isinstance(text, str):
            return ParsedReply(error="the reply is not text")
        if len(text) > MAX_REPLY_CHARS:
            return ParsedReply(error=f"the reply is longer than {MAX_REPLY_CHARS} characters")
        try:
            reply = self._parse(text)
        except RecursionError:
            return ParsedReply(error="the tool call is nested too deeply to read")
        if len(reply.calls) > MAX_CALLS:
            return ParsedReply(error=f"more than {MAX_CALLS} tool calls in one reply")
        return reply

    @abstractmethod
    def _parse(self, text: str) -> ParsedReply: ...

    @abstractmethod
    def render(self, reply: ParsedReply) -> str:
        """The text a model of this family writes for ``reply`` (content and calls)."""

    @staticmethod
    def detect(chat_template: str) -> bool:
        """Whether ``chat_template`` (its text) writes calls in this format."""
        return False


TOOL_FORMATS: Registry[Spec[type[ToolFormat]]] = Registry("tool format", on_add=named)
"""Tool-call formats by name: ``@TOOL_FORMATS.register(name)`` on a :class:`ToolFormat`."""


@functools.cache
def get_format(name: str) -> ToolFormat:
    """The (stateless, shared) format registered as ``name``."""
    return TOOL_FORMATS.get(name).part()


def detect_format(chat_template: str | None) -> str | None:
    """The registered format a chat template writes calls in (``None``: it renders no tool
    calls, or none this registry knows). The project's own templates are recognised first."""
    if not isinstance(chat_template, str):
        return None
    for name in ("chatml_tools", "mistral", "hermes", "llama3_json"):
        if name in TOOL_FORMATS and TOOL_FORMATS.get(name).part.detect(chat_template):
            return name
    return None


# ---- helpers --------------------------------------------------------------------------------
def _dump(obj: Any) -> str:
    """JSON as chat templates' ``tojson`` writes it (``", "`` and ``": "``, Unicode kept)."""
    return json.dumps(obj, ensure_ascii=False)


def _call(obj: Any, keys: tuple[str, ...] = ("arguments", "parameters")) -> ToolCall | str:
    """A call from a decoded JSON object, or why it is not one."""
    if not isinstance(obj, dict):
        return 'a tool call is a JSON object {"name": ..., "arguments": {...}}'
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        return "a tool call needs a name (a string)"
    args: Any = {}
    for key in keys:
        if key in obj:
            args = obj[key]
            break
    if isinstance(args, str):  # some models write the arguments as a JSON string
        try:
            decoded = json.loads(args)
        except ValueError:
            decoded = args
        args = decoded if isinstance(decoded, dict) else args
    call_id = obj.get("id")
    return ToolCall(name, args, call_id if isinstance(call_id, str) else None)


def _json(body: str) -> Any:
    """``json.loads`` that reports failure as a :class:`ValueError`."""
    return json.loads(body.strip())


_TAGGED = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)


def _tagged_blocks(text: str) -> tuple[list[str], str] | str:
    """The bodies of ``<tool_call>...</tool_call>`` blocks and the text outside them, or why
    they cannot be read (an unclosed or stray tag)."""
    bodies = _TAGGED.findall(text)
    rest = _TAGGED.sub("", text)
    if "<tool_call>" in rest:
        return "a <tool_call> is not closed with </tool_call>"
    if "</tool_call>" in rest:
        return "a </tool_call> has no opening <tool_call>"
    return bodies, rest.strip()


# ---- the formats ----------------------------------------------------------------------------
@TOOL_FORMATS.register("hermes")
class Hermes(ToolFormat):
    """``<tool_call>`` blocks, one JSON object each (Hermes, Qwen2.5, Qwen3)."""

    def _parse(self, text: str) -> ParsedReply:
        found = _tagged_blocks(text)
        if isinstance(found, str):
            return ParsedReply(error=found)
        bodies, content = found
        calls = []
        for body in bodies:
            try:
                call = _call(_json(body))
            except ValueError:
                return ParsedReply(error="the call inside <tool_call> is not valid JSON")
            if isinstance(call, str):
                return ParsedReply(error=call)
            calls.append(call)
        return ParsedReply(content, tuple(calls))

    def render(self, reply: ParsedReply) -> str:
        blocks = [f"<tool_call>\n{_dump(c.plain())}\n</tool_call>" for c in reply.calls]
        return "\n".join(([reply.content] if reply.content else []) + blocks)

    @staticmethod
    def detect(chat_template: str) -> bool:
        return "<tool_call>" in chat_template and "tool_calls" in chat_template


@TOOL_FORMATS.register("chatml_tools")
class ChatMLTools(ToolFormat):
    """One ``<tool_call>`` block holding a JSON list of calls (SmolLM2-Instruct's format;
    the project's ``chatml_tools`` template). A single object in the block is read too."""

    template = "chatml_tools"

    def _parse(self, text: str) -> ParsedReply:
        found = _tagged_blocks(text)
        if isinstance(found, str):
            return ParsedReply(error=found)
        bodies, content = found
        calls = []
        for body in bodies:
            try:
                obj = _json(body)
            except ValueError:
                return ParsedReply(error="the calls inside <tool_call> are not valid JSON")
            for item in obj if isinstance(obj, list) else [obj]:
                call = _call(item)
                if isinstance(call, str):
                    return ParsedReply(error=call)
                calls.append(call)
        return ParsedReply(content, tuple(calls))

    def render(self, reply: ParsedReply) -> str:
        if not reply.calls:
            return reply.content
        block = "<tool_call>[" + ", ".join(_dump(c.plain()) for c in reply.calls) + "]</tool_call>"
        return f"{reply.content}\n{block}" if reply.content else block

    @staticmethod
    def detect(chat_template: str) -> bool:
        return "verirl:chatml_tools" in chat_template


@TOOL_FORMATS.register("llama3_json")
class Llama3Json(ToolFormat):
    """Llama 3.1 / 3.2 JSON tool calls: a reply that is one JSON object with ``name`` and
    ``parameters`` (several joined by ``;``), optionally after ``<|python_tag|>``."""

    argument_key = "parameters"

    def _parse(self, text: str) -> ParsedReply:
        body = text.strip().removeprefix("<|python_tag|>").strip()
        if not body.startswith("{"):
            return ParsedReply(text.strip())
        decoder = json.JSONDecoder()
        calls = []
        pos = 0
        while pos < len(body):
            try:
                obj, end = decoder.raw_decode(body, pos)
            except ValueError:
                return ParsedReply(error="the tool call is not valid JSON")
            call = _call(obj, ("parameters", "arguments"))
            if isinstance(call, str):
                return ParsedReply(error=call)
            calls.append(call)
            pos = end
            while pos < len(body) and body[pos] in " \t\r\n;":
                pos += 1
        return ParsedReply("", tuple(calls))

    def render(self, reply: ParsedReply) -> str:
        if not reply.calls:
            return reply.content
        return "; ".join(_dump({"name": c.name, "parameters": c.arguments}) for c in reply.calls)

    @staticmethod
    def detect(chat_template: str) -> bool:
        return "<|start_header_id|>" in chat_template and '"parameters": ' in chat_template


@TOOL_FORMATS.register("mistral")
class Mistral(ToolFormat):
    """``[TOOL_CALLS]`` followed by a JSON list (v3) or by ``name[ARGS]{...}`` per call
    (v11 and later); the content is the text before the first marker."""

    _MARK = "[TOOL_CALLS]"

    def _parse(self, text: str) -> ParsedReply:
        content, mark, rest = text.partition(self._MARK)
        if not mark:
            return ParsedReply(text.strip())
        content = content.strip()
        rest = rest.strip()
        if rest.startswith("["):
            try:
                obj, end = json.JSONDecoder().raw_decode(rest)
            except ValueError:
                return ParsedReply(error="the calls after [TOOL_CALLS] are not valid JSON")
            if not isinstance(obj, list) or rest[end:].strip():
                return ParsedReply(error="[TOOL_CALLS] is followed by one JSON list of calls")
            calls = []
            for item in obj:
                call = _call(item)
                if isinstance(call, str):
                    return ParsedReply(error=call)
                calls.append(call)
            return ParsedReply(content, tuple(calls))
        calls = []
        for part in rest.split(self._MARK):
            name, args_mark, args = part.partition("[ARGS]")
            if not args_mark:
                return ParsedReply(error="[TOOL_CALLS] is followed by NAME[ARGS]{...}")
            call_id = None
            if "[CALL_ID]" in name:
                name, _, call_id = name.partition("[CALL_ID]")
            try:
                arguments = _json(args)
            except ValueError:
                return ParsedReply(error="the arguments after [ARGS] are not valid JSON")
            call = _call({"name": name.strip(), "arguments": arguments, "id": call_id})
            if isinstance(call, str):
                return ParsedReply(error=call)
            calls.append(call)
        return ParsedReply(content, tuple(calls))

    def render(self, reply: ParsedReply) -> str:
        if not reply.calls:
            return reply.content
        items = []
        for c in reply.calls:
            obj: dict[str, Any] = {"name": c.name, "arguments": c.arguments}
            if c.id is not None:
                obj["id"] = c.id
            items.append(_dump(obj))
        return f"{reply.content}{self._MARK} [" + ", ".join(items) + "]"

    @staticmethod
    def detect(chat_template: str) -> bool:
        return "[TOOL_CALLS]" in chat_template
