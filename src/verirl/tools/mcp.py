"""An MCP server's tools as a toolset (``mcp``), through fastmcp's maintained client.

``build_toolset("mcp", {"server": ...})`` connects once per episode-toolset to ``server``: an
``http(s)://`` URL (streamable HTTP or SSE), a path to a Python or Node server script (stdio,
a child process), or an MCP configuration dict (``{"mcpServers": {...}}``). Its tools (name,
description, input schema) are offered as they are listed; a call goes to the server with a
time bound, the server checks the arguments against its schema, and the result's text blocks
are the observation (a non-text block is named, not shown; a result the server marks as an
error reads ``error: ...``). Like every tool call, a failure is an observation, never an
exception in the loop.

The client is asynchronous; the toolset runs it on an event loop of its own, in a thread, so
the synchronous episode loop can call it. ``fastmcp`` comes with the ``mcp`` (and ``serve``)
extra: ``pip install 'verirl[mcp]'``.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from verirl.errors import UserInputError
from verirl.tools.toolset import TOOLSETS, Toolset
from verirl.tools.typed import Tool, ToolError

T = TypeVar("T")


@TOOLSETS.register("mcp")
class MCPToolset(Toolset):
    """The tools of one MCP server; see the module docstring. ``timeout_s`` bounds each
    request (connecting and listing included); ``prefix`` is put before every tool name
    (to keep two servers' tools apart)."""

    def __init__(
        self, server: str | dict[str, Any], timeout_s: float = 30.0, prefix: str = ""
    ) -> None:
        try:
            from fastmcp import Client
        except ImportError as exc:  # pragma: no cover - exercised only without the extra
            raise UserInputError(
                "the mcp toolset needs fastmcp: pip install 'verirl[mcp]'"
            ) from exc
        self.server = server
        self.timeout_s = float(timeout_s)
        self.prefix = prefix
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="verirl-mcp-client", daemon=True
        )
        self._thread.start()
        self._client: Any = None
        target: Any = server
        if isinstance(server, str) and "://" not in server:
            target = Path(server)  # a server script, run over stdio
        try:
            self._client = Client(target, timeout=self.timeout_s)
            self._run(self._client.__aenter__())
            listed = self._run(self._client.list_tools())
        except Exception as exc:
            self.close()
            raise UserInputError(
                f"mcp toolset: cannot list the tools of {str(server)[:120]!r} "
                f"({type(exc).__name__}: {' '.join(str(exc).split())[:200]})"
            ) from exc
        tools: dict[str, Tool] = {}
        for t in listed:
            name = f"{prefix}{t.name}"
            schema = {
                "type": "function",
                "function": {
                    "name": name,
                    "description": t.description or "",
                    "parameters": getattr(t, "input_schema", None)
                    or {"type": "object", "properties": {}},
                },
            }
            tools[name] = Tool(name, schema, self._caller(t.name))
        self.__dict__["_tools"] = tools

    def _run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        return future.result(self.timeout_s if timeout is None else timeout)

    def _caller(self, remote: str) -> Any:
        def call(**arguments: Any) -> str:
            result = self._run(
                self._client.call_tool(
                    remote, arguments, raise_on_error=False, timeout=self.timeout_s
                )
            )
            text = "\n".join(_block_text(b) for b in result.content)
            if result.is_error:
                raise ToolError(text or "the server reported an error")
            return text

        call.__name__ = remote
        return call

    def close(self) -> None:
        """Disconnect (and stop the server's process, for a stdio server)."""
        if self._client is not None and self._loop.is_running():
            with contextlib.suppress(Exception):  # a server that is already gone
                self._run(self._client.__aexit__(None, None, None), timeout=10.0)
            self._client = None
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5.0)


def _block_text(block: Any) -> str:
    text = getattr(block, "text", None)
    if isinstance(text, str):
        return text
    kind = getattr(block, "type", type(block).__name__)
    return f"[{kind} content not shown]"
