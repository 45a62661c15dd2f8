"""Formal theorem benchmarks: miniF2F in Coq, and the Coq standard library.

Each theorem is a :class:`FormalItem`: the statement, the context a prompt shows, and the
:class:`~verirl.provers.base.FormalProblem` the checker runs.

**miniF2F-rocq** (LLM4Rocq, arXiv:2503.04763, MIT; Zheng et al. 2021, arXiv:2109.00110 for
miniF2F): one ``.v`` file per theorem under ``test/`` and ``valid/`` (244 each). The theorem is
the one named like its file (else the file's last one); its header is everything before it
(``Require``/``Open Scope`` lines, and the definitions a few files declare). Two readings for
Coq 8.16, both mechanical: Rocq 9's ``Stdlib`` prefix is read as ``Coq`` (``From Stdlib
Require ...``), and the ``Proof.``/``Admitted.`` after the statement are dropped (the model
writes the proof). Data: ``--data DIR`` (a copy of the published repository, holding
``test/`` and ``valid/``), else ``minif2f-rocq/`` in ``$VERIRL_BENCHMARKS``,
``./shared/benchmarks`` or ``../shared/benchmarks``.

**Statements this Coq cannot state** are excluded by a computed rule, printed with its count:
the header and statement are not accepted by the checker's Coq within
:data:`STATEMENT_TIMEOUT_S` seconds (the header loaded first, sentence by sentence, then the
statement elaborated). The answers are cached per (Coq version, limit, libraries, header,
statement) in ``$VERIRL_CACHE/coq/statements.json``.

A proof may rest on the axioms the Coq standard library declares (classical logic, the
construction of the reals, functional extensionality:
:func:`~verirl.provers.coq.stdlib.library_axioms`) and on the header's own; ``Print
Assumptions`` refuses anything else.

**coq-stdlib**: the lemmas of the installed standard library on the Tactician/CoqHammer
protocol (:mod:`verirl.provers.coq.stdlib`), those of the held-out files (or the training
files) that the manifest keeps (:mod:`verirl.provers.coq.stdlib_manifest`), in a seeded order
(so ``--limit N`` is a uniform sample of N lemmas).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verirl.errors import UserInputError
from verirl.evals import benchmark_data as data
from verirl.provers.base import FormalProblem
from verirl.provers.coq.install import coq_version
from verirl.provers.coq.sentences import THEOREM_KEYWORDS, scan
from verirl.provers.coq.stdlib import library_axioms

MINIF2F_DIR = "minif2f-rocq"
MINIF2F_SPLITS = ("test", "valid")
STDLIB_SPLITS = ("heldout", "train")
MINIF2F_ROOTS = ("Coquelicot", "mathcomp")
"""Libraries beyond the stdlib that miniF2F-rocq headers load (``libcoq-coquelicot``, which
brings ``libcoq-mathcomp-ssreflect``)."""
CHECK_ROOTS = (*MINIF2F_ROOTS, "Hammer")
"""The library roots a formal benchmark's checker allows in a prelude: miniF2F's and
CoqHammer's (which the ``hammer``/``sauto`` baselines import)."""
STATEMENT_TIMEOUT_S = 60.0
STATEMENT_RULE = (
    "excluded: the header and statement are not accepted by Coq {version} within {timeout:g} s "
    "(the checker's coqidetop; Rocq 9's Stdlib read as Coq)"
)

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_']*")
_PREFIX = re.compile(r"^(?:#\[[^\]]*\]\s*|(?:Local|Global)\s+)*")
_STDLIB_PREFIX = re.compile(r"(?<![\w.])Stdlib(?=\.|\s)")


@dataclass(frozen=True)
class FormalItem:
    """One theorem of a formal benchmark: ``id`` (``test/aime_1983_p1``), the theorem
    ``name``, its ``statement``, the ``context`` a prompt shows above it, and how to build the
    checker's problem (``make``: lazily, since a library lemma's prelude is its file's
    prefix). ``locality`` groups theorems whose contexts share a prefix (checked together on
    one worker)."""

    id: str
    name: str
    statement: str
    context: str
    make: Callable[[], FormalProblem] = field(repr=False, compare=False)
    locality: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)
    prompt: str = ""

    def problem(self) -> FormalProblem:
        return self.make()

    def prompt_text(self) -> str:
        """The task as the coq environments pose it (without the answer instruction)."""
        if self.prompt:
            return self.prompt
        from verirl.envs.proofs.coq import coq_prompt

        return coq_prompt(self.statement, self.context)


# ---- miniF2F-rocq ------------------------------------------------------------------------
def _fixed(problem: FormalProblem) -> Callable[[], FormalProblem]:
    return lambda: problem


def read_minif2f_text(text: str, stem: str, split: str) -> FormalItem:
    """One miniF2F-rocq file as an item (see the module docstring for the readings)."""
    sentences = scan(text).sentences
    theorems = []
    for k, s in enumerate(sentences):
        words = [] if s.structural else _WORD.findall(_PREFIX.sub("", s.code.lstrip()))[:2]
        if len(words) == 2 and words[0] in THEOREM_KEYWORDS:
            theorems.append((k, words[1]))
    if not theorems:
        raise UserInputError(f"miniF2F file {split}/{stem}.v holds no theorem")
    k, name = next(((k, n) for k, n in theorems if n == stem), theorems[-1])
    header = text[: sentences[k].start].strip()
    header = "\n".join(
        _STDLIB_PREFIX.sub("Coq", line) if re.match(r"\s*(From|Require)\b", line) else line
        for line in header.splitlines()
    )
    statement = sentences[k].text
    problem = FormalProblem(
        "coq", name, statement, header + "\n" if header else "", library_axioms()
    )
    return FormalItem(
        f"{split}/{stem}",
        name,
        statement,
        header,
        _fixed(problem),
        locality=header,
        meta={"split": split, "sha256": hashlib.sha256(text.encode()).hexdigest()},
    )


def minif2f_dir(path: str | None) -> Path:
    """The miniF2F-rocq copy: ``path`` (the repository, or one split's folder's parent),
    else ``minif2f-rocq/`` in the local benchmark directories."""
    if path is not None:
        base = Path(path).expanduser()
        if not base.is_dir():
            raise UserInputError(f"--data {path!r}: no such directory")
        if not any((base / s).is_dir() for s in MINIF2F_SPLITS):
            raise UserInputError(
                f"--data {path!r} holds neither test/ nor valid/: point it at a copy of "
                "github.com/LLM4Rocq/miniF2F-rocq"
            )
        return base
    for directory in data.benchmark_dirs():
        if (directory / MINIF2F_DIR).is_dir():
            return directory / MINIF2F_DIR
    looked = ", ".join(str(d) for d in data.benchmark_dirs())
    raise UserInputError(
        f"no local copy of miniF2F-rocq ({MINIF2F_DIR}/ in {looked}); pass --data DIR (a clone "
        f"of github.com/LLM4Rocq/miniF2F-rocq) or set ${data.BENCHMARK_DIR_ENV}"
    )


def load_minif2f(split: str, path: str | None = None) -> tuple[list[FormalItem], str]:
    """Every theorem of one split, sorted by header then name (so that a worker moves from
    one theorem to the next with the same header), and where they came from."""
    if split not in MINIF2F_SPLITS:
        raise UserInputError(f"miniF2F-rocq has splits {', '.join(MINIF2F_SPLITS)}, not {split!r}")
    folder = minif2f_dir(path) / split
    files = sorted(folder.glob("*.v"))
    if not files:
        raise UserInputError(f"{folder} holds no .v file")
    items = [read_minif2f_text(f.read_text(encoding="utf-8"), f.stem, split) for f in files]
    items.sort(key=lambda it: (it.locality, it.id))
    return items, str(folder)


# ---- which statements this Coq can state ----------------------------------------------------
def _cache_file() -> Path:
    from verirl.provers.coq.stdlib_manifest import cache_dir

    return cache_dir() / "statements.json"


def _statement_key(problem: FormalProblem, timeout_s: float, roots: Sequence[str]) -> str:
    blob = json.dumps([coq_version(), timeout_s, sorted(roots), problem.prelude, problem.statement])
    return hashlib.sha256(blob.encode()).hexdigest()


def statement_exclusions(
    items: Sequence[FormalItem],
    checker: Any,
    timeout_s: float = STATEMENT_TIMEOUT_S,
    cache: Path | None = None,
) -> dict[str, str]:
    """``{item id: reason}`` for the items whose header and statement ``checker`` (a
    :class:`~verirl.provers.coq.idetop.CoqIdeChecker`) does not accept within ``timeout_s``;
    answers are cached (``cache``: default ``$VERIRL_CACHE/coq/statements.json``)."""
    path = cache or _cache_file()
    try:
        known: dict[str, str | None] = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        known = {}
    roots = tuple(getattr(checker, "extra_roots", ()))
    out: dict[str, str] = {}
    changed = False
    for item in items:
        problem = item.problem()
        key = _statement_key(problem, timeout_s, roots)
        if key not in known:
            known[key] = checker.statement_error(problem, timeout_s)
            changed = True
        reason = known[key]
        if reason is not None:
            out[item.id] = reason
    if changed:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(known, indent=0, sort_keys=True), "utf-8")
        tmp.replace(path)
    return out


def statement_rule(timeout_s: float = STATEMENT_TIMEOUT_S) -> str:
    return STATEMENT_RULE.format(version=coq_version(), timeout=timeout_s)


# ---- the Coq standard library ----------------------------------------------------------------
def load_stdlib(
    split: str, seed: int = 0, difficulties: Sequence[int] | None = None
) -> tuple[list[FormalItem], dict[str, str], str]:
    """The lemmas of one split of the installed standard library that the manifest keeps
    (only those at ``difficulties``, the ``coq_stdlib`` environment's levels, when given), in
    a seeded order; the excluded ones (``{id: reason}``); and the manifest's rule."""
    from verirl.provers.coq.stdlib import (
        difficulty_of,
        file_split,
        library_files,
        library_lemmas,
    )
    from verirl.provers.coq.stdlib_manifest import load_manifest

    if split not in STDLIB_SPLITS:
        raise UserInputError(f"coq-stdlib has splits {', '.join(STDLIB_SPLITS)}, not {split!r}")
    try:
        files = [f for f in library_files() if file_split(f) == split]
    except FileNotFoundError as exc:
        raise UserInputError(str(exc)) from None
    manifest = load_manifest()
    measured = [f for f in files if f in manifest.files]
    manifest.check_sources(measured)
    items: list[FormalItem] = []
    excluded: dict[str, str] = {}
    for lemma in library_lemmas(files=measured):
        if lemma.skip is not None:
            continue
        if difficulties is not None and difficulty_of(lemma) not in difficulties:
            continue
        why = manifest.excluded(lemma)
        if why is not None:
            excluded[lemma.id] = why
            continue
        items.append(_stdlib_item(lemma, manifest))
    order = {it.id: _seeded(it.id, seed) for it in items}
    items.sort(key=lambda it: order[it.id])
    return items, excluded, manifest.rule


def _seeded(key: str, seed: int) -> bytes:
    return hashlib.sha256(f"verirl/coq-stdlib-order/{seed}/{key}".encode()).digest()


def _stdlib_item(lemma: Any, manifest: Any) -> FormalItem:
    from verirl.envs.proofs.coq_stdlib import stdlib_prompt
    from verirl.provers.coq.stdlib import prompt_context

    return FormalItem(
        lemma.id,
        lemma.name,
        lemma.statement,
        prompt_context(lemma),
        lambda: manifest.problem(lemma),
        locality=lemma.file,
        meta={"file": lemma.file, "index": lemma.index, "tactics": lemma.tactics},
        prompt=stdlib_prompt(lemma),
    )


def by_locality(items: Sequence[FormalItem]) -> list[FormalItem]:
    """``items`` grouped by locality (the first appearance of each group keeps its place),
    and in file order inside a library file."""
    groups: dict[str, list[FormalItem]] = {}
    for it in items:
        groups.setdefault(it.locality, []).append(it)
    out: list[FormalItem] = []
    for group in groups.values():
        out.extend(sorted(group, key=lambda it: it.meta.get("index", 0)))
    return out


__all__ = [
    "CHECK_ROOTS",
    "MINIF2F_ROOTS",
    "MINIF2F_SPLITS",
    "STATEMENT_TIMEOUT_S",
    "STDLIB_SPLITS",
    "FormalItem",
    "by_locality",
    "load_minif2f",
    "load_stdlib",
    "minif2f_dir",
    "read_minif2f_text",
    "statement_exclusions",
    "statement_rule",
]
