"""The Coq standard library as theorems to prove, on the Tactician/CoqHammer protocol.

The protocol (Blaauwbroek, Urban & Geuvers 2020, "The Tactician", arXiv:2008.00120, §6;
Czajka & Kaliszyk 2018, "Hammer for Coq", JAR 61, §5): every lemma of the library is proved
with only what precedes it — its file's earlier content and the modules the file loads — so
the lemma itself and everything after it are unavailable.

Here a lemma's problem is its statement with its file's **prefix** as the prelude: the text
of the ``.v`` file before the statement, earlier lemmas and their library proofs included,
inside whatever ``Section``/``Module`` is open there. A checker runs that prefix in a fresh
session (a ``coqidetop`` worker loads it once and rewinds to it between attempts, see
:mod:`verirl.provers.coq.idetop`). The file is not the compiled library module
(``Coq.Lists.List``), which is never loaded, and the modules the prefix loads cannot load it
back (the library's dependencies are acyclic), so a proof that names the lemma it proves, or
a later one, fails with *The reference ... was not found*.

Mining (pure: a function of the ``.v`` text). A lemma is a sentence starting with ``Lemma``,
``Theorem``, ``Fact``, ``Remark``, ``Corollary`` or ``Proposition`` (after ``Local``/
``#[...]``) whose proof runs to the first ``Qed.``/``Defined.``; one that ends ``Admitted.``/
``Abort.`` is skipped. A lemma is kept when

- its file is not under ``Init/`` (Coq's prelude loads ``Coq.Init.*`` into every session, so
  those lemmas cannot be hidden without ``-noinit``);
- its prefix passes the prelude rules of :func:`verirl.provers.coq.safety.check_prelude` (no
  ``Declare ML Module``: the files that load plugins are left out);
- its library proof passes the proof filter of :func:`verirl.provers.coq.safety.check_proof`
  (a tactic script: no vernacular inside, such as ``Opaque`` or ``Fail``) with one tactic or
  more.

Its difficulty is the length of the library's own proof in tactics
(:func:`verirl.provers.coq.attempt.prepare_attempt`: a bullet or brace belongs to the tactic
after it). Which of these lemmas the checker can actually run in their context is measured,
not assumed: :mod:`verirl.provers.coq.stdlib_manifest`.

The split is by file: a file is held out when the first 8 bytes of
``sha256("verirl/coq-stdlib/<seed>/<relative path>")``, read as a number in [0, 1), fall below
``heldout_share`` (10% of the files for seed 0), the same on every machine.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from verirl.provers.base import FormalProblem
from verirl.provers.coq.attempt import prepare_attempt
from verirl.provers.coq.install import stdlib_sources
from verirl.provers.coq.safety import check_prelude, check_statement
from verirl.provers.coq.sentences import Sentence, scan

LEMMA_KEYWORDS = frozenset({"Lemma", "Theorem", "Fact", "Remark", "Corollary", "Proposition"})
HELDOUT_SHARE = 0.1
SPLIT_SEED = 0
TOP_TACTICS = 20
"""Library proofs of this many tactics or more share the top difficulty (``TOP_TACTICS - 1``)."""
Split = Literal["train", "heldout"]

_PREFIX = re.compile(r"^(?:#\[[^\]]*\]\s*|(?:Local|Global|Polymorphic|Monomorphic)\s+)*")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_']*")
_END_WORDS = {"Qed", "Defined", "Admitted", "Abort", "Save"}
_OPENERS = {"Section", "Module"}
_CONTEXT_WORDS = {
    "Variable",
    "Variables",
    "Hypothesis",
    "Hypotheses",
    "Context",
    "Let",
    "Implicit",
    "Notation",
    "Infix",
}
CONTEXT_CHARS = 2000
"""Most characters of section context shown in a prompt (the latest declarations kept)."""


@dataclass(frozen=True)
class LibraryLemma:
    """One lemma of a library file. ``file``: path relative to the library's ``theories``
    directory; ``index``: its place among the file's lemmas (all of them, kept or not);
    ``start``: the character offset of its statement (the prelude is ``text[:start]``);
    ``tactics``: the length of the library's proof in tactics; ``skip``: why it is left out
    (``None``: kept)."""

    file: str
    index: int
    name: str
    statement: str
    start: int
    proof: str
    tactics: int
    skip: str | None = None

    @property
    def module(self) -> str:
        """The library module the file compiles to (``Coq.Lists.List``)."""
        return "Coq." + self.file.removesuffix(".v").replace("/", ".")

    @property
    def id(self) -> str:
        return f"{self.file}:{self.name}"


def _head(s: Sentence) -> list[str]:
    return _WORD.findall(_PREFIX.sub("", " ".join(s.code.split())))[:2]


def mine_text(text: str, file: str) -> list[LibraryLemma]:
    """Every lemma of one ``.v`` text, kept or not (see the module docstring)."""
    sentences = scan(text).sentences
    out: list[LibraryLemma] = []
    in_init = file.startswith("Init/")
    k = 0
    while k < len(sentences):
        s = sentences[k]
        words = [] if s.structural else _head(s)
        if len(words) < 2 or words[0] not in LEMMA_KEYWORDS:
            k += 1
            continue
        j = k + 1
        while j < len(sentences):
            w = [] if sentences[j].structural else _head(sentences[j])
            if w and w[0] in _END_WORDS:
                break
            j += 1
        if j >= len(sentences):
            break
        end = _head(sentences[j])[0]
        proof = text[sentences[k + 1].start : sentences[j].end] if j > k + 1 else ""
        attempt = prepare_attempt(proof) if proof else None
        skip = None
        if in_init:
            skip = "Init: loaded into every session by Coq's prelude"
        elif end not in ("Qed", "Defined"):
            skip = f"the library leaves it unproved ({end})"
        elif check_statement(s.text) is not None:
            skip = "the statement is not one declaration"
        elif attempt is None or attempt.rejection is not None:
            why = attempt.rejection if attempt is not None else "empty"
            skip = f"the library proof is not a tactic script ({why})"
        elif not attempt.tactics:
            skip = "the library proof has no tactic"
        out.append(
            LibraryLemma(
                file=file,
                index=len(out),
                name=words[1],
                statement=s.text,
                start=s.start,
                proof=proof,
                tactics=len(attempt.tactics) if attempt is not None else 0,
                skip=skip,
            )
        )
        k = j + 1
    rej = check_prelude(text, ("Coq",)) if out and not in_init else None
    if rej is not None:  # from here on, the prefix loads a plugin or touches files
        cut = sentences[rej.sentence_index].start if rej.sentence_index is not None else 0
        why = f"its prefix is refused ({rej.reason})"
        out = [lem if lem.skip or lem.start <= cut else _with_skip(lem, why) for lem in out]
    return out


def _with_skip(lemma: LibraryLemma, why: str) -> LibraryLemma:
    return LibraryLemma(
        lemma.file,
        lemma.index,
        lemma.name,
        lemma.statement,
        lemma.start,
        lemma.proof,
        lemma.tactics,
        why,
    )


# ---- the installed library ---------------------------------------------------------------
def library_root(root: str | Path | None = None) -> Path:
    """The library's ``theories`` directory: ``root`` when given, else the installed Coq's
    (:func:`verirl.provers.coq.install.stdlib_sources`). Raises ``FileNotFoundError`` naming
    the install when there is none."""
    if root is not None:
        path = Path(root)
        if not path.is_dir():
            raise FileNotFoundError(f"no Coq library sources at {path}")
        return path
    found = stdlib_sources()
    if found is None:
        raise FileNotFoundError(
            "the Coq standard library's .v sources are not installed: apt-get install coq "
            "(Debian's libcoq-stdlib ships them under `coqc -where`/theories)"
        )
    return found


def library_files(root: str | Path | None = None) -> list[str]:
    """The ``.v`` files of the library, as sorted paths relative to its root."""
    base = library_root(root)
    return sorted(p.relative_to(base).as_posix() for p in base.rglob("*.v"))


@functools.lru_cache(maxsize=64)
def _read(path: str) -> str:
    return Path(path).read_text(encoding="utf-8")


def file_text(file: str, root: str | Path | None = None) -> str:
    """The text of library file ``file`` (remembered: a file's prefix recurs)."""
    return _read(str(library_root(root) / file))


def file_sha256(file: str, root: str | Path | None = None) -> str:
    return hashlib.sha256(file_text(file, root).encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=1024)
def _mine_cached(path: str, file: str) -> tuple[LibraryLemma, ...]:
    return tuple(mine_text(_read(path), file))


def file_lemmas(file: str, root: str | Path | None = None) -> tuple[LibraryLemma, ...]:
    """Every lemma of ``file`` (kept or not), in file order."""
    return _mine_cached(str(library_root(root) / file), file)


def library_lemmas(
    root: str | Path | None = None, files: list[str] | None = None
) -> Iterator[LibraryLemma]:
    """Every lemma of the library (or of ``files``), file by file, in file order."""
    for file in files if files is not None else library_files(root):
        yield from file_lemmas(file, root)


def formal_problem(
    lemma: LibraryLemma, root: str | Path | None = None, allowed: Sequence[str] = ()
) -> FormalProblem:
    """The lemma as a problem: its statement with its file's prefix as the prelude; a proof
    may rest on the library's axioms (:func:`library_axioms`) and on ``allowed`` (what the
    library's own proofs in the file rest on beyond them: a functor's parameters)."""
    prefix = file_text(lemma.file, root)[: lemma.start]
    axioms = (*library_axioms(root), *allowed)
    return FormalProblem("coq", lemma.name, lemma.statement, prefix, axioms)


_DECLARES = {"Axiom", "Axioms", "Parameter", "Parameters", "Conjecture"}
# Compat/AdmitAxiom.v declares ``proof_admitted : False`` (its ``admit``), extraction/ the
# stand-ins of OCaml types: neither is mathematics a proof may rest on.
_NOT_AXIOM_SOURCES = {"Compat", "extraction"}
NEVER_ALLOWED = frozenset({"proof_admitted"})


@functools.lru_cache(maxsize=4)
def _library_axioms(root: str) -> tuple[str, ...]:
    names: set[str] = set()
    base = Path(root)
    for path in sorted(base.rglob("*.v")):
        if path.relative_to(base).parts[0] in _NOT_AXIOM_SOURCES:
            continue
        blocks: list[bool] = []  # open Module/Section blocks: True for a Module Type
        for s in scan(_read(str(path))).sentences:
            if s.structural:
                continue
            words = _head(s)
            if not words:
                continue
            flat = " ".join(s.code.split())
            if words[0] in _OPENERS and ":=" not in flat:
                blocks.append(words[0] == "Module" and words[1] == "Type")
            elif words[0] == "End" and blocks:
                blocks.pop()
            elif words[0] in _DECLARES and not any(blocks):
                body = flat.split(":", 1)[0]
                names.update(w for w in _WORD.findall(body)[1:] if w not in _DECLARES)
    return tuple(sorted(names - NEVER_ALLOWED))


def library_axioms(root: str | Path | None = None) -> tuple[str, ...]:
    """The axioms the library itself declares (``Axiom``/``Parameter``/``Conjecture`` outside
    module types; ``classic``, ``functional_extensionality_dep``, the reals' ``sig_forall_dec``
    ...): a proof in a library context may rest on them, as the library's own proofs do.
    Not ``Compat/`` (whose ``proof_admitted : False`` is ``admit``) nor ``extraction/``.
    Empty when the sources are not installed."""
    try:
        return _library_axioms(str(library_root(root)))
    except FileNotFoundError:
        return ()


def difficulty_of(lemma: LibraryLemma) -> int:
    """The lemma's difficulty: its library proof's length in tactics minus one, the longest
    proofs (:data:`TOP_TACTICS` tactics or more) sharing the top."""
    return min(lemma.tactics, TOP_TACTICS) - 1


# ---- the split ---------------------------------------------------------------------------
def file_split(file: str, seed: int = SPLIT_SEED, heldout_share: float = HELDOUT_SHARE) -> Split:
    """``"heldout"`` or ``"train"`` for a library file (see the module docstring)."""
    digest = hashlib.sha256(f"verirl/coq-stdlib/{seed}/{file}".encode()).digest()
    unit = int.from_bytes(digest[:8], "big") / 2**64
    return "heldout" if unit < heldout_share else "train"


# ---- what a prompt shows -----------------------------------------------------------------
def prompt_context(lemma: LibraryLemma, root: str | Path | None = None) -> str:
    """What the prompt shows of the lemma's context: the file's ``Require``/``Import``/
    ``Open Scope`` lines and, for each ``Section``/``Module`` open at the lemma, its opening
    line and its variables, hypotheses, local definitions and notations (the latest
    :data:`CONTEXT_CHARS` characters of them)."""
    return _file_contexts(str(library_root(root) / lemma.file))[lemma.start]


@functools.lru_cache(maxsize=64)
def _file_contexts(path: str) -> dict[int, str]:
    """The prompt context at the start of every lemma-like sentence of a file (one pass)."""
    text = _read(path)
    imports: list[str] = []
    stack: list[tuple[str, list[str]]] = []  # open blocks: (opening sentence, declarations)
    out: dict[int, str] = {}
    for s in scan(text).sentences:
        if s.structural:
            continue
        words = _head(s)
        if not words:
            continue
        if words[0] in LEMMA_KEYWORDS:
            out[s.start] = _render_context(imports, stack)
        flat = " ".join(s.text.split())
        if words[0] in ("Require", "From", "Import", "Export", "Open"):
            (stack[-1][1] if stack else imports).append(flat)
        elif words[0] in _OPENERS and ":=" not in flat:
            stack.append((flat, []))
        elif words[0] == "End" and stack:
            stack.pop()
        elif words[0] in _CONTEXT_WORDS and stack:
            stack[-1][1].append(flat)
    return out


def _render_context(imports: list[str], stack: list[tuple[str, list[str]]]) -> str:
    lines = list(dict.fromkeys(imports))
    for opening, decls in stack:
        lines.append(opening)
        lines.extend(decls)
    body = "\n".join(lines)
    if len(body) > CONTEXT_CHARS:
        body = "(* ... *)\n" + body[-CONTEXT_CHARS:].split("\n", 1)[-1]
    return body


__all__ = [
    "HELDOUT_SHARE",
    "LEMMA_KEYWORDS",
    "SPLIT_SEED",
    "TOP_TACTICS",
    "LibraryLemma",
    "difficulty_of",
    "file_lemmas",
    "file_sha256",
    "file_split",
    "file_text",
    "formal_problem",
    "library_axioms",
    "library_files",
    "library_lemmas",
    "library_root",
    "mine_text",
    "prompt_context",
]
