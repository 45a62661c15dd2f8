"""The Lean safety filter lexes as Lean does: raw strings, interpolation, nested comments, char
literals. Each bypass of the hostile-output issue is a regression test here."""

from __future__ import annotations

import pytest

from verirl.provers.lean.safety import lean_proof_violation, locate_lean_proof
from verirl.provers.lean.text import mask_comments_and_strings

WRITE = '#eval IO.FS.writeFile "pwned" "x"'


# Hostile proofs the filter must reject (also replayed through both Lean backends in
# test_agreement.py).
HOSTILE = [
    f"rfl\n{WRITE}",  # a command after the proof
    f'have h := r"\\"\n  rfl\n{WRITE}',  # r"\" used to throw the string blanking out of step
    'have h := r"\\"\n  native_decide -- "',
    "native_decide",  # as the whole proof
    'exact s!"{(sorry : Nat)}"',  # interpolation is code
    'exact (m!"a{1}b{(sorry : Nat)}c").length',
    's!"{ "}" } {sorry}"',  # a string nested inside the interpolation
    'exact "{" sorry "',  # plain reading shows sorry, interpolated reading hides it
    'have := r#"x"# ; sorry',
    'have := r##"a"#b"## ; admit',
    "/- /- nested -/ still comment -/ sorry",
    "exact '\"' ; sorry -- the char literal holds a quote",
    "rfl /- \ud800 -/",  # a lone surrogate is not text
    "rfl -- \x00",
    'exact throwError "{sorry}"',
]


@pytest.mark.parametrize("proof", HOSTILE)
def test_filter_rejects(proof: str) -> None:
    assert lean_proof_violation(proof) is not None


@pytest.mark.parametrize(
    "proof",
    [
        "simp -- sorry in a comment",
        "/- sorry -/ rfl",
        'exact "sorry native_decide #eval".length',
        'exact r"sorry\\".length',
        "exact 'a'",
        "intro h'\n  exact h'",
        "rfl -- \u2028 a line separator is not a line end for Lean",
    ],
)
def test_filter_accepts(proof: str) -> None:
    assert lean_proof_violation(proof) is None


def test_masking_keeps_offsets_and_shows_interpolation() -> None:
    for text in ['a r"\\" b', 's!"x{y}z"', 'r#"q"# "{"', "/- /- -/ -/"]:
        for interpolate_all in (False, True):
            assert len(mask_comments_and_strings(text, interpolate_all=interpolate_all)) == len(
                text
            )
    assert mask_comments_and_strings('s!"x{y}z"') == 's!" {y} "'
    assert mask_comments_and_strings('a r"\\" b') == 'a r" " b'
    assert mask_comments_and_strings('"{" x "') == '" " x "'
    assert mask_comments_and_strings('"{" x "', interpolate_all=True) == '"{"   "'


def test_statement_then_command_is_rejected() -> None:
    statement = "theorem t : 1 = 1 := by"
    loc = locate_lean_proof(f'{statement}\n  have := r"\\"\n  rfl\n{WRITE}', statement)
    assert loc.statement_start == 0 and loc.rejection is not None
