"""Lean text helpers: positions in code points, masking, the layout splitter."""

from __future__ import annotations

import pytest

from tests.provers.lean.fixtures import VERSIONS, transcript
from verirl.provers.base import TacticSpan
from verirl.provers.lean.reply import parse_repl_reply, repl_tactic_ranges
from verirl.provers.lean.text import (
    lean_position_to_offset,
    line_starts,
    mask_comments_and_strings,
    offset_to_lean_position,
    span_index_at,
    split_lean_proof,
    top_level_ranges,
)


def texts(proof: str, **kw: object) -> list[str]:
    return [s.text for s in split_lean_proof(proof, **kw)]  # type: ignore[arg-type]


# ---- positions -------------------------------------------------------------------------


def test_positions_count_code_points_not_bytes() -> None:
    code = "theorem t : ∀ x : ℕ, x = x := by\n  intro x\n  rfl"
    # line 2 column 2 is the `i` of `intro`; `∀` and `ℕ` on line 1 are 3 UTF-8 bytes each but
    # one code point, so the offset is len(line 1) + 1 (newline) + 2.
    assert lean_position_to_offset(code, 2, 2) == len(code.split("\n")[0]) + 1 + 2
    assert code[lean_position_to_offset(code, 2, 2) :].startswith("intro x")
    # `:=` on line 1 is at code-point column 27 (in UTF-8 bytes it would be 31)
    assert code[lean_position_to_offset(code, 1, 27) : lean_position_to_offset(code, 1, 29)] == ":="


def test_position_zero_and_out_of_range() -> None:
    code = "ab\ncd"
    assert lean_position_to_offset(code, 0, 0) is None  # tactic-mode errors carry 0:0
    assert lean_position_to_offset(code, 3, 0) is None
    assert lean_position_to_offset(code, 1, 9) == 2  # clamped to the end of line 1
    assert lean_position_to_offset(code, 2, 2) == 5  # end of input
    assert offset_to_lean_position(code, 4) == (2, 1)
    assert line_starts(code) == [0, 3]


def test_repl_tactic_ranges_hit_the_tactic_text() -> None:
    for version in VERSIONS:
        ((request, reply),) = transcript(version, "all_tactics")
        code = request["cmd"]
        ranges = repl_tactic_ranges(parse_repl_reply(reply), code)
        assert [code[s:e] for s, e in ranges] == ["have t := 37", "exact t"]


# ---- masking ---------------------------------------------------------------------------


def test_mask_keeps_offsets_and_blanks_comments_and_literals() -> None:
    text = "simp -- sorry\nexact \"admit\" /- a /- nested -/ sorry -/ h' 'x'\nrfl"
    masked = mask_comments_and_strings(text)
    assert len(masked) == len(text)
    assert masked.count("\n") == text.count("\n")
    assert "sorry" not in masked and "admit" not in masked and "nested" not in masked
    assert masked.split("\n")[0].rstrip() == "simp"
    assert 'exact "     "' in masked  # quotes kept, contents blanked
    assert "h'" in masked  # a prime is not a char literal
    assert "'x'" not in masked and "' '" in masked
    assert masked.endswith("rfl")


def test_unterminated_comment_masks_to_the_end() -> None:
    assert mask_comments_and_strings("simp /- open\nsorry").strip() == "simp"


# ---- the layout splitter ---------------------------------------------------------------


def test_split_one_line_and_semicolons() -> None:
    proof = " have t := 37; exact t"  # after `def f : Nat := by` (column 17)
    assert texts(proof, first_line_column=17) == ["have t := 37; exact t"]
    spans = split_lean_proof(proof, first_line_column=17, split_semicolons=True)
    assert [(s.start, s.end, s.text) for s in spans] == [
        (1, 13, "have t := 37"),
        (15, 22, "exact t"),
    ]


def test_semicolon_after_nested_by_is_not_split() -> None:
    proof = "\n  have h : P := by simp; ring\n  exact h"
    assert texts(proof, split_semicolons=True) == ["have h : P := by simp; ring", "exact h"]
    assert texts("\n  cases h <;> simp", split_semicolons=True) == ["cases h <;> simp"]


def test_split_multiline_proof_with_comments_alternatives_and_brackets() -> None:
    proof = (
        "\n  intro x\n"
        "  -- a comment at the base column\n"
        "  /- a block\n  comment -/\n"
        "  rcases x with ⟨a, b⟩ | c\n"
        "  | inl h => simp\n"
        "  nlinarith [sq_nonneg (a - b),\n"
        "  sq_nonneg c]\n"
        "  exact\n"
        "    foo"
    )
    spans = split_lean_proof(proof)
    assert [s.text for s in spans] == [
        "intro x",
        "rcases x with ⟨a, b⟩ | c\n  | inl h => simp",
        "nlinarith [sq_nonneg (a - b),\n  sq_nonneg c]",
        "exact\n    foo",
    ]
    assert [s.index for s in spans] == [0, 1, 2, 3]
    assert all(proof[s.start : s.end] == s.text for s in spans)


def test_bullets_own_their_block_and_split_inside() -> None:
    proof = "\n  constructor\n  · intro h\n    exact h\n  . simp\n  all_goals rfl"
    assert texts(proof) == ["constructor", "· intro h", "exact h", ". simp", "all_goals rfl"]
    assert texts(proof, split_bullets=False) == [
        "constructor",
        "· intro h\n    exact h",
        ". simp",
        "all_goals rfl",
    ]


def test_calc_steps_below_the_base_column_continue_the_calc() -> None:
    # the REPL's calc transcript: `by calc` on the statement line, steps at column 2
    proof = " calc\n  3 = 4 := by sorry\n  4 = 5 := by sorry"
    assert texts(proof, first_line_column=21) == ["calc\n  3 = 4 := by sorry\n  4 = 5 := by sorry"]


def test_calc_underscore_steps_and_else_continue() -> None:
    proof = (
        "\n  calc a = b := by simp\n  _ = c := by ring\n  if h : p then\n    simp\n  else\n    rfl"
    )
    assert texts(proof) == [
        "calc a = b := by simp\n  _ = c := by ring",
        "if h : p then\n    simp\n  else\n    rfl",
    ]


def test_column_zero_proof_and_leading_by() -> None:
    # Lean 4.9 accepted tactics at column 0 (the Kimina example); a continuation line inside
    # an open bracket stays with its tactic.
    proof = "\n\nnlinarith [sq_nonneg (a - b),\nsq_nonneg (a + b)]\nlinarith"
    assert texts(proof) == ["nlinarith [sq_nonneg (a - b),\nsq_nonneg (a + b)]", "linarith"]
    assert texts(" by\n  simp\n  ring") == ["simp", "ring"]


def test_empty_and_comment_only_proofs_have_no_tactics() -> None:
    assert split_lean_proof("") == []
    assert split_lean_proof("  -- nothing here\n  /- or here -/") == []


# ---- span lookup -----------------------------------------------------------------------


def test_top_level_ranges_drop_nested_and_duplicates() -> None:
    # calc (22..60) contains its step block and the two sorries (calc.expected.out)
    ranges = [(22, 60), (25, 60), (37, 42), (55, 60), (37, 42)]
    assert top_level_ranges(ranges) == [(22, 60)]
    assert top_level_ranges([(5, 9), (0, 3)]) == [(0, 3), (5, 9)]


@pytest.mark.parametrize(
    ("offset", "expected"),
    [(0, 0), (4, 0), (5, 1), (7, 1), (12, 2), (30, 2)],
)
def test_span_index_at(offset: int, expected: int) -> None:
    spans = [TacticSpan(0, 0, 5, "intro"), TacticSpan(1, 7, 10, "abc"), TacticSpan(2, 12, 15, "x")]
    # inside → that span; in the gap (5, 6) → the next span; past the end → the last span
    assert span_index_at(spans, offset) == expected
    assert span_index_at([], 3) is None
