"""Lean 4 theorems to prove: the bundled graded set and a loader for a user's ``.lean`` files.

A ``.lean`` file is read by layout, without Lean (comments and string contents are masked
first, :func:`verirl.provers.lean.text.mask_comments_and_strings`):

- A **declaration** starts on a line whose first character (column 0) begins a command:
  ``theorem``, ``def``, ``namespace``, ``@[...]``, ``#eval``, ... It runs to the next such
  line. Lines inside it that start at column 0 but begin no command (a tactic written without
  indentation) stay inside it.
- A **theorem** is a declaration starting with ``theorem`` or ``lemma`` (optionally after
  ``@[...]`` attributes and ``private``/``protected``/``nonrec`` modifiers, on the same line or
  on attribute lines just above). Its **statement** is the text from the declaration start to
  the ``by`` after the first ``:=`` outside brackets (so it ends in ``:= by``, the shape a
  :class:`~verirl.provers.base.FormalProblem` statement has); its **proof** is the tactic
  block after ``by``, kept with its indentation. A proof that contains ``sorry`` is a stub
  (``proof=None``): a statement to prove. A theorem proved by a term (``:= foo``) has no
  tactics to check; it is skipped as a problem but stays in the prelude of later theorems.
- A comment ``-- grade: N`` between the previous declaration and a theorem sets the theorem's
  difficulty grade.

The prelude of each theorem is either ``"header"`` (the code before the first theorem, for
files whose theorems are independent, like the bundled one) or ``"preceding"`` (all code
before the theorem, so that a theorem may use earlier ones; stubs before it then act as
assumptions, which the user vouches for).

A malformed file raises :class:`LeanTheoremFileError` (a
:class:`~verirl.errors.UserInputError`) whose message starts with ``file:line:``: a theorem
without a name or without ``:=``, an empty tactic block, a grade that is not a number, an
unclosed block comment, a duplicated theorem name, or a file without any theorem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from verirl.errors import UserInputError
from verirl.provers.base import ProofSystem, Theorem
from verirl.provers.lean.text import line_starts, mask_comments_and_strings

PreludeMode = Literal["header", "preceding"]

THEOREM_WORDS = frozenset({"theorem", "lemma"})
# Words that begin a command at column 0 (end the previous declaration).
_COMMAND_WORDS = frozenset(
    {
        "theorem",
        "lemma",
        "def",
        "abbrev",
        "example",
        "instance",
        "opaque",
        "axiom",
        "structure",
        "class",
        "inductive",
        "mutual",
        "namespace",
        "section",
        "end",
        "open",
        "export",
        "variable",
        "universe",
        "set_option",
        "attribute",
        "import",
        "noncomputable",
        "private",
        "protected",
        "nonrec",
        "partial",
        "unsafe",
        "macro",
        "macro_rules",
        "syntax",
        "elab",
        "notation",
        "infix",
        "infixl",
        "infixr",
        "prefix",
        "postfix",
        "deriving",
    }
)
_MODIFIERS = frozenset({"private", "protected", "nonrec", "noncomputable"})
_WORD = re.compile(r"[^\W\d][\w'!?.]*|«[^»]*»(?:\.[\w'!?.«»]+)?")
_ATTRIBUTES = re.compile(r"@\[[^\]]*\]\s*")
_KEYWORD = re.compile(r"(?<![\w.'])(?:theorem|lemma)(?![\w'!?])")
_NAME = re.compile(r"\s+([^\W\d][\w'!?.]*|«[^»]*»)")
_GRADE = re.compile(r"--\s*grade:\s*(\S*)")
_OPEN = "([{⟨⦃"
_CLOSE = ")]}⟩⦄"


class LeanTheoremFileError(UserInputError):
    """A ``.lean`` file the loader cannot read; the message names the file and line."""


@dataclass(frozen=True)
class LeanTheorem(Theorem):
    """A Lean theorem (:class:`~verirl.provers.base.Theorem`); its statement ends in
    ``:= by`` and its proof is the tactic block after ``by``."""

    system: ClassVar[ProofSystem] = "lean"


@dataclass(frozen=True)
class _Decl:
    start: int  # offset of the declaration's first line
    end: int  # offset after its last code character
    words: tuple[str, ...]  # its first words, modifiers and attributes skipped


def _unclosed_comment(text: str) -> int | None:
    """Offset of a ``/-`` comment that is never closed, or None."""
    i, n, opened, depth = 0, len(text), 0, 0
    while i < n:
        if depth == 0 and text.startswith("--", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif depth == 0 and text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif text.startswith("/-", i):
            if depth == 0:
                opened = i
            depth += 1
            i += 2
        elif depth and text.startswith("-/", i):
            depth -= 1
            i += 2
        else:
            i += 1
    return opened if depth else None


class _Reader:
    """One file's text, masked text and line table, and errors that name a line."""

    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source or "<text>"
        self.masked = mask_comments_and_strings(text)
        self.starts = line_starts(text)

    def line_of(self, offset: int) -> int:
        lo, hi = 0, len(self.starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    def error(self, offset: int, message: str) -> LeanTheoremFileError:
        return LeanTheoremFileError(f"{self.source}:{self.line_of(offset)}: {message}")

    def code_end(self, a: int, b: int) -> int:
        """End of ``[a, b)`` without trailing blanks and comments."""
        while b > a and self.masked[b - 1].isspace():
            b -= 1
        return b

    def line_words(self, start: int) -> tuple[str, ...]:
        """The first words of the masked line at ``start``, attributes and modifiers skipped;
        ``("@[",)`` for a line holding only attributes."""
        end = self.masked.find("\n", start)
        line = self.masked[start : len(self.masked) if end < 0 else end]
        rest = _ATTRIBUTES.sub("", line) if line.startswith("@[") else line
        if line.startswith("@[") and not rest.strip():
            return ("@[",)
        words = _WORD.findall(rest)[:4]
        while words and words[0] in _MODIFIERS and len(words) > 1:
            words = words[1:]
        return tuple(words)

    def declarations(self) -> list[_Decl]:
        heads: list[tuple[int, tuple[str, ...]]] = []
        for s in self.starts:
            if s >= len(self.masked) or self.masked[s].isspace():
                continue
            words = self.line_words(s)
            first = words[0] if words else ""
            if first in _COMMAND_WORDS or first == "@[" or self.masked[s] == "#":
                heads.append((s, words))
        decls: list[_Decl] = []
        k = 0
        while k < len(heads):
            start, words = heads[k]
            j = k
            while words == ("@[",) and j + 1 < len(heads):  # attribute lines above a decl
                j += 1
                words = heads[j][1]
            stop = heads[j + 1][0] if j + 1 < len(heads) else len(self.text)
            decls.append(_Decl(start, self.code_end(start, stop), words))
            k = j + 1
        return decls

    def assignment(self, a: int, b: int) -> int | None:
        """Offset of the first ``:=`` outside brackets in ``[a, b)``."""
        depth = 0
        for k in range(a, b):
            ch = self.masked[k]
            if ch in _OPEN:
                depth += 1
            elif ch in _CLOSE:
                depth = max(0, depth - 1)
            elif depth == 0 and self.masked.startswith(":=", k):
                return k
        return None


def _grade(reader: _Reader, a: int, b: int) -> int | None:
    grade = None
    for m in _GRADE.finditer(reader.text, a, b):
        value = m.group(1)
        if not value.isdigit():
            raise reader.error(m.start(), f"grade must be a whole number >= 0, got {value!r}")
        grade = int(value)
    return grade


def parse_lean_theorems(
    text: str, *, prelude_mode: PreludeMode = "preceding", source: str = ""
) -> list[LeanTheorem]:
    """All theorems of a ``.lean`` text (see the module docstring); raises
    :class:`LeanTheoremFileError` naming ``source`` and the line for a malformed file."""
    reader = _Reader(text, source)
    unclosed = _unclosed_comment(text)
    if unclosed is not None:
        raise reader.error(unclosed, "block comment `/-` is never closed with `-/`")
    decls = reader.declarations()
    first_code = next((k for k, ch in enumerate(reader.masked) if not ch.isspace()), 0)
    out: list[LeanTheorem] = []
    seen: dict[str, int] = {}
    header_end: int | None = None
    previous_end = 0
    for index, decl in enumerate(decls):
        if not decl.words or decl.words[0] not in THEOREM_WORDS:
            previous_end = decl.end
            continue
        keyword = _KEYWORD.search(reader.masked, decl.start, decl.end)
        named = _NAME.match(reader.masked, keyword.end()) if keyword else None
        if named is None:
            raise reader.error(decl.start, f"`{decl.words[0]}` without a name")
        name = named.group(1)
        if header_end is None:
            header_end = decls[index - 1].end if index > 0 else 0
        grade = _grade(reader, previous_end, decl.start)
        assign = reader.assignment(decl.start, decl.end)
        if assign is None:
            raise reader.error(
                decl.start, f"theorem {name}: no `:=` (write the proof as `:= by <tactics>`)"
            )
        by = re.compile(r"\s*by(?![\w'!?])").match(reader.masked, assign + 2)
        if by is None:  # a term proof: context for later theorems, not a problem
            previous_end = decl.end
            continue
        proof_start, proof_end = by.end(), decl.end
        body = text[proof_start:proof_end]
        if not reader.masked[proof_start:proof_end].strip():
            raise reader.error(assign, f"theorem {name}: the tactic block after `by` is empty")
        if name in seen:
            raise reader.error(
                decl.start, f"theorem {name} is already declared on line {seen[name]}"
            )
        seen[name] = reader.line_of(decl.start)
        stub = re.search(r"(?<![\w.'])sorry(?![\w'!?])", reader.masked[proof_start:proof_end])
        stop = header_end if prelude_mode == "header" else previous_end
        prelude = text[first_code:stop].strip() if stop > first_code else ""
        out.append(
            LeanTheorem(
                name=name,
                statement=text[decl.start : proof_start],
                prelude=prelude + "\n" if prelude else "",
                proof=None if stub else _proof_block(body),
                grade=grade,
                source=source,
                line=reader.line_of(decl.start),
            )
        )
        previous_end = decl.end
    if not out:
        raise reader.error(0, "no `theorem ... := by` found")
    return out


def _proof_block(body: str) -> str:
    """The tactic block after ``by``: from the line of its first tactic (indentation kept)
    when it starts on a new line, else from the first tactic; trailing blanks dropped."""
    lead = re.match(r"(?:[ \t]*\n)+", body)
    return body[lead.end() :].rstrip() if lead else body.strip()


def load_lean_file(
    path: str | Path, *, prelude_mode: PreludeMode = "preceding", only_stubs: bool = False
) -> list[LeanTheorem]:
    """Theorems from a user's ``.lean`` file; ``only_stubs`` keeps those whose proof is
    ``sorry`` (the statements still to prove)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LeanTheoremFileError(f"{p}: cannot read the Lean file ({exc})") from None
    theorems = parse_lean_theorems(text, prelude_mode=prelude_mode, source=str(p))
    return [t for t in theorems if t.proof is None] if only_stubs else theorems


__all__ = [
    "THEOREM_WORDS",
    "LeanTheorem",
    "LeanTheoremFileError",
    "load_lean_file",
    "parse_lean_theorems",
]
