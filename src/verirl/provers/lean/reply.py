"""Lean REPL replies: parsing (v4.9.0-rc1 and HEAD), pass/fail, first-error location, and
the assembly of a :class:`~verirl.provers.base.ProofCheck`. Shared by the REPL and Kimina
backends; pure functions, no process.

Formats (leanprover-community/repl at HEAD and at v4.9.0-rc1): a command reply is ``{"env",
"messages"?, "sorries"?, "tactics"?, "infotree"?}``; a tactic-mode reply is ``{"proofState",
"goals", ...}`` with ``proofStatus`` only at HEAD; a refused request is ``{"message": "..."}``.
Empty lists are left out; ``endPos`` may be ``null`` or missing. Message texts drifted between
versions (``declaration uses 'sorry'`` became ``declaration uses `sorry```), so texts are
matched only through case-insensitive prefixes that accept both quote styles.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from verirl.provers.base import FormalProblem, ProofCheck, ProverMessage, Status, TacticSpan
from verirl.provers.lean.axioms import (
    allowed_axioms_for,
    axioms_rejection,
    rejected_for_axioms,
    theorem_constant,
)
from verirl.provers.lean.options import LeanOptions, TacticSource, UnsolvedGoals
from verirl.provers.lean.safety import locate_lean_proof
from verirl.provers.lean.text import (
    is_ident_char,
    lean_position_to_offset,
    line_starts,
    offset_to_lean_position,
    span_index_at,
    split_lean_proof,
    top_level_ranges,
)

_SORRY_WARNING = re.compile(r"declaration uses ['`]sorry['`]", re.IGNORECASE)
_UNSOLVED = re.compile(r"\s*unsolved goals", re.IGNORECASE)
_KERNEL_MVARS = re.compile(r"\s*\(kernel\) declaration has metavariables", re.IGNORECASE)


# ---- parsing ----------------------------------------------------------------------------


@dataclass(frozen=True)
class LeanPos:
    line: int  # 1-based; 0 means "no position"
    column: int  # 0-based, in code points


@dataclass(frozen=True)
class LeanMessage:
    severity: str  # "error" | "warning" | "info" | "trace"
    data: str
    pos: LeanPos | None = None
    end_pos: LeanPos | None = None


@dataclass(frozen=True)
class LeanSorry:
    goal: str
    pos: LeanPos | None = None
    end_pos: LeanPos | None = None
    proof_state: int | None = None


@dataclass(frozen=True)
class LeanTactic:
    tactic: str
    goals: str
    pos: LeanPos | None
    end_pos: LeanPos | None
    proof_state: int | None = None
    used_constants: tuple[str, ...] | None = None  # HEAD only


@dataclass(frozen=True)
class ReplReply:
    """One parsed REPL reply. ``kind``: ``command`` (``env`` set), ``proof_step``
    (``proof_state`` set) or ``error`` (the ``{"message": ...}`` refusal, in ``error``)."""

    kind: Literal["command", "proof_step", "error"]
    env: int | None = None
    messages: tuple[LeanMessage, ...] = ()
    sorries: tuple[LeanSorry, ...] = ()
    tactics: tuple[LeanTactic, ...] = ()
    infotree: Any = None
    proof_state: int | None = None
    goals: tuple[str, ...] = ()
    proof_status: str | None = None  # HEAD only
    traces: tuple[str, ...] = ()
    error: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)


def _pos(obj: Any) -> LeanPos | None:
    if not isinstance(obj, Mapping):
        return None
    return LeanPos(int(obj.get("line", 0)), int(obj.get("column", 0)))


def _int_or_none(value: Any) -> int | None:
    return int(value) if isinstance(value, int) else None


def parse_repl_reply(obj: Any, *, require_env: bool = True) -> ReplReply:
    """Parse one decoded JSON reply of either REPL version.

    ``require_env=False`` accepts a command reply without ``env`` (Kimina's legacy
    responses drop it). Raises ``ValueError`` naming the problem when ``obj`` is not a
    reply object."""
    if not isinstance(obj, Mapping):
        raise ValueError(f"a REPL reply must be a JSON object, got {type(obj).__name__}")
    messages = tuple(
        LeanMessage(
            severity=str(m.get("severity", "error")),
            data=str(m.get("data", "")),
            pos=_pos(m.get("pos")),
            end_pos=_pos(m.get("endPos")),
        )
        for m in obj.get("messages") or ()
    )
    sorries = tuple(
        LeanSorry(
            goal=str(s.get("goal", "")),
            pos=_pos(s.get("pos")),
            end_pos=_pos(s.get("endPos")),
            proof_state=_int_or_none(s.get("proofState")),
        )
        for s in obj.get("sorries") or ()
    )
    tactics = tuple(
        LeanTactic(
            tactic=str(t.get("tactic", "")),
            goals=str(t.get("goals", "")),
            pos=_pos(t.get("pos")),
            end_pos=_pos(t.get("endPos")),
            proof_state=_int_or_none(t.get("proofState")),
            used_constants=(
                tuple(t["usedConstants"]) if isinstance(t.get("usedConstants"), list) else None
            ),
        )
        for t in obj.get("tactics") or ()
    )
    common: dict[str, Any] = {
        "messages": messages,
        "sorries": sorries,
        "tactics": tactics,
        "infotree": obj.get("infotree"),
        "traces": tuple(str(t) for t in obj.get("traces") or ()),
        "raw": dict(obj),
    }
    if "env" in obj:
        return ReplReply(kind="command", env=_int_or_none(obj["env"]), **common)
    if not require_env and "proofState" not in obj and "message" not in obj:
        return ReplReply(kind="command", **common)
    if "proofState" in obj:
        return ReplReply(
            kind="proof_step",
            proof_state=_int_or_none(obj["proofState"]),
            goals=tuple(str(g) for g in obj.get("goals") or ()),
            proof_status=obj.get("proofStatus"),
            **common,
        )
    if "message" in obj:
        return ReplReply(kind="error", error=str(obj["message"]), raw=dict(obj))
    raise ValueError(
        "a REPL reply needs 'env' (command), 'proofState' (tactic) or 'message' (refusal); "
        f"got keys {sorted(obj)}"
    )


# ---- pass / fail and the first error ------------------------------------------------------


def is_sorry_warning(text: str) -> bool:
    """``declaration uses 'sorry'`` (v4.9) or ``declaration uses `sorry``` (HEAD)."""
    return bool(_SORRY_WARNING.search(text))


def repl_reply_passed(reply: ReplReply) -> bool:
    """The whole proof was accepted: not a ``{"message"}`` refusal, no error message, no
    sorry, no ``declaration uses sorry`` warning in either quote style; for a tactic-mode
    reply also ``proofStatus == "Completed"`` (HEAD) or no goals left (v4.9)."""
    if reply.kind == "error" or reply.sorries:
        return False
    for m in reply.messages:
        if m.severity == "error" or is_sorry_warning(m.data):
            return False
    if reply.kind == "proof_step":
        if reply.proof_status is not None:
            return reply.proof_status == "Completed"
        return not reply.goals
    return True


def _at_by_keyword(code: str, offset: int) -> bool:
    return code.startswith("by", offset) and (
        offset + 2 >= len(code) or not is_ident_char(code[offset + 2])
    )


def first_error_offset(
    reply: ReplReply,
    code: str,
    proof_start: int,
    *,
    unsolved_goals: UnsolvedGoals = "skip_at_by",
) -> int | None:
    """Offset in ``code`` of the first error inside the proof region ``[proof_start,
    len(code)]``: the smallest start among error messages and sorries, where

    - the kernel's ``declaration has metavariables`` error (at the declaration) never counts;
    - ``unsolved goals`` never counts when reported at a ``by`` keyword: Lean puts it on the
      ``by`` of the block that did not close its goal, ahead of every tactic of that block
      so it names no failing tactic. Reported elsewhere (the ``}`` of a
      ``{ }`` block, a ``·`` bullet, a ``case``), it names the block that failed and counts
      (the paper's "tactics appearing in the error log"). ``unsolved_goals="skip_all"``
      skips it everywhere, as DeepSeek-Prover-V1.5 does.

    ``None`` when no error remains."""
    starts = line_starts(code)
    found: list[int] = []
    for m in reply.messages:
        if m.severity != "error" or m.pos is None or _KERNEL_MVARS.match(m.data):
            continue
        off = lean_position_to_offset(code, m.pos.line, m.pos.column, starts=starts)
        if off is None or off < proof_start:
            continue
        if _UNSOLVED.match(m.data) and (unsolved_goals == "skip_all" or _at_by_keyword(code, off)):
            continue
        found.append(off)
    for sorry in reply.sorries:
        if sorry.pos is None:
            continue
        off = lean_position_to_offset(code, sorry.pos.line, sorry.pos.column, starts=starts)
        if off is not None and off >= proof_start:
            found.append(off)
    return min(found) if found else None


def classify_reply(
    reply: ReplReply,
    code: str,
    proof_start: int,
    *,
    unsolved_goals: UnsolvedGoals = "skip_at_by",
) -> tuple[Status, int | None]:
    """(status, first error offset in ``code``): ``pass``; ``error`` with the offset of the
    first located error (:func:`first_error_offset`), or ``None`` for a refusal or an error
    outside the proof; ``incomplete`` when the only failures are unsolved goals that name
    no tactic, leftover metavariables, or an unlocated sorry warning."""
    if reply.kind == "error":
        return "error", None
    if repl_reply_passed(reply):
        return "pass", None
    offset = first_error_offset(reply, code, proof_start, unsolved_goals=unsolved_goals)
    if offset is not None:
        return "error", offset
    if any(
        m.severity == "error" and not (_UNSOLVED.match(m.data) or _KERNEL_MVARS.match(m.data))
        for m in reply.messages
    ):
        return "error", None
    return "incomplete", None


# ---- from a problem and a proof to a ProofCheck --------------------------------------------


@dataclass(frozen=True)
class LeanCheckPlan:
    """What to send for one proof, and how to map Lean's positions back.

    ``code`` is the statement followed by the proof (what Lean elaborates after the header);
    an offset ``o`` in ``code`` is ``o + shift`` in the submitted text. ``proof_start`` is
    where the proof starts in ``code``. ``layout`` holds the layout splitter's spans in
    submitted-text coordinates."""

    submitted: str
    code: str
    shift: int
    proof_start: int
    layout: tuple[TacticSpan, ...]
    rejection: str | None = None

    def to_submitted(self, code_offset: int | None) -> int | None:
        """Map a ``code`` offset into the submitted text; ``None`` before the proof."""
        if code_offset is None or code_offset < self.proof_start:
            return None
        return min(code_offset + self.shift, len(self.submitted))


def plan_lean_check(
    problem: FormalProblem,
    proof: str,
    *,
    reject_unsafe: bool = True,
    split_semicolons: bool = False,
    split_bullets: bool = True,
) -> LeanCheckPlan:
    """Locate the proof in the submitted text (:func:`locate_lean_proof`), build the code
    to elaborate and split the proof by layout. ``proof`` is either the text after the
    statement's ``:= by`` or a snippet containing the exact statement."""
    loc = locate_lean_proof(proof, problem.statement, problem.prelude)
    if loc.statement_start is None:
        statement = problem.statement
        joins = not statement or statement[-1].isspace() or not proof or proof[0].isspace()
        prefix = statement + ("" if joins else " ")
        code, shift, proof_start = prefix + proof, -len(prefix), len(prefix)
    else:
        code = proof[loc.statement_start :]
        shift = loc.statement_start
        proof_start = loc.proof_start - loc.statement_start
    _, column = offset_to_lean_position(code, proof_start)
    spans = split_lean_proof(
        code[proof_start:],
        first_line_column=column,
        split_semicolons=split_semicolons,
        split_bullets=split_bullets,
    )
    base = proof_start + shift
    layout = tuple(
        TacticSpan(index=s.index, start=s.start + base, end=s.end + base, text=s.text)
        for s in spans
    )
    return LeanCheckPlan(
        submitted=proof,
        code=code,
        shift=shift,
        proof_start=proof_start,
        layout=layout,
        rejection=loc.rejection if reject_unsafe else None,
    )


def repl_tactic_ranges(reply: ReplReply, code: str) -> list[tuple[int, int]]:
    """``allTactics`` ranges as ``code`` offsets (tactics without a position are dropped)."""
    starts = line_starts(code)
    out = []
    for t in reply.tactics:
        if t.pos is None or t.end_pos is None:
            continue
        s = lean_position_to_offset(code, t.pos.line, t.pos.column, starts=starts)
        e = lean_position_to_offset(code, t.end_pos.line, t.end_pos.column, starts=starts)
        if s is not None and e is not None and e > s:
            out.append((s, e))
    return out


# Tactic-info nodes that only group or focus other tactics (excluded from the credited
# tactics, as the REPL's allTactics excludes them).
_COMBINATOR_NODES = frozenset(
    {
        None,  # the `by` token itself
        "by",
        "Lean.Parser.Term.byTactic",
        "Lean.Parser.Tactic.tacticSeq",
        "Lean.Parser.Tactic.tacticSeq1Indented",
        "Lean.Parser.Tactic.tacticSeqBracketed",
        "Lean.cdot",
        "Lean.Parser.Tactic.paren",
        "Lean.Parser.Tactic.«tactic_<;>_»",
        "Lean.Parser.Tactic.«tactic_;_»",
    }
)


def infotree_items(infotree: Any) -> Iterator[Mapping[str, Any]]:
    """Every item of an info tree (an object with its ``node`` and ``children``), depth
    first; anything that is not an object is skipped."""
    stack = list(infotree) if isinstance(infotree, list) else []
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            stack.extend(item.get("children") or ())
            yield item


def infotree_tactic_ranges(infotree: Any, code: str) -> list[tuple[int, int]]:
    """Ranges (``code`` offsets) of the non-combinator ``TacticInfo`` nodes of an info tree
    (``infotree: "original"``/``"substantive"``), for servers without ``allTactics``
    (Kimina). Synthetic ranges are skipped."""
    starts = line_starts(code)
    out: list[tuple[int, int]] = []
    for item in infotree_items(infotree):
        node = item.get("node")
        if item.get("kind") != "TacticInfo" or not isinstance(node, Mapping):
            continue
        stx = node.get("stx") or {}
        name = node.get("name")
        if name in _COMBINATOR_NODES or stx.get("kind") in _COMBINATOR_NODES - {None}:
            continue
        rng = stx.get("range") or {}
        if rng.get("synthetic"):
            continue
        a, b = _pos(rng.get("start")), _pos(rng.get("finish"))
        if a is None or b is None:
            continue
        s = lean_position_to_offset(code, a.line, a.column, starts=starts)
        e = lean_position_to_offset(code, b.line, b.column, starts=starts)
        if s is not None and e is not None and e > s:
            out.append((s, e))
    return sorted(out)


def choose_spans(
    plan: LeanCheckPlan,
    lean_ranges: Sequence[tuple[int, int]],
    *,
    tactic_source: TacticSource,
    located_error: bool,
) -> tuple[TacticSpan, ...]:
    """The credited tactics: Lean's own top-level tactic ranges or the layout split.

    - ``layout``: always the layout splitter.
    - ``repl``: Lean's ranges whenever it listed any inside the proof, else layout.
    - ``auto`` (default): Lean's ranges only when no tactic failed. After a failing tactic
      Lean elaborates nothing more in that block, so its listing stops there and the
      tactics after the error, which must still get d2, exist only in the text.

    Lean's listing and the layout split agree on lines and ``·`` bullets; they differ on
    ``t1 <;> t2`` and ``t1; t2`` (two tactics for Lean, one layout line unless
    ``split_semicolons``). Use ``layout`` for one granularity across a whole group.
    """
    use_lean = tactic_source == "repl" or (tactic_source == "auto" and not located_error)
    if tactic_source == "layout" or not use_lean:
        return plan.layout
    spans: list[TacticSpan] = []
    for s, e in top_level_ranges([r for r in lean_ranges if r[0] >= plan.proof_start]):
        a, b = plan.to_submitted(s), plan.to_submitted(e)
        if a is None or b is None or b <= a:
            continue
        spans.append(TacticSpan(index=len(spans), start=a, end=b, text=plan.submitted[a:b]))
    return tuple(spans) if spans else plan.layout


def _message(plan: LeanCheckPlan, m: LeanMessage, starts: Sequence[int]) -> ProverMessage:
    severity = m.severity if m.severity in ("error", "warning") else "info"
    start = end = None
    if m.pos is not None:
        start = plan.to_submitted(
            lean_position_to_offset(plan.code, m.pos.line, m.pos.column, starts=starts)
        )
    if m.end_pos is not None:
        end = plan.to_submitted(
            lean_position_to_offset(plan.code, m.end_pos.line, m.end_pos.column, starts=starts)
        )
    return ProverMessage(severity=severity, text=m.data, start=start, end=end)  # type: ignore[arg-type]


def build_lean_check(
    plan: LeanCheckPlan,
    reply: ReplReply,
    *,
    backend: str,
    elapsed_s: float,
    tactic_source: TacticSource = "auto",
    unsolved_goals: UnsolvedGoals = "skip_at_by",
    lean_ranges: Sequence[tuple[int, int]] | None = None,
    raw: Mapping[str, Any] | None = None,
) -> ProofCheck:
    """The :class:`ProofCheck` for one reply. ``lean_ranges`` are tactic ranges in ``code``
    offsets (default: the reply's ``allTactics``); ``unsolved_goals`` as in
    :func:`first_error_offset`."""
    status, error_offset = classify_reply(
        reply, plan.code, plan.proof_start, unsolved_goals=unsolved_goals
    )
    ranges = repl_tactic_ranges(reply, plan.code) if lean_ranges is None else lean_ranges
    spans = choose_spans(
        plan, ranges, tactic_source=tactic_source, located_error=error_offset is not None
    )
    first_error_index = None
    if error_offset is not None:
        first_error_index = span_index_at(spans, plan.to_submitted(error_offset) or 0)
    starts = line_starts(plan.code)
    messages = [_message(plan, m, starts) for m in reply.messages]
    if reply.kind == "error":
        messages.append(ProverMessage(severity="error", text=reply.error or ""))
    return ProofCheck(
        passed=status == "pass",
        status=status,
        tactics=spans,
        first_error_index=first_error_index,
        messages=tuple(messages),
        elapsed_s=elapsed_s,
        backend=backend,
        raw={"code": plan.code, "reply": dict(reply.raw), **(raw or {})},
    )


def unchecked_result(
    plan: LeanCheckPlan,
    status: Status,
    *,
    backend: str,
    detail: str,
    elapsed_s: float = 0.0,
    raw: Mapping[str, Any] | None = None,
) -> ProofCheck:
    """A failed :class:`ProofCheck` without a usable reply (``rejected``, ``timeout``,
    ``crash``): the layout spans, no located error, ``detail`` as the only message."""
    return ProofCheck(
        passed=False,
        status=status,
        tactics=plan.layout,
        first_error_index=None,
        messages=(ProverMessage(severity="error", text=detail),),
        timed_out=status == "timeout",
        rejection=detail if status == "rejected" else None,
        elapsed_s=elapsed_s,
        backend=backend,
        raw={"code": plan.code, **(raw or {})},
    )


# ---- what the backends share ------------------------------------------------------------


class LeanBackend:
    """The part of a Lean :class:`~verirl.provers.base.ProofChecker` that does not depend on
    how Lean is reached: planning a check with the backend's options (safety filter, layout
    splitter), answering a rejected proof without Lean, and building the
    :class:`ProofCheck` for a reply with its span options."""

    name: str
    options: LeanOptions

    # the options, read where the backends use them
    @property
    def tactic_source(self) -> TacticSource:
        return self.options.tactic_source

    @property
    def unsolved_goals(self) -> UnsolvedGoals:
        return self.options.unsolved_goals

    @property
    def split_semicolons(self) -> bool:
        return self.options.split_semicolons

    @property
    def split_bullets(self) -> bool:
        return self.options.split_bullets

    @property
    def reject_unsafe(self) -> bool:
        return self.options.reject_unsafe

    @property
    def check_axioms(self) -> bool:
        return self.options.check_axioms

    @property
    def allowed_axioms(self) -> tuple[str, ...]:
        return self.options.allowed_axioms

    @property
    def backend_version(self) -> str:
        return self.options.backend_version

    def _axioms_target(self, problem: FormalProblem) -> str | None:
        """The constant ``#print axioms`` is asked about (None: the statement names none)."""
        return theorem_constant(problem)

    def _axioms_verdict(
        self, problem: FormalProblem, check: ProofCheck, messages: Sequence[LeanMessage]
    ) -> ProofCheck:
        """``check`` (a pass) kept, or turned into ``rejected``, given the messages of the
        ``#print axioms`` command for the problem's theorem (:mod:`verirl.provers.lean.axioms`)."""
        allowed = allowed_axioms_for(problem, self.allowed_axioms)
        reason = axioms_rejection(messages, self._axioms_target(problem), allowed)
        raw = {"axioms_messages": [m.data for m in messages]}
        if reason is None:
            return dataclasses.replace(check, raw={**check.raw, **raw})
        return rejected_for_axioms(check, reason, raw=raw)

    def _plan(self, problem: FormalProblem, proof: str) -> LeanCheckPlan:
        return plan_lean_check(
            problem,
            proof,
            reject_unsafe=self.reject_unsafe,
            split_semicolons=self.split_semicolons,
            split_bullets=self.split_bullets,
        )

    def _rejected(self, plan: LeanCheckPlan) -> ProofCheck:
        """The answer for a plan the safety filter refused (``plan.rejection`` is set)."""
        return unchecked_result(plan, "rejected", backend=self.name, detail=plan.rejection or "")

    def _built(
        self,
        plan: LeanCheckPlan,
        reply: ReplReply,
        *,
        elapsed_s: float,
        raw: Mapping[str, Any],
        lean_ranges: Sequence[tuple[int, int]] | None = None,
    ) -> ProofCheck:
        return build_lean_check(
            plan,
            reply,
            backend=self.name,
            elapsed_s=elapsed_s,
            tactic_source=self.tactic_source,
            unsolved_goals=self.unsolved_goals,
            lean_ranges=lean_ranges,
            raw=raw,
        )
