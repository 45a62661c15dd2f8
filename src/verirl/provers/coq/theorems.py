"""Coq theorems to prove: the bundled graded set and a loader for a user's ``.v`` files.

A ``.v`` file is read sentence by sentence (:mod:`verirl.provers.coq.sentences`). A theorem is
a sentence starting with ``Theorem``/``Lemma``/``Fact``/``Remark``/``Corollary``/
``Proposition``/``Property``/``Example`` (optionally after ``Local``/``#[...]``); its proof is
every sentence after it up to and including the first ``Qed.``/``Defined.``/``Admitted.``/
``Abort.``. A proof ending in ``Qed.``/``Defined.`` is kept as the reference proof; one ending in
``Admitted.`` (a stub, e.g. ``Proof. Admitted.``) or ``Abort.`` leaves ``proof=None`` -- a
statement to prove. A comment ``(* grade: N *)`` between the previous theorem and this one sets
its difficulty grade.

The prelude of each theorem is either

- ``"header"``: the text before the first theorem (imports and shared definitions; every
  theorem is independent), which is how the bundled file is written, or
- ``"preceding"``: the whole text before the theorem, earlier theorems and their proofs
  included, so that a lemma may use the ones before it (earlier ``Admitted`` stubs then act as
  assumptions, which the user vouches for). Theorems inside an open ``Section`` or ``Module``
  get that context too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from verirl.provers.base import ProofSystem, Theorem
from verirl.provers.coq.sentences import THEOREM_KEYWORDS, Sentence, scan

PreludeMode = Literal["header", "preceding"]

_PREFIX = re.compile(r"^(?:#\[[^\]]*\]\s*|(?:Local|Global|Polymorphic|Monomorphic)\s+)*")
_GRADE = re.compile(r"\(\*\s*grade:\s*(\d+)\s*\*\)")
_END_WORDS = {"Qed", "Defined", "Admitted", "Abort"}


@dataclass(frozen=True)
class CoqTheorem(Theorem):
    """A Coq theorem (:class:`~verirl.provers.base.Theorem`)."""

    system: ClassVar[ProofSystem] = "coq"


def _head(s: Sentence) -> list[str]:
    code = _PREFIX.sub("", " ".join(s.code.split()))
    return re.findall(r"[A-Za-z_][A-Za-z0-9_']*", code)[:2]


def parse_theorems(
    text: str, *, prelude_mode: PreludeMode = "preceding", source: str = ""
) -> list[CoqTheorem]:
    """All theorems of a ``.v`` text (see the module docstring)."""
    sentences = [s for s in scan(text).sentences]
    out: list[CoqTheorem] = []
    header_end: int | None = None
    last_end = 0
    k = 0
    while k < len(sentences):
        s = sentences[k]
        words = _head(s) if not s.structural else []
        if not words or words[0] not in THEOREM_KEYWORDS or len(words) < 2:
            k += 1
            continue
        if header_end is None:
            header_end = sentences[k - 1].end if k > 0 else 0
        grades = _GRADE.findall(text[last_end : s.start])
        j = k + 1
        while j < len(sentences):
            w = _head(sentences[j]) if not sentences[j].structural else []
            if w and w[0] in _END_WORDS:
                break
            j += 1
        if j >= len(sentences):  # no end: an unfinished theorem at the end of the file
            break
        end_word = _head(sentences[j])[0]
        proof = None
        if end_word in ("Qed", "Defined") and j > k + 1:
            proof = text[sentences[k + 1].start : sentences[j].end]
        start = sentences[0].start
        stop = header_end if prelude_mode == "header" else (sentences[k - 1].end if k else 0)
        prelude = text[start:stop].strip() + "\n"
        out.append(
            CoqTheorem(
                name=words[1],
                statement=s.text,
                prelude=prelude if prelude.strip() else "",
                proof=proof,
                grade=int(grades[-1]) if grades else None,
                source=source,
            )
        )
        last_end = sentences[j].end
        k = j + 1
    return out


def load_coq_file(
    path: str | Path, *, prelude_mode: PreludeMode = "preceding", only_stubs: bool = False
) -> list[CoqTheorem]:
    """Theorems from a user's ``.v`` file; ``only_stubs`` keeps those ending in
    ``Admitted.``/``Abort.`` (the statements still to prove)."""
    p = Path(path)
    theorems = parse_theorems(
        p.read_text(encoding="utf-8"), prelude_mode=prelude_mode, source=str(p)
    )
    return [t for t in theorems if t.proof is None] if only_stubs else theorems
