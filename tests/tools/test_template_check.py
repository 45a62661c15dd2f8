"""The prefix-preservation check against the template bugs the field has hit.

Each bug is a fixture: a small ChatML template written to show it (tokenizer: SmolLM2's, the
one the tiny test model uses; ``<|im_end|>`` ends a turn). Two bugs break any episode
(``<think>`` stripped from earlier turns, Qwen3; arguments written back as Python, ``false`` →
``False``): the check refuses them, naming the fix. Three are properties that break builders
which slice renderings at message boundaries (EOS followed by a newline, TRL #5317; a
separator that depends on the next message and a turn rendered on its own, verl #6501;
consecutive tool results merged, slime #2263): the check names them, the bridge's episode
matches fresh renderings exactly, and the episode the naive builder makes is caught by the
same comparison.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from verirl.errors import UserInputError
from verirl.models import load_tokenizer
from verirl.tools.bridge import ChatRenderer, glue_text
from verirl.tools.formats import get_format
from verirl.tools.template_check import (
    PROBE_TOOL,
    check_tool_template,
    compare_episode,
    model_text,
    probe_turns,
)
from verirl.tools.templates import project_template

Message = dict[str, Any]
HERMES = get_format("hermes")


@pytest.fixture(scope="module")
def tok() -> Any:
    return load_tokenizer("smollm2-135m-instruct")


def chatml(
    content: str = "content",
    args: str = "(f['arguments'] | tojson)",
    end: str = "'\\n'",
    merge_tools: bool = False,
) -> str:
    """A ChatML template writing Hermes ``<tool_call>`` blocks; each argument is a Jinja
    expression that a fixture swaps to show one bug. ``content`` and ``end`` may read
    ``loop`` (the message loop)."""
    if merge_tools:
        tool = (
            "{%- if loop.first or messages[loop.index0 - 1]['role'] != 'tool' -%}"
            "{{- '<|im_start|>user\\n' -}}{%- else -%}{{- '\\n' -}}{%- endif -%}"
            "{{- '<tool_response>\\n' + m['content'] + '\\n</tool_response>' -}}"
            "{%- if loop.last or loop.nextitem['role'] != 'tool' -%}"
            "{{- '<|im_end|>\\n' -}}{%- endif -%}"
        )
    else:
        tool = (
            "{{- '<|im_start|>user\\n<tool_response>\\n' + m['content'] + "
            "'\\n</tool_response><|im_end|>\\n' -}}"
        )
    body = (
        "{%- if tools -%}{{- '<|im_start|>system\\nTools: ' -}}"
        "{%- for t in tools -%}{{- t['function']['name'] + ' ' -}}{%- endfor -%}"
        "{{- '<|im_end|>\\n' -}}{%- endif -%}"
        "{%- for m in messages -%}"
        "{%- if m['role'] == 'assistant' -%}"
        "{%- set content = m['content'] or '' -%}"
        "{%- set c = CONTENT -%}"
        "{{- '<|im_start|>assistant\\n' + c -}}"
        "{%- for call in m['tool_calls'] or [] -%}{%- set f = call['function'] -%}"
        "{{- '\\n' if (c or not loop.first) else '' -}}"
        "{{- '<tool_call>\\n{\"name\": \"' + f['name'] + '\", \"arguments\": ' + ARGS"
        " + '}\\n</tool_call>' -}}"
        "{%- endfor -%}"
        "{{- '<|im_end|>' + END -}}"
        "{%- elif m['role'] == 'tool' -%}TOOL{%- else -%}"
        "{{- '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' -}}"
        "{%- endif -%}{%- endfor -%}"
        "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
    )
    return (
        body.replace("CONTENT", content)
        .replace("ARGS", args)
        .replace("END", end)
        .replace("TOOL", tool)
    )


# the templates that show each bug
THINK_STRIPPED = chatml(
    content="content.split('</think>')[-1].lstrip('\\n') if not loop.last else content"
)
PYTHON_ARGUMENTS = chatml(args="(f['arguments'] | string)")
EOS_THEN_NEWLINE = chatml()  # ChatML as is: '\n' after every <|im_end|>
NEWLINE_DEPENDS_ON_NEXT = chatml(
    end="('' if (not loop.last and loop.nextitem['role'] == 'tool') else '\\n')"
)
MERGED_RESULTS = chatml(merge_tools=True)


# ---- episodes built three wrong ways and the right one ---------------------------------------
Glue = Callable[[ChatRenderer, list[Message], Message, list[Message], str], list[int]]


def bridge(r: ChatRenderer, hist: list[Message], msg: Message, new: list[Message], stop: str):
    return r.encode(glue_text(r, hist, msg, new, stop))


def slice_after_turn(r, hist, msg, new, stop):
    """TRL before #5330: the glue is what the full rendering has past the rendering of the
    conversation through the turn (which ends with the template's newline after EOS)."""
    before = r.ids([*hist, msg], add_generation_prompt=False)
    after = r.ids([*hist, msg, *new], add_generation_prompt=True)
    return after[len(before) :]


def render_alone(r, hist, msg, new, stop):
    """verl #6501: the new messages rendered on their own."""
    return r.ids(new, add_generation_prompt=True)


def one_message_at_a_time(r, hist, msg, new, stop):
    """slime #2263: each tool result bridged on its own, then the generation prompt."""
    out: list[int] = []
    prev = [*hist, msg]
    for m in new:
        before = r.text(prev, add_generation_prompt=False)
        after = r.text([*prev, m], add_generation_prompt=False)
        out += r.encode(after[len(before) :] if after.startswith(before) else after)
        prev.append(m)
    gen = r.text(prev, add_generation_prompt=True)[len(r.text(prev, False)) :]
    return [*out, *r.encode(gen)]


def build(
    tok: Any, template: str, glue: Glue
) -> tuple[ChatRenderer, list[Message], list[int], list[tuple[int, int]]]:
    """The check's probe episode, its turns as the template writes them, glued by ``glue``."""
    r = ChatRenderer(tok, template, (PROBE_TOOL,))
    hist: list[Message] = [{"role": "user", "content": "Find Anne."}]
    ids = r.ids(hist, add_generation_prompt=True)
    spans = []
    for reply, new in probe_turns_default():
        msg = reply.message()
        text, _ = model_text(r, hist, msg, reply, HERMES, "<|im_end|>", 0)
        model = [*r.encode(text), tok.eos_token_id]
        spans.append((len(ids), len(ids) + len(model)))
        ids += model
        if new:
            ids += glue(r, hist, msg, new, "<|im_end|>")
        hist += [msg, *new]
    return r, hist, ids, spans


def probe_turns_default():
    from verirl.tools.template_check import EpisodeShape

    return probe_turns(EpisodeShape())


# ---- the tests -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("template", "kinds"),
    [
        (THINK_STRIPPED, {"context_changed", "bridge_failed", "no_fallback"}),
        (PYTHON_ARGUMENTS, {"format_mismatch"}),
    ],
    ids=["qwen3_think_stripped", "false_becomes_False"],
)
def test_breaking_templates_are_refused_naming_the_fix(
    tok: Any, template: str, kinds: set[str]
) -> None:
    report = check_tool_template(tok, HERMES, template)
    assert not report.preserving
    assert kinds <= report.kinds("break"), report.findings
    err = report.refusal()
    assert isinstance(err, UserInputError)
    text = str(err)
    assert "\n" not in text and "training template" in text and "template_check: warn" in text


def test_think_stripping_is_seen_at_the_model_positions(tok: Any) -> None:
    r, hist, ids, spans = build(tok, THINK_STRIPPED, bridge_or_fallback)
    found = compare_episode(r, hist, ids, spans, 1)
    assert {f.kind for f in found} == {"context_changed", "model_tokens_changed"}
    assert [f.turn for f in found] == [2, 1]  # turn 2's prompt lost turn 1's reasoning
    assert "think" in found[0].detail


def bridge_or_fallback(r, hist, msg, new, stop):
    from verirl.tools.bridge import BridgeError, fallback_glue

    try:
        return bridge(r, hist, msg, new, stop)
    except BridgeError:
        pass
    try:
        return r.encode(fallback_glue(r, msg, new, stop, True))
    except BridgeError:
        return render_alone(r, hist, msg, new, stop)


def test_python_arguments_are_caught_as_false_becoming_False(tok: Any) -> None:
    report = check_tool_template(tok, HERMES, PYTHON_ARGUMENTS)
    [finding] = [f for f in report.findings if f.kind == "format_mismatch"]
    assert "False" in finding.detail and finding.turn == 1


@pytest.mark.parametrize(
    ("template", "kind", "naive"),
    [
        (EOS_THEN_NEWLINE, "text_after_stop", slice_after_turn),
        (EOS_THEN_NEWLINE, "text_after_stop", render_alone),
        (NEWLINE_DEPENDS_ON_NEXT, "separator_depends_on_next", slice_after_turn),
        (MERGED_RESULTS, "merged_tool_results", one_message_at_a_time),
    ],
    ids=[
        "eos_newline_trl5317",
        "turn_alone_verl6501",
        "newline_depends_verl6501",
        "merged_slime2263",
    ],
)
def test_slicing_hazards_are_named_bridged_exactly_and_naive_builders_caught(
    tok: Any, template: str, kind: str, naive: Glue
) -> None:
    report = check_tool_template(tok, HERMES, template)
    assert report.preserving, report.summary()
    assert kind in report.kinds("handled")
    assert "handled" in report.summary() and "#" in report.summary()  # names the issue
    r, hist, ids, spans = build(tok, template, bridge)
    assert compare_episode(r, hist, ids, spans, 1) == []  # the bridge: exact
    r, hist, bad, spans = build(tok, template, naive)
    assert bad != ids
    found = compare_episode(r, hist, bad, spans, 1)
    assert found and found[0].severity == "break", "the naive builder's episode must be caught"


def test_project_chatml_tools_template_passes_with_smollm2(tok: Any) -> None:
    report = check_tool_template(tok, get_format("chatml_tools"), project_template("chatml_tools"))
    assert report.preserving and report.kinds("break") == set()
    assert report.kinds("handled") == {"text_after_stop"}


def test_wrong_format_for_a_template_is_a_break(tok: Any) -> None:
    # the project template writes a JSON list; the Hermes parser reads one object per block
    report = check_tool_template(tok, get_format("llama3_json"), project_template("chatml_tools"))
    assert "format_mismatch" in report.kinds("break")


def test_trl_real_templates_qwen3_refused_its_training_template_accepted(tok: Any) -> None:
    ctu = pytest.importorskip("trl.chat_template_utils", reason="TRL ships the Qwen templates")
    if not hasattr(ctu, "qwen2_5_chat_template"):  # an older TRL (the lowest-versions stage)
        pytest.skip("this TRL ships no Qwen chat templates")
    qwen3 = check_tool_template(tok, HERMES, ctu.qwen3_chat_template)
    assert not qwen3.preserving
    training = ctu.get_training_chat_template.__globals__["qwen3_training_chat_template"]
    assert check_tool_template(tok, HERMES, training).preserving
    qwen25 = check_tool_template(tok, HERMES, ctu.qwen2_5_chat_template)
    assert qwen25.preserving and "merged_tool_results" in qwen25.kinds("handled")
