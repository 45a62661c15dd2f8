"""REPL replies of both versions (v4.9.0-rc1, the paper's, and HEAD): parsing, pass/fail, the
first error and the resulting ProofCheck, replayed from the recorded transcripts."""

from __future__ import annotations

import pytest

from tests.provers.lean.fixtures import REPL_DIR, VERSIONS, require, transcript, transcript_names
from verirl.provers.base import FormalProblem, ProofCheck
from verirl.provers.lean.reply import (
    build_lean_check,
    classify_reply,
    is_sorry_warning,
    parse_repl_reply,
    plan_lean_check,
    repl_reply_passed,
)


def check_from_transcript(
    version: str, name: str, index: int, statement: str, **kw: object
) -> tuple[ProofCheck, str]:
    """Replay reply ``index`` of a transcript as the answer to ``statement`` + proof, where
    the proof is the rest of the recorded command. Returns the check and the proof text."""
    request, reply = transcript(version, name)[index]
    code = request["cmd"]
    assert code.startswith(statement), "the statement must be a prefix of the recorded command"
    proof = code[len(statement) :]
    problem = FormalProblem(system="lean", name=name, statement=statement)
    plan = plan_lean_check(problem, proof, reject_unsafe=False)
    assert plan.code == code  # we would send exactly the recorded command
    check = build_lean_check(
        plan,
        parse_repl_reply(reply),
        backend="lean-repl",
        elapsed_s=0.0,
        tactic_source=kw.get("tactic_source", "auto"),  # type: ignore[arg-type]
        unsolved_goals=kw.get("unsolved_goals", "skip_at_by"),  # type: ignore[arg-type]
    )
    return check, proof


def span_texts(check: ProofCheck) -> list[str]:
    return [t.text for t in check.tactics]


# ---- every recorded reply parses -------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_every_recorded_reply_parses(version: str) -> None:
    require(REPL_DIR / version)
    names = transcript_names(version)
    assert len(names) >= 15
    kinds: set[str] = set()
    for name in names:
        for _, raw in transcript(version, name):
            reply = parse_repl_reply(raw)
            kinds.add(reply.kind)
            expected = (
                "command" if "env" in raw else "proof_step" if "proofState" in raw else "error"
            )
            assert reply.kind == expected, name
            assert len(reply.messages) == len(raw.get("messages", []))
            assert len(reply.sorries) == len(raw.get("sorries", []))
            assert all(m.severity in {"error", "warning", "info", "trace"} for m in reply.messages)
    assert kinds == {"command", "proof_step", "error"}


def test_unparsable_reply_is_named() -> None:
    with pytest.raises(ValueError, match="needs 'env'"):
        parse_repl_reply({"foo": 1})
    with pytest.raises(ValueError, match="JSON object"):
        parse_repl_reply([1, 2])


def test_v49_null_end_pos_and_head_missing_lists() -> None:
    ((_, raw),) = transcript("v4.9.0-rc1", "unfinished_tactic_block")
    reply = parse_repl_reply(raw)
    assert raw["messages"][0]["endPos"] is None
    assert reply.messages[0].end_pos is None
    assert reply.messages[0].pos is not None and reply.messages[0].pos.column == 17
    ((_, raw),) = transcript("HEAD", "unfinished_tactic_block")
    assert parse_repl_reply(raw).sorries == () and parse_repl_reply(raw).tactics == ()


@pytest.mark.parametrize(
    ("version", "text"),
    [("v4.9.0-rc1", "declaration uses 'sorry'"), ("HEAD", "declaration uses `sorry`")],
)
def test_sorry_warning_in_both_quote_styles(version: str, text: str) -> None:
    ((_, raw),) = transcript(version, "tactic_sorry")
    reply = parse_repl_reply(raw)
    assert reply.messages[0].data == text
    assert is_sorry_warning(text)
    # even without the sorries list, the warning alone fails the proof
    warning_only = parse_repl_reply({"env": 0, "messages": raw["messages"]})
    assert not repl_reply_passed(warning_only)


@pytest.mark.parametrize("version", VERSIONS)
def test_tactic_mode_replies(version: str) -> None:
    steps = transcript(version, "proof_step")
    last = parse_repl_reply(steps[-1][1])
    assert last.kind == "proof_step" and repl_reply_passed(last)  # Completed / no goals
    assert not repl_reply_passed(parse_repl_reply(steps[1][1]))  # goals remain
    (_, _), (_, raw) = transcript(version, "invalid_tactic")
    reply = parse_repl_reply(raw)
    assert reply.messages[0].pos is not None and reply.messages[0].pos.line == 0
    assert "my_fake_premise" in reply.messages[0].data
    assert (reply.proof_status is None) == (version == "v4.9.0-rc1")
    assert not repl_reply_passed(reply)


def test_refusal_is_an_error() -> None:
    ((_, raw),) = transcript("HEAD", "unknown_environment")
    reply = parse_repl_reply(raw)
    assert reply.kind == "error" and reply.error == "Unknown environment."
    assert classify_reply(reply, "def f : Nat := by sorry", 17) == ("error", None)


# ---- exact ProofChecks, both versions ---------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_all_tactics_passes_with_lean_ranges(version: str) -> None:
    check, _ = check_from_transcript(version, "all_tactics", 0, "def f : Nat := by")
    assert (check.passed, check.status, check.first_error_index) == (True, "pass", None)
    # Lean's own ranges (columns 18..30 and 32..39, minus the 17 characters of the statement)
    assert [(t.start, t.end, t.text) for t in check.tactics] == [
        (1, 13, "have t := 37"),
        (15, 22, "exact t"),
    ]
    layout, _ = check_from_transcript(
        version, "all_tactics", 0, "def f : Nat := by", tactic_source="layout"
    )
    assert span_texts(layout) == ["have t := 37; exact t"]


@pytest.mark.parametrize("version", VERSIONS)
def test_unsolved_goals_at_by_name_no_tactic(version: str) -> None:
    # the only error is "unsolved goals" at the statement's `by` (1:15)
    check, _ = check_from_transcript(version, "incomplete", 0, "def f : Nat := by")
    assert (check.passed, check.status, check.first_error_index) == (False, "incomplete", None)
    assert span_texts(check) == ["apply Nat.succ"]


@pytest.mark.parametrize("version", VERSIONS)
def test_unsolved_goals_at_a_closing_brace_name_the_block(version: str) -> None:
    # two "unsolved goals": case pos at 3:19 (the `}` of `{ apply Nat.succ }`, which did not
    # close its goal) and case neg at 1:26 (the statement's `by`)
    statement = "def f (x : Bool) : Nat := by"
    check, _ = check_from_transcript(version, "incomplete", 1, statement)
    assert span_texts(check) == ["by_cases x", "{ apply Nat.succ }"]
    assert (check.passed, check.status, check.first_error_index) == (False, "error", 1)
    assert [m.start for m in check.messages] == [
        check.tactics[1].end - 1,  # `}` at 3:19, inside the proof
        None,  # the `by` at 1:26 lies before the proof
    ]
    # DeepSeek-Prover's rule skips every "unsolved goals": no failing tactic then
    skip_all, _ = check_from_transcript(
        version, "incomplete", 1, statement, unsolved_goals="skip_all"
    )
    assert (skip_all.status, skip_all.first_error_index) == ("incomplete", None)


@pytest.mark.parametrize("version", VERSIONS)
def test_have_by_sorry_blames_the_have(version: str) -> None:
    statement = "theorem foo (x : Int) : x = x := by"
    check, _ = check_from_transcript(version, "have_by_sorry", 0, statement)
    assert (check.passed, check.status, check.first_error_index) == (False, "error", 0)
    assert span_texts(check) == ["have h : x = 1 := by sorry"]


@pytest.mark.parametrize("version", VERSIONS)
def test_calc_with_sorries(version: str) -> None:
    check, _ = check_from_transcript(version, "calc", 0, "example : 3 = 5 := by")
    assert (check.passed, check.status, check.first_error_index) == (False, "error", 0)
    assert span_texts(check) == ["calc\n  3 = 4 := by sorry\n  4 = 5 := by sorry"]


@pytest.mark.parametrize("version", VERSIONS)
def test_error_inside_first_of_two_tactics(version: str) -> None:
    check, proof = check_from_transcript(version, "no_goal_sorry", 0, "example : True := by")
    assert (check.status, check.first_error_index) == ("error", 0)
    assert span_texts(check) == ["have h : set Nat := by sorry", "sorry"]
    # the first error (2:11, `set Nat`) maps into the proof text
    assert proof[check.messages[0].start :].startswith("set Nat")


def test_unfinished_block_drifted_between_versions() -> None:
    # v4.9: a parse error at the end of input plus unsolved goals; HEAD: only unsolved goals
    old, _ = check_from_transcript("v4.9.0-rc1", "unfinished_tactic_block", 0, "def f : Nat := by")
    new, _ = check_from_transcript("HEAD", "unfinished_tactic_block", 0, "def f : Nat := by")
    assert (old.passed, old.status, old.first_error_index) == (False, "error", None)
    assert old.tactics == ()
    assert (new.passed, new.status, new.tactics, new.first_error_index) == (
        False,
        "incomplete",
        (),
        None,
    )


def test_head_line_breaks() -> None:
    statement = "theorem foo : 1 = 1 := by"
    # `sorry` at column 0 is not part of the proof at HEAD: a parse error at 2:0
    check, _ = check_from_transcript("HEAD", "line_breaks", 0, statement)
    assert (check.status, check.first_error_index, span_texts(check)) == ("error", 0, ["sorry"])
    assert check.messages[1].text.startswith("unexpected token 'sorry'")
    check, _ = check_from_transcript("HEAD", "line_breaks", 1, statement)
    assert (check.status, check.first_error_index) == ("error", 0)
    check, _ = check_from_transcript("HEAD", "line_breaks", 2, "theorem bar : 1 = 1 := by")
    assert (check.passed, span_texts(check)) == (True, ["rfl"])  # the comment is skipped


def test_kernel_metavariables_are_incomplete() -> None:
    check, _ = check_from_transcript("HEAD", "app_type_mismatch", 0, "example : 1 = 0 := by")
    assert (check.passed, check.status, check.first_error_index) == (False, "incomplete", None)
    assert span_texts(check) == ["cases 1", "rfl", "apply ?succ"]


def _unsolved_at(line: int, column: int) -> dict:
    pos = {"line": line, "column": column}
    return {
        "env": 0,
        "messages": [
            {"severity": "error", "pos": pos, "endPos": pos, "data": "unsolved goals\n⊢ Q"}
        ],
    }


def test_unsolved_goals_at_a_nested_by_or_a_bullet() -> None:
    # (constructed replies) a nested `have ... := by` block that leaves its goal open is
    # reported at its `by` (2:16) and names no tactic; a bullet is reported at the `·` (3:2)
    code = "theorem t : P := by\n  have h : Q := by\n    simp\n  exact h"
    reply = parse_repl_reply(_unsolved_at(2, 16))
    assert code[code.index("by\n    simp") :].startswith("by")
    assert classify_reply(reply, code, len("theorem t : P := by")) == ("incomplete", None)
    code = "theorem t : P := by\n  constructor\n  · simp\n  · rfl"
    reply = parse_repl_reply(_unsolved_at(3, 2))
    assert classify_reply(reply, code, len("theorem t : P := by")) == (
        "error",
        code.index("· simp"),
    )
