"""The tool-call parsers: each family's format read back from what it writes, unreadable
calls as a wrong-format reply (never an exception, whatever the reply), and the format told
from a chat template."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verirl.tools import ParsedReply, ToolCall, detect_format, get_format
from verirl.tools.formats import MAX_REPLY_CHARS, TOOL_FORMATS
from verirl.tools.templates import project_template

CALLS = (
    ToolCall("files_write", {"path": "a/b.txt", "content": 'say "hi"\nthen go'}),
    ToolCall("calendar_add", {"title": "yoga", "day": 3, "hour": 9, "flag": False, "x": None}),
)
FORMATS = ("hermes", "chatml_tools", "llama3_json", "mistral")


@pytest.mark.parametrize("name", FORMATS)
def test_each_format_reads_back_what_it_writes(name: str) -> None:
    fmt = get_format(name)
    for calls in (CALLS[:1], CALLS):
        content = "" if name == "llama3_json" else "Let me do it."
        got = fmt.parse(fmt.render(ParsedReply(content, calls)))
        assert got.error is None and got.content == content
        assert [c.plain() for c in got.calls] == [c.plain() for c in calls]
    final = fmt.parse("All done, nothing else to call.")
    assert final.final and final.content == "All done, nothing else to call."


def test_family_texts_as_the_models_write_them() -> None:
    hermes = get_format("hermes").parse(
        '<think>\nplan\n</think>\n\n<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n'
        '</tool_call>\n<tool_call>\n{"name": "g", "arguments": "{\\"b\\": false}"}\n</tool_call>'
    )
    assert [c.plain() for c in hermes.calls] == [
        {"name": "f", "arguments": {"a": 1}},
        {"name": "g", "arguments": {"b": False}},  # arguments given as a JSON string
    ]
    assert hermes.content == "<think>\nplan\n</think>"
    smol = get_format("chatml_tools").parse(
        '<tool_call>[\n{"name": "f", "arguments": {"a": 1}},\n{"name": "g", "arguments": {}}\n]'
        "</tool_call>"
    )
    assert [c.name for c in smol.calls] == ["f", "g"]
    single = get_format("chatml_tools").parse(
        '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    )
    assert [c.name for c in single.calls] == ["f"]
    llama = get_format("llama3_json").parse(
        '<|python_tag|>{"name": "f", "parameters": {"a": 1}}; {"name": "g", "parameters": {}}'
    )
    assert [c.plain() for c in llama.calls] == [
        {"name": "f", "arguments": {"a": 1}},
        {"name": "g", "arguments": {}},
    ]
    v11 = get_format("mistral").parse(
        'Sure.[TOOL_CALLS]f[ARGS]{"a": 1}[TOOL_CALLS]g[CALL_ID]abc123def[ARGS]{}'
    )
    assert v11.content == "Sure." and [(c.name, c.id) for c in v11.calls] == [
        ("f", None),
        ("g", "abc123def"),
    ]
    v3 = get_format("mistral").parse('[TOOL_CALLS] [{"name": "f", "arguments": {}, "id": "x1"}]')
    assert v3.calls[0].id == "x1"


@pytest.mark.parametrize(
    ("name", "reply", "why"),
    [
        ("hermes", '<tool_call>\n{"name": "f", "arguments": {}', "not closed"),
        ("hermes", "<tool_call>{bad json}</tool_call>", "not valid JSON"),
        ("hermes", '<tool_call>{"arguments": {}}</tool_call>', "needs a name"),
        ("hermes", "text </tool_call>", "no opening"),
        ("hermes", "<tool_call>[1, 2]</tool_call>", "JSON object"),
        ("chatml_tools", '<tool_call>[{"name": "f"}, 3]</tool_call>', "JSON object"),
        ("chatml_tools", "<tool_call>[</tool_call>", "not valid JSON"),
        ("llama3_json", '{"name": "f", "parameters": {', "not valid JSON"),
        ("mistral", "[TOOL_CALLS] [{]", "not valid JSON"),
        ("mistral", "[TOOL_CALLS]f{}", "NAME[ARGS]"),
    ],
)
def test_unreadable_calls_are_wrong_format_replies(name: str, reply: str, why: str) -> None:
    got = get_format(name).parse(reply)
    assert got.error is not None and why in got.error and not got.calls and not got.final


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300) | st.binary(max_size=50).map(lambda b: b.decode("latin-1")))
def test_no_reply_makes_a_parser_raise(text: str) -> None:
    for name in FORMATS:
        for probe in (text, f"<tool_call>{text}</tool_call>", f"[TOOL_CALLS]{text}", "{" + text):
            got = get_format(name).parse(probe)
            assert isinstance(got, ParsedReply)


def test_hostile_replies_stay_bounded() -> None:
    deep = "<tool_call>" + "[" * 100_000 + "</tool_call>"
    for name in FORMATS:
        fmt = get_format(name)
        assert fmt.parse(None).error == "the reply is not text"  # type: ignore[arg-type]
        assert "longer than" in (fmt.parse("x" * (MAX_REPLY_CHARS + 1)).error or "")
        assert fmt.parse(deep).error is not None or name in ("llama3_json", "mistral")
    many = "<tool_call>[" + ", ".join('{"name": "f"}' for _ in range(100)) + "]</tool_call>"
    assert "more than 64" in (get_format("chatml_tools").parse(many).error or "")


def test_format_is_detected_from_the_template() -> None:
    ctu = pytest.importorskip("trl.chat_template_utils", reason="TRL ships real templates")
    if not hasattr(ctu, "qwen2_5_chat_template"):  # an older TRL (the lowest-versions stage)
        pytest.skip("this TRL ships no Qwen chat templates")
    assert detect_format(project_template("chatml_tools")) == "chatml_tools"
    assert detect_format(ctu.qwen2_5_chat_template) == "hermes"
    assert detect_format(ctu.qwen3_chat_template) == "hermes"
    assert detect_format(ctu.llama3_1_chat_template) == "llama3_json"
    assert detect_format("{% for m in messages %}{{ m.content }}{% endfor %}") is None
    assert detect_format("... [TOOL_CALLS] ...") == "mistral"
    assert set(TOOL_FORMATS.names()) == set(FORMATS)
