"""Is a chat template prefix-preserving for tool episodes? Render, tokenize, compare at the
model's positions.

Training keeps the model's sampled tokens and tokenizes only the glue
(:mod:`verirl.tools.bridge`). That is exact for the learner whatever the template; what a
template can break is everything that re-renders the conversation — a later turn's prompt on
an inference server, ``verirl serve``'s clients, TRL — and the bridge itself. So before a run,
:func:`check_tool_template` builds a small episode of the run's shape in the run's own
format — a first turn opening with a ``<think>`` block and a call with a ``false`` argument,
a turn of two parallel calls whose results are consecutive ``tool`` messages, a final reply —
the way the collector builds it, and compares it with fresh renderings
(:func:`compare_episode`):

- **context**: the tokens before each model turn must equal the rendering of the messages so
  far with the generation prompt;
- **model positions**: each turn's tokens must sit unchanged at the same positions of the
  rendering of the whole conversation.

A difference there is a *break* (Qwen3 stripping earlier ``<think>`` blocks; arguments written
back as Python, ``false`` → ``False``; a bridge the template cannot support): the run is refused
with one line naming the fix (a training template that renders earlier turns unchanged), or,
when asked, trained with the bridge's stated fallback. Properties that break builders which
slice renderings at message boundaries, but not this episode, are reported as *handled*:
text after the stop token (ChatML's newline after ``<|im_end|>``, TRL #5317), a separator that
depends on the next message (verl #6501), consecutive tool results merged into one block
(slime #2263). :func:`compare_episode` is the same check for any episode's tokens, so a
builder can be tested with it too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from verirl.errors import UserInputError
from verirl.tools.bridge import BridgeError, ChatRenderer, fallback_glue, glue_text
from verirl.tools.calls import ParsedReply, ToolCall, with_ids
from verirl.tools.formats import ToolFormat

Message = dict[str, Any]
Severity = Literal["break", "handled"]

PROBE_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "lookup",
        "description": "Look a name up.",
        "parameters": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The name."},
                "exact": {"type": "boolean", "description": "Exact matches only."},
                "limit": {"type": "integer", "description": "At most this many."},
            },
            "required": ["name", "exact", "limit"],
        },
    },
}


@dataclass(frozen=True)
class Finding:
    """One thing the check saw: ``kind``, the 1-based model ``turn`` it concerns (0: none),
    ``severity`` and a one-line ``detail``."""

    kind: str
    turn: int
    severity: Severity
    detail: str


@dataclass(frozen=True)
class EpisodeShape:
    """The episode the check builds: ``think`` opens the first turn with a ``<think>``
    block; ``parallel`` calls in the second turn; ``final_reply`` ends with a reply without
    calls."""

    think: bool = True
    parallel: int = 2
    final_reply: bool = True


@dataclass(frozen=True)
class TemplateReport:
    """The findings of :func:`check_tool_template` for one template and format."""

    format: str
    findings: tuple[Finding, ...] = field(default_factory=tuple)

    @property
    def preserving(self) -> bool:
        return not any(f.severity == "break" for f in self.findings)

    def kinds(self, severity: Severity | None = None) -> set[str]:
        return {f.kind for f in self.findings if severity is None or f.severity == severity}

    def summary(self) -> str:
        """One line: the verdict and the first break, or what was handled."""
        breaks = [f for f in self.findings if f.severity == "break"]
        if breaks:
            return f"not prefix-preserving for {self.format} tool episodes: {breaks[0].detail}"
        handled = "; ".join(f.detail for f in self.findings)
        return f"prefix-preserving for {self.format} tool episodes" + (
            f" (handled: {handled})" if handled else ""
        )

    def refusal(self) -> UserInputError:
        """The one-line error that refuses the template, naming the fix."""
        return UserInputError(
            f"chat template {self.summary()}; fix: a training template that renders earlier "
            "turns unchanged (the tool_calls collector's chat_template: a .jinja path, e.g. the "
            "one trl.chat_template_utils.get_training_chat_template gives for this family), or "
            "template_check: warn to train with the stated fallback (glue rendered after a "
            "minimal history)"
        )


def stop_token(tokenizer: Any, stop: str | None = None) -> tuple[str, int]:
    """The text and id of the token that ends an assistant turn (the tokenizer's EOS unless
    named); it must be one token."""
    text = stop if stop is not None else tokenizer.eos_token
    if not isinstance(text, str) or not text:
        raise UserInputError("the tokenizer has no EOS token; name the stop token of a turn")
    ids = tokenizer.encode(text, add_special_tokens=False)
    if len(ids) != 1:
        raise UserInputError(f"the stop token {text!r} is not one token ({len(ids)} tokens)")
    return text, int(ids[0])


def probe_turns(shape: EpisodeShape) -> list[tuple[ParsedReply, list[Message]]]:
    """The check's episode: each model turn (a parsed reply, ids given) and the messages the
    environment answers it with."""
    turns: list[tuple[ParsedReply, list[Message]]] = []
    first = with_ids(
        ParsedReply(
            "<think>\nLook Ann up first.\n</think>" if shape.think else "",
            (ToolCall("lookup", {"name": "ann", "exact": False, "limit": 2}),),
        ),
        1,
    )
    turns.append((first, [_result(first.calls[0], '{"found": false, "near": ["anne"]}')]))
    if shape.parallel >= 1:
        second = with_ids(
            ParsedReply(
                "",
                tuple(
                    ToolCall("lookup", {"name": f"anne{i}", "exact": True, "limit": i + 1})
                    for i in range(shape.parallel)
                ),
            ),
            2,
        )
        turns.append((second, [_result(c, f"result {i}") for i, c in enumerate(second.calls)]))
    if shape.final_reply:
        turns.append((ParsedReply("Anne is not in the book."), []))
    return turns


def _result(call: ToolCall, content: str) -> Message:
    msg: Message = {"role": "tool", "name": call.name, "content": content}
    if call.id is not None:
        msg["tool_call_id"] = call.id
    return msg


def check_tool_template(
    tokenizer: Any,
    fmt: ToolFormat,
    template: str | None = None,
    *,
    tools: Sequence[dict[str, Any]] | None = None,
    stop: str | None = None,
    shape: EpisodeShape | None = None,
    prompt: Sequence[Message] | None = None,
) -> TemplateReport:
    """Build the check's episode with the collector's bridge and compare it with fresh
    renderings (module docstring). ``template``: the chat template's text (``None``: the
    tokenizer's); ``tools``: the run's tool schemas (a probe tool is added); ``prompt``: the
    messages before the first turn (default one user message)."""
    shape = shape or EpisodeShape()
    stop_text, stop_id = stop_token(tokenizer, stop)
    renderer = ChatRenderer(tokenizer, template, (*(tools or ()), PROBE_TOOL))
    history: list[Message] = list(prompt or [{"role": "user", "content": "Find Anne."}])
    first_turn = len(history)
    ids = renderer.ids(history, add_generation_prompt=True)
    spans: list[tuple[int, int]] = []
    findings: list[Finding] = []
    for k, (reply, new) in enumerate(probe_turns(shape), start=1):
        msg = reply.message()
        text, problems = model_text(renderer, history, msg, reply, fmt, stop_text, k)
        findings += problems
        model = [*renderer.encode(text), stop_id]
        spans.append((len(ids), len(ids) + len(model)))
        ids += model
        if k == 1:
            findings += _after_stop(renderer, history, msg, stop_text)
        if new:
            findings += _boundary_hazards(renderer, history, msg, new, stop_text, k)
            try:
                glue = glue_text(renderer, history, msg, new, stop_text)
            except BridgeError as exc:
                findings.append(Finding("bridge_failed", k, "break", f"turn {k}: {exc}"))
                try:
                    glue = fallback_glue(renderer, msg, new, stop_text, True)
                except BridgeError as again:
                    findings.append(Finding("no_fallback", k, "break", f"turn {k}: {again}"))
                    # only to go on comparing: the new messages rendered on their own
                    glue = renderer.text(new, add_generation_prompt=True)
            ids += renderer.encode(glue)
        history += [msg, *new]
    findings += compare_episode(renderer, history, ids, spans, first_turn)
    return TemplateReport(fmt.name, tuple(_dedupe(findings)))


def model_text(
    renderer: ChatRenderer,
    history: Sequence[Message],
    msg: Message,
    reply: ParsedReply,
    fmt: ToolFormat,
    stop: str,
    turn: int,
) -> tuple[str, list[Finding]]:
    """What a model trained on this template writes for ``reply`` after ``history``: the
    template's rendering of the turn as the last message, up to its stop token. Breaks when
    the template drops part of the reply (a ``<think>`` block) or writes calls the format's
    parser does not read back as they were (``false`` → ``False``)."""
    prompt = renderer.text(history, add_generation_prompt=True)
    whole = renderer.text([*history, msg], add_generation_prompt=False)
    out: list[Finding] = []
    if not whole.startswith(prompt):
        out.append(
            Finding(
                "turn_not_after_prompt",
                turn,
                "break",
                f"turn {turn} is not rendered where the generation prompt ends "
                f"({prompt[-30:]!r} then {whole[len(prompt) - 30 : len(prompt) + 10]!r})",
            )
        )
        return fmt.render(reply), out
    body = whole[len(prompt) :]
    end = body.find(stop)
    if end < 0:
        out.append(
            Finding(
                "no_stop_token",
                turn,
                "break",
                f"the template does not end an assistant turn with the stop token {stop!r}",
            )
        )
        return body, out
    text = body[:end]
    for piece in _pieces(reply.content):
        if piece and piece not in text:
            out.append(
                Finding(
                    "content_dropped",
                    turn,
                    "break",
                    f"turn {turn} as the template writes it lacks part of the model's reply "
                    f"({piece[:40]!r})",
                )
            )
            break
    read = fmt.parse(text)
    if read.error is not None or [c.plain() for c in read.calls] != [
        c.plain() for c in reply.calls
    ]:
        shown = read.error or [c.plain() for c in read.calls]
        out.append(
            Finding(
                "format_mismatch",
                turn,
                "break",
                f"the template writes turn {turn}'s calls as {text[-90:]!r}, which the "
                f"{fmt.name} parser reads as {str(shown)[:90]!r}",
            )
        )
    return text, out


def _pieces(content: str) -> list[str]:
    """What of a reply's ``content`` must survive rendering: the reasoning inside a
    ``<think>`` block and the text outside it (each stripped; empty ones left out)."""
    start, end = content.find("<think>"), content.find("</think>")
    if start < 0 or end < start:
        return [content.strip()] if content.strip() else []
    inner = content[start + len("<think>") : end].strip()
    outer = (content[:start] + content[end + len("</think>") :]).strip()
    return [p for p in (inner, outer) if p]


def compare_episode(
    renderer: ChatRenderer,
    messages: Sequence[Message],
    ids: Sequence[int],
    spans: Sequence[tuple[int, int]],
    first_turn: int,
) -> list[Finding]:
    """Compare an episode's tokens with fresh renderings. ``messages``: the whole
    conversation; the assistant messages from index ``first_turn`` on are the model's turns,
    whose tokens are ``ids[start:end]`` for the ``spans`` in order. Returns a break for the
    first turn whose context differs and for the first whose own tokens moved or changed."""
    turn_at = [i for i, m in enumerate(messages) if i >= first_turn and m["role"] == "assistant"]
    if len(turn_at) != len(spans):
        return [
            Finding(
                "shape",
                0,
                "break",
                f"{len(spans)} model spans for {len(turn_at)} assistant turns in the messages",
            )
        ]
    out: list[Finding] = []
    for k, (at, (start, _)) in enumerate(zip(turn_at, spans, strict=True), start=1):
        fresh = renderer.ids(messages[:at], add_generation_prompt=True)
        if list(ids[:start]) != fresh:
            pos = _first_mismatch(ids[:start], fresh)
            out.append(
                Finding(
                    "context_changed",
                    k,
                    "break",
                    f"turn {k}'s prompt differs from a fresh rendering at token {pos}: "
                    f"{_show(renderer, ids, pos)} in the episode, {_show(renderer, fresh, pos)} "
                    "rendered",
                )
            )
            break
    full = renderer.ids(messages, add_generation_prompt=False)
    for k, (start, end) in enumerate(spans, start=1):
        if list(ids[start:end]) != full[start:end]:
            pos = start + _first_mismatch(ids[start:end], full[start:end])
            out.append(
                Finding(
                    "model_tokens_changed",
                    k,
                    "break",
                    f"turn {k}'s own tokens are rendered differently at token {pos}: "
                    f"{_show(renderer, ids, pos)} sampled, {_show(renderer, full, pos)} rendered",
                )
            )
            break
    return out


# ---- handled hazards -----------------------------------------------------------------------
def _after_stop(
    renderer: ChatRenderer, history: list[Message], msg: Message, stop: str
) -> list[Finding]:
    text = renderer.text([*history, msg], add_generation_prompt=False)
    cut = text.rfind(stop)
    if cut < 0:
        return [
            Finding(
                "no_stop_token",
                1,
                "break",
                f"the template does not end an assistant turn with the stop token {stop!r}",
            )
        ]
    tail = text[cut + len(stop) :]
    if not tail:
        return []
    return [
        Finding(
            "text_after_stop",
            1,
            "handled",
            f"text after the stop token ({tail!r}) opens the glue (TRL #5317)",
        )
    ]


def _boundary_hazards(
    renderer: ChatRenderer,
    history: list[Message],
    msg: Message,
    new: list[Message],
    stop: str,
    turn: int,
) -> list[Finding]:
    out = []
    ended = renderer.text([*history, msg], add_generation_prompt=False)
    after = renderer.text([*history, msg, *new], add_generation_prompt=True)
    cut = ended.rfind(stop)
    if cut >= 0 and after.startswith(ended[: cut + len(stop)]) and not after.startswith(ended):
        at = len(ended[: cut + len(stop)])
        out.append(
            Finding(
                "separator_depends_on_next",
                turn,
                "handled",
                f"what follows the stop token depends on the next message "
                f"({ended[at:]!r} at the end, {after[at : at + 12]!r} before a result; "
                "verl #6501): bridged from the stop token",
            )
        )
    tools = [m for m in new if m["role"] == "tool"]
    if len(tools) >= 2:
        one = renderer.text([*history, msg, tools[0]], add_generation_prompt=False)
        two = renderer.text([*history, msg, *tools[:2]], add_generation_prompt=False)
        if not two.startswith(one):
            out.append(
                Finding(
                    "merged_tool_results",
                    turn,
                    "handled",
                    "consecutive tool results render as one block (slime #2263): a turn's "
                    "results are bridged together",
                )
            )
    return out


def _first_mismatch(a: Sequence[int], b: Sequence[int]) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def _show(renderer: ChatRenderer, ids: Sequence[int], pos: int) -> str:
    piece = renderer.tokenizer.decode(list(ids[pos : pos + 6]), skip_special_tokens=False)
    return repr(piece) if pos < len(ids) else "(the end)"


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen: set[tuple[str, str]] = set()
    out = []
    for f in findings:
        key = (f.kind, f.severity)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out
