"""Typed tools: the schema is transformers' get_json_schema of the function, arguments are
checked strictly, and every failure — bad arguments, a raise, a hang, huge or non-text output
— is a bounded observation, never an exception."""

from __future__ import annotations

import time
from typing import Any

import pytest
from transformers.utils import get_json_schema

from verirl.errors import UnknownNameError, UserInputError
from verirl.tools import FunctionToolset, ToolLimits, Toolset, build_toolset, tool
from verirl.tools.toolset import TOOLSETS, merged_tools


def book(room: str, nights: int, breakfast: bool = False) -> str:
    """Book a room.

    Args:
        room: The room's name.
        nights: How many nights.
        breakfast: Whether breakfast is included.
    """
    return f"{room} for {nights} nights" + (" with breakfast" if breakfast else "")


def test_schema_is_get_json_schema_and_arguments_are_strict() -> None:
    t = tool(book)
    assert t.schema == get_json_schema(book) and t.name == "book"
    assert t.call({"room": "blue", "nights": 2}).text == "blue for 2 nights"
    assert t.call({"room": "blue", "nights": 2, "breakfast": True}).ok
    for bad, word in [
        ({"room": "blue", "nights": "2"}, "nights"),  # no coercion from a string
        ({"room": "blue", "nights": True}, "nights"),  # a bool is not an int
        ({"room": "blue"}, "nights"),  # missing
        ({"room": "blue", "nights": 2, "pets": 1}, "unknown argument"),
    ]:
        r = t.call(bad)
        assert not r.ok and r.refused and r.text.startswith("error: book: bad arguments")
        assert word in r.text
    r = t.call(["blue", 2])
    assert r.refused and "JSON object" in r.text


def test_an_untyped_or_undocumented_function_is_refused_in_one_line() -> None:
    def nodoc(x: int) -> int:
        """Nothing about x."""
        return x

    def untyped(x):  # type: ignore[no-untyped-def]
        """Untyped.

        Args:
            x: A value.
        """
        return x

    for fn in (nodoc, untyped):
        with pytest.raises(UserInputError, match="cannot be a tool") as err:
            tool(fn)
        assert "\n" not in str(err.value)


class Hostile(Toolset):
    def boom(self) -> str:
        """Raise."""
        raise KeyError("secret-key")

    def leave(self) -> str:
        """Exit the interpreter."""
        raise SystemExit(3)

    def hang(self) -> str:
        """Sleep too long."""
        time.sleep(3)
        return "late"

    def huge(self) -> str:
        """A lot of text."""
        return "y" * 1_000_000

    def raw(self) -> bytes:
        """Bytes, not text."""
        return b"\x00\xff"

    def odd(self) -> Any:
        """An object that cannot be shown."""

        class Bad:
            def __str__(self) -> str:
                raise RuntimeError("no")

        return Bad()

    def surrogate(self) -> str:
        """A lone surrogate."""
        return "a\ud800b"

    def data(self) -> dict[str, Any]:
        """Structured data."""
        return {"ok": True, "n": None, "xs": [1, 2.5]}


def test_hostile_tools_become_bounded_observations() -> None:
    ts = Hostile()
    limits = ToolLimits(timeout_s=0.5, max_output_chars=200)
    assert ts.call("boom", {}, limits).text == "error: KeyError: 'secret-key'"
    assert ts.call("leave", {}, limits).text == "error: SystemExit: 3"
    started = time.perf_counter()
    late = ts.call("hang", {}, limits)
    assert late.text == "error: hang did not return within 0.5 s"
    assert time.perf_counter() - started < 2.5  # did not wait for the sleep
    big = ts.call("huge", {}, limits)
    assert big.ok and len(big.text) == 200 and big.text.endswith("more characters]")
    assert "999" in big.text  # says how much was cut
    assert ts.call("raw", {}, limits).text == "error: TypeError: the tool returned bytes, not text"
    assert "cannot be shown as text" in ts.call("odd", {}, limits).text
    assert ts.call("surrogate", {}, limits).text == "a?b"
    assert ts.call("data", {}, limits).text == '{"ok": true, "n": null, "xs": [1, 2.5]}'
    unknown = ts.call("nope", {}, limits)
    assert unknown.refused and "tools: boom, data" in unknown.text


def test_toolset_methods_are_tools_and_hooks_are_not() -> None:
    names = set(Hostile().tools())
    assert names == {"boom", "leave", "hang", "huge", "raw", "odd", "surrogate", "data"}
    assert not names & {"call", "schemas", "tools", "demonstration", "close"}


def test_registry_builds_by_name_and_refuses_duplicates_and_clashes() -> None:
    calc = build_toolset("calculator")
    assert calc.call("calculate", {"expression": "6*7"}).text == "42"
    with pytest.raises(UnknownNameError, match="known:"):
        build_toolset("no_such_toolset")
    with pytest.raises(UserInputError, match="toolset 'calculator'"):
        build_toolset("calculator", {"bogus": 1})
    with pytest.raises(ValueError, match="already registered"):
        TOOLSETS.register("calculator")(Hostile)
    assert TOOLSETS.get("calculator").part is type(calc)
    with pytest.raises(UserInputError, match="offered by two toolsets"):
        merged_tools([build_toolset("calculator"), build_toolset("calculator")])
    with pytest.raises(UserInputError, match="share the name"):
        FunctionToolset([book, book])
