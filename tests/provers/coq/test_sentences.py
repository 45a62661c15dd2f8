"""The Coq sentence splitter: hand-written cases, and Coq's own split (``coqc -time``) on the
stdlib sources Debian installs and on the recorded fixture inputs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from verirl.provers.coq.sentences import ByteOffsets, line_start_bytes, scan, split_sentences

HAVE_COQC = shutil.which("coqc") is not None
needs_coq = pytest.mark.skipif(not HAVE_COQC, reason="coqc not installed (apt-get install coq)")
STDLIB = Path("/usr/lib/ocaml/coq/theories")
FIXTURES = Path(
    os.environ.get(
        "VERIRL_FIXTURES", Path(__file__).resolve().parents[4] / "shared" / "provers-fixtures"
    )
)


def texts(src: str) -> list[str]:
    return [s.text for s in split_sentences(src)]


# ---- hand-written cases --------------------------------------------------------------------
def test_terminator_rules() -> None:
    src = 'apply Nat.add_comm. exact (1.5). idtac "a. b". pose (x := 1)...'
    assert texts(src) == [
        "apply Nat.add_comm.",
        "exact (1.5).",
        'idtac "a. b".',
        "pose (x := 1)...",
    ]
    # ".." does not end a sentence; "..." does; ".(" (projection) and ".}" do not.
    assert texts('Notation "[ x ; .. ; y ]" := (cons x .. (cons y nil) ..). Check 1.') == [
        'Notation "[ x ; .. ; y ]" := (cons x .. (cons y nil) ..).',
        "Check 1.",
    ]
    assert texts("exact x.(f). done.") == ["exact x.(f).", "done."]
    assert texts("idtac.(* c *) x.") == ["idtac.(* c *) x."]


def test_comments_nest_and_hold_strings() -> None:
    src = '(* outer (* inner. *) still. "a string *) inside" *) intros. (* tail. *)'
    sents = split_sentences(src)
    assert [s.text for s in sents] == ["intros."]
    assert src[sents[0].start : sents[0].end] == "intros."
    mid = split_sentences("intros (* a. b *) n.")
    assert [s.text for s in mid] == ["intros (* a. b *) n."]
    assert mid[0].code == "intros            n."


def test_strings_with_escaped_quotes() -> None:
    assert texts('idtac "say ""hi"". ok". exact I.') == ['idtac "say ""hi"". ok".', "exact I."]


def test_bullets_braces_and_selectors() -> None:
    src = "split. { split. + reflexivity. ++ auto. } -reflexivity. 2: { auto. } all: auto. [x]: {"
    sents = split_sentences(src)
    assert [s.text for s in sents] == [
        "split.",
        "{",
        "split.",
        "+",
        "reflexivity.",
        "++",
        "auto.",
        "}",
        "-",
        "reflexivity.",
        "2: {",
        "auto.",
        "}",
        "all: auto.",
        "[x]: {",
    ]
    kinds = [s.kind for s in sents]
    assert kinds[1] == "brace" and kinds[3] == "bullet" and kinds[10] == "selector_brace"
    assert kinds[13] == "command" and kinds[14] == "selector_brace"


def test_unterminated_parts_are_reported() -> None:
    sc = scan("intros. exact I")
    assert [s.terminated for s in sc.sentences] == [True, False]
    assert scan("intros. (* open").unterminated == "comment"
    assert scan('idtac "open').unterminated == "string"
    assert scan("intros. (* ok *)").unterminated is None


def test_offsets_are_characters_and_convert_to_bytes() -> None:
    src = "(* ∀α *) intros n. (* é *) exact n."
    sents = split_sentences(src)
    assert [src[s.start : s.end] for s in sents] == ["intros n.", "exact n."]
    offsets = ByteOffsets(src)
    for s in sents:
        b = offsets.to_byte(s.start)
        assert src.encode()[b:].decode().startswith(s.text)
        assert offsets.to_char(b) == s.start
    assert offsets.to_byte(2) == 2 and offsets.to_byte(4) == 6  # "∀" is 3 bytes
    assert line_start_bytes("aé\nb\n\nc") == [0, 4, 6, 7]


# ---- agreement with Coq's own split ---------------------------------------------------------
_CHARS = re.compile(r"^Chars (\d+) - (\d+) \[", re.M)


def coq_spans(path: Path, workdir: Path) -> tuple[int, list[tuple[int, int]]]:
    """Coq's sentence spans (UTF-8 bytes) for every sentence it executed."""
    target = workdir / path.name
    shutil.copy(path, target)
    res = subprocess.run(
        ["coqc", "-q", "-time", target.name],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return res.returncode, [(int(a), int(b)) for a, b in _CHARS.findall(res.stdout)]


def our_spans(text: str) -> list[tuple[int, int]]:
    offsets = ByteOffsets(text)
    return [(offsets.to_byte(s.start), offsets.to_byte(s.end)) for s in split_sentences(text)]


STDLIB_FILES = [
    "Bool/Bool.v",
    "Arith/Between.v",
    "Logic/Decidable.v",
    "Strings/String.v",
    "Program/Wf.v",
    "ZArith/Zdiv.v",
    "Sorting/Permutation.v",
    "Structures/OrdersTac.v",
    "Arith/Compare_dec.v",
    "Lists/ListSet.v",
]


@pytest.mark.coq
@needs_coq
@pytest.mark.parametrize("rel", STDLIB_FILES)
def test_split_matches_coqc_on_stdlib(rel: str, tmp_path: Path) -> None:
    path = STDLIB / rel
    if not path.exists():
        pytest.skip(f"stdlib source {path} not installed (apt-get install coq)")
    rc, coq = coq_spans(path, tmp_path)
    ours = our_spans(path.read_text(encoding="utf-8"))
    assert rc == 0, f"coqc failed on {rel}"
    assert len(coq) > 50
    assert ours == coq, f"{rel}: first difference at sentence " + str(
        next(i for i, (a, b) in enumerate(zip(ours, coq, strict=False)) if a != b)
    )


@pytest.mark.coq
@needs_coq
@pytest.mark.parametrize("name", ["tricky.v", "valid.v", "unicode.v", "assumptions.v"])
def test_split_matches_coqc_on_fixture_inputs(name: str, tmp_path: Path) -> None:
    path = FIXTURES / "coq" / "v" / name
    if not path.exists():
        pytest.skip(f"fixtures not found at {path} (set VERIRL_FIXTURES)")
    rc, coq = coq_spans(path, tmp_path)
    ours = our_spans(path.read_text(encoding="utf-8"))
    assert coq, f"coqc printed no sentence for {name}"
    assert ours[: len(coq)] == coq  # files that fail stop early: compare what Coq ran
    if rc == 0:
        assert len(ours) == len(coq)
