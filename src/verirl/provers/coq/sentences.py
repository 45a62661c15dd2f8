"""Split Coq source text into sentences, the unit Coq executes (and that we credit).

Coq's own rules (checked against ``coqc -time`` on the stdlib sources in
``tests/provers/coq/test_sentences.py``):

- A sentence ends at a ``.`` followed by whitespace or the end of the text. ``..`` (recursive
  notations), ``Nat.add`` (qualified names), ``1.5`` (decimals) and ``x.(f)`` (projections) do
  not end a sentence, because the dot is followed by something else or preceded by a dot.
- Comments ``(* ... *)`` nest; a ``"`` inside a comment opens a string that may contain ``*)``.
  Strings are ``"..."`` with ``""`` as an escaped quote. Neither can end a sentence.
- At the start of a sentence, a run of one repeated bullet character (``-``, ``+``, ``*``) is a
  sentence of its own (``-reflexivity.`` is the bullet ``-`` then ``reflexivity.``), and so are
  ``{``, ``}`` and a goal selector followed by a brace (``2: {``, ``all: {``, ``[x]: {``).

Offsets are Python ``str`` indices (code points). Coq reports UTF-8 *byte* offsets; convert with
:class:`ByteOffsets`.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass
from typing import Literal

SentenceKind = Literal["command", "bullet", "brace", "selector_brace"]

# Vernacular keywords that open a theorem-like statement (followed by a name and a proof).
THEOREM_KEYWORDS = frozenset(
    {"Theorem", "Lemma", "Fact", "Remark", "Corollary", "Proposition", "Property", "Example"}
)
_BULLET_CHARS = "-+*"
_BLANKS = frozenset(" \t\n\r\x0c")  # what Coq's lexer treats as whitespace
# A goal selector followed by an opening brace: "2: {", "1-3, 5: {", "all: {", "[n]: {".
_SELECTOR_BRACE = re.compile(
    r"(?:all|par|!|\[\s*[A-Za-z_][\w']*\s*\]"
    r"|\d+(?:\s*-\s*\d+)?(?:\s*,\s*\d+(?:\s*-\s*\d+)?)*)\s*:\s*\{"
)


@dataclass(frozen=True)
class Sentence:
    """One sentence: ``text[start:end]`` of the source. ``code`` is the same slice with the
    comments and string contents blanked out (same length), for lexical checks.
    ``terminated`` is False only for a final command that has no closing ``.``."""

    start: int
    end: int
    kind: SentenceKind
    text: str
    code: str
    terminated: bool = True

    @property
    def structural(self) -> bool:
        """Bullets and braces: they move the focus but prove nothing by themselves."""
        return self.kind != "command"


@dataclass(frozen=True)
class Scan:
    """The result of scanning a text: its sentences, the text with comments and string
    contents replaced by spaces, and what was left open at the end (if anything)."""

    sentences: tuple[Sentence, ...]
    code: str
    unterminated: Literal["comment", "string"] | None = None


def _blank(text: str) -> tuple[str, list[bool], Literal["comment", "string"] | None]:
    """Return (code, is_code, unterminated): ``code`` has comment characters and the characters
    inside strings replaced by spaces (string quotes stay); ``is_code[i]`` is False inside
    comments (including their delimiters)."""
    n = len(text)
    out = list(text)
    is_code = [True] * n
    open_kind: Literal["comment", "string"] | None = None
    i = 0
    while i < n:
        c = text[i]
        if c == "(" and text.startswith("(*", i):
            depth, j = 0, i
            open_kind = "comment"
            while j < n:
                if text.startswith("(*", j):
                    depth += 1
                    j += 2
                elif text.startswith("*)", j):
                    depth -= 1
                    j += 2
                    if depth == 0:
                        open_kind = None
                        break
                elif text[j] == '"':
                    j = _string_end(text, j)
                    if j > n:
                        j = n
                else:
                    j += 1
            j = min(j, n)
            for k in range(i, j):
                out[k] = " " if text[k] != "\n" else "\n"
                is_code[k] = False
            if open_kind is not None:
                return "".join(out), is_code, open_kind
            i = j
        elif c == '"':
            j = _string_end(text, i)
            if j > n:
                for k in range(i + 1, n):
                    out[k] = " " if text[k] != "\n" else "\n"
                return "".join(out), is_code, "string"
            for k in range(i + 1, j - 1):
                out[k] = " " if text[k] != "\n" else "\n"
            i = j
        else:
            i += 1
    return "".join(out), is_code, None


def _string_end(text: str, i: int) -> int:
    """Index just past the string starting at ``text[i] == '"'``; ``len(text) + 1`` when the
    string is not closed."""
    n = len(text)
    j = i + 1
    while j < n:
        if text[j] == '"':
            if j + 1 < n and text[j + 1] == '"':
                j += 2
                continue
            return j + 1
        j += 1
    return n + 1


def scan(text: str) -> Scan:
    """Split ``text`` into sentences (see the module docstring for the rules)."""
    code, is_code, unterminated = _blank(text)
    n = len(text)
    sentences: list[Sentence] = []
    i = 0
    while True:
        while i < n and (not is_code[i] or text[i] in _BLANKS):
            i += 1
        if i >= n:
            break
        start, c = i, code[i]
        if c in _BULLET_CHARS:
            j = i
            while j < n and code[j] == c:
                j += 1
            sentences.append(Sentence(start, j, "bullet", text[start:j], code[start:j]))
            i = j
            continue
        if c in "{}":
            sentences.append(Sentence(start, i + 1, "brace", c, c))
            i += 1
            continue
        m = _SELECTOR_BRACE.match(code, i)
        if m:
            j = m.end()
            sentences.append(Sentence(start, j, "selector_brace", text[start:j], code[start:j]))
            i = j
            continue
        end, terminated = _command_end(text, code, is_code, i)
        sentences.append(
            Sentence(start, end, "command", text[start:end], code[start:end], terminated)
        )
        i = end
    return Scan(tuple(sentences), code, unterminated)


@functools.lru_cache(maxsize=16)
def scan_cached(text: str) -> Scan:
    """:func:`scan`, remembered for the last texts seen: for a problem's prelude, which many
    checks share (a Coq library file's prefix can hold thousands of sentences)."""
    return scan(text)


def _command_end(text: str, code: str, is_code: list[bool], i: int) -> tuple[int, bool]:
    """End (exclusive) of the command starting at ``i``, and whether a ``.`` closed it."""
    n = len(text)
    j = i
    while True:
        j = code.find(".", j)
        if j < 0:
            return n, False
        if is_code[j] and (j + 1 >= n or text[j + 1] in _BLANKS):
            run = 1  # the dots ending here: "." and "..." end a sentence, ".." does not
            while j - run >= i and text[j - run] == "." and is_code[j - run]:
                run += 1
            if run != 2:
                return j + 1, True
        j += 1


def split_sentences(text: str) -> list[Sentence]:
    """The sentences of ``text`` in order (character offsets)."""
    return list(scan(text).sentences)


class ByteOffsets:
    """Convert between character offsets and UTF-8 byte offsets of one text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._ascii = text.isascii()
        if self._ascii:
            self._bytes: list[int] = []
        else:
            acc, table = 0, [0]
            for ch in text:
                acc += len(ch.encode("utf-8"))
                table.append(acc)
            self._bytes = table
        self.n_bytes = len(text) if self._ascii else self._bytes[-1]

    def to_byte(self, char_offset: int) -> int:
        """Byte offset of character offset ``char_offset`` (clamped to the text)."""
        char_offset = max(0, min(char_offset, len(self.text)))
        return char_offset if self._ascii else self._bytes[char_offset]

    def to_char(self, byte_offset: int) -> int:
        """Character offset of the character containing byte ``byte_offset`` (clamped)."""
        byte_offset = max(0, min(byte_offset, self.n_bytes))
        if self._ascii:
            return byte_offset
        k = bisect.bisect_right(self._bytes, byte_offset) - 1
        return max(0, min(k, len(self.text)))


def line_start_bytes(text: str) -> list[int]:
    """UTF-8 byte offset of the start of each line (index 0 = line 1)."""
    starts, acc = [0], 0
    for line in text.split("\n")[:-1]:
        acc += len(line.encode("utf-8")) + 1
        starts.append(acc)
    return starts
