"""The MCP toolset against a local MCP server started by the test (stdio, a child process),
through fastmcp's client: listed schemas, calls, and failures as observations."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytest.importorskip("fastmcp", reason="the mcp toolset needs fastmcp (extra 'mcp' or 'serve')")

from verirl.errors import UserInputError
from verirl.tools import ToolLimits, build_toolset

SERVER = '''
import time
from fastmcp import FastMCP

mcp = FastMCP("probe")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
def fail(reason: str) -> str:
    """Always fails."""
    raise ValueError(reason)


@mcp.tool()
def slow(seconds: float) -> str:
    """Sleep, then answer."""
    time.sleep(seconds)
    return "awake"


@mcp.tool()
def big(n: int) -> str:
    """A long text."""
    return "x" * n


if __name__ == "__main__":
    mcp.run(show_banner=False, log_level="ERROR")
'''


def test_mcp_server_tools_are_a_toolset(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    ts = build_toolset("mcp", {"server": str(script), "timeout_s": 20, "prefix": "srv_"})
    try:
        schemas = {s["function"]["name"]: s["function"] for s in ts.schemas()}
        assert set(schemas) == {"srv_add", "srv_fail", "srv_slow", "srv_big"}
        assert schemas["srv_add"]["description"] == "Add two integers."
        assert schemas["srv_add"]["parameters"]["properties"]["a"]["type"] == "integer"
        limits = ToolLimits(timeout_s=2.0, max_output_chars=100)
        assert ts.call("srv_add", {"a": 2, "b": 40}, limits).text == "42"
        wrong = ts.call("srv_add", {"a": "two", "b": 40}, limits)  # the server checks types
        assert not wrong.ok and wrong.text.startswith("error:") and "a" in wrong.text
        failed = ts.call("srv_fail", {"reason": "no such record"}, limits)
        assert not failed.ok and "no such record" in failed.text
        started = time.perf_counter()
        late = ts.call("srv_slow", {"seconds": 8}, limits)
        assert late.text == "error: srv_slow did not return within 2 s"
        assert time.perf_counter() - started < 6
        big = ts.call("srv_big", {"n": 50_000}, limits)
        assert big.ok and len(big.text) == 100 and "more characters" in big.text
    finally:
        ts.close()


def test_an_unreachable_server_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="cannot list the tools") as err:
        build_toolset("mcp", {"server": str(tmp_path / "missing.py"), "timeout_s": 5})
    assert "\n" not in str(err.value)
