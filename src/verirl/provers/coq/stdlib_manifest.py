"""Which library lemmas the checker can run in their context: measured once, then read.

:mod:`verirl.provers.coq.stdlib` mines the lemmas and keeps those whose library proof is a
tactic script; this module runs each kept lemma's **own library proof** through the checker
used for models (the ``coqidetop`` pool, the safety filter, ``Print Assumptions``) in the
lemma's context, and records the ones that fail. The rule, printed with its count wherever the
lemmas are used:

    a lemma is excluded when the library's own proof of it is not accepted by the checker in
    its file's context within ``timeout_s`` seconds (the context loaded first, untimed).

Failures have reasons: the context does not load in an interactive session, the proof relies
on an axiom outside what the prefix itself declares (``Print Assumptions``), it times out...

A proof may rest on the library's declared axioms
(:func:`verirl.provers.coq.stdlib.library_axioms`); what the library's own proofs in a file
rest on beyond them (inside a functor, ``Print Assumptions`` lists the functor's parameters:
``t``, ``E.eq``, ``mem_spec``...) is recorded as the file's **context assumptions** and
allowed to every proof in that file — the proof text itself can declare nothing.

The result is a **manifest**: Coq's version, the time limit, and per file its SHA-256, its
context assumptions and the indices of its excluded lemmas with their reasons. verirl ships the
manifest measured on Debian's Coq 8.16.1 (``provers/data/coq_stdlib_<version>.json``), so the
benchmark and the environment are the same on every machine with that Coq; for another version
:func:`load_manifest` reads one built on this machine (``python -m
verirl.provers.coq.stdlib_manifest``, about 45 minutes on two cores) from the cache. A file
whose SHA-256 differs from the manifest's is an error, not a silent change of the problems.
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from verirl.errors import UserInputError
from verirl.provers.base import FormalProblem
from verirl.provers.coq.attempt import CoqProblemError
from verirl.provers.coq.install import coq_version
from verirl.provers.coq.stdlib import (
    LibraryLemma,
    file_lemmas,
    file_sha256,
    formal_problem,
    library_files,
)

MANIFEST_TIMEOUT_S = 60.0
"""Seconds the library's own proof of a lemma gets (generous: the rule should measure what
the checker can run, not how busy the machine was)."""
RULE = (
    "excluded: the library's own proof is not accepted by the checker (coqidetop pool, safety "
    "filter, Print Assumptions) in its file's context within {timeout:g} s on Coq {version}"
)
MANIFEST_VERSION = 1


@dataclass(frozen=True)
class FileEntry:
    """One measured file: its SHA-256, ``{lemma index: reason}`` for the excluded lemmas
    (a kept lemma without an entry passed) and its context assumptions."""

    sha256: str
    excluded: dict[int, str]
    assumptions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Manifest:
    """The measured exclusions, per library file."""

    coq: str
    timeout_s: float
    files: dict[str, FileEntry]
    source: str = ""

    @property
    def rule(self) -> str:
        return RULE.format(timeout=self.timeout_s, version=self.coq)

    def excluded(self, lemma: LibraryLemma) -> str | None:
        """Why ``lemma`` is excluded (``None``: it is in); a file the manifest does not list
        is an error (it was not measured)."""
        if lemma.file not in self.files:
            raise UserInputError(
                f"{lemma.file} is not in the Coq stdlib manifest ({self.source}); rebuild it "
                "with: python -m verirl.provers.coq.stdlib_manifest"
            )
        return self.files[lemma.file].excluded.get(lemma.index)

    def problem(self, lemma: LibraryLemma) -> FormalProblem:
        """The lemma's problem, its file's context assumptions allowed."""
        entry = self.files.get(lemma.file)
        return formal_problem(lemma, allowed=entry.assumptions if entry else ())

    def check_sources(self, files: Sequence[str] | None = None) -> None:
        """Raise :class:`UserInputError` when an installed file differs from the manifest's."""
        for file in files if files is not None else sorted(self.files):
            if file_sha256(file) != self.files[file].sha256:
                raise UserInputError(
                    f"the installed Coq library file {file} differs from the one the manifest "
                    f"was measured on ({self.source}, Coq {self.coq}); rebuild it with: "
                    "python -m verirl.provers.coq.stdlib_manifest"
                )

    def as_json(self) -> dict[str, Any]:
        return {
            "format": MANIFEST_VERSION,
            "coq": self.coq,
            "timeout_s": self.timeout_s,
            "rule": self.rule,
            "files": {
                f: {
                    "sha256": e.sha256,
                    "assumptions": list(e.assumptions),
                    "excluded": {str(k): v for k, v in sorted(e.excluded.items())},
                }
                for f, e in sorted(self.files.items())
            },
        }


def _from_json(doc: dict[str, Any], source: str) -> Manifest:
    if doc.get("format") != MANIFEST_VERSION:
        raise UserInputError(f"{source} is not a verirl Coq stdlib manifest (format 1)")
    files = {
        f: FileEntry(
            entry["sha256"],
            {int(k): str(v) for k, v in entry["excluded"].items()},
            tuple(entry.get("assumptions", ())),
        )
        for f, entry in doc["files"].items()
    }
    return Manifest(str(doc["coq"]), float(doc["timeout_s"]), files, source)


def cache_dir() -> Path:
    """``$VERIRL_CACHE/coq`` (default ``~/.cache/verirl/coq``)."""
    return Path(os.environ.get("VERIRL_CACHE", Path.home() / ".cache" / "verirl")) / "coq"


def bundled_path(version: str) -> str:
    return f"data/coq_stdlib_{version}.json"


def cached_path(version: str) -> Path:
    return cache_dir() / f"coq_stdlib_{version}.json"


def load_manifest(version: str | None = None) -> Manifest:
    """The manifest for the installed Coq (or ``version``): the one shipped with verirl,
    else one built on this machine. Raises :class:`UserInputError` with the command that
    builds it when there is none."""
    version = version or coq_version()
    bundled = resources.files("verirl.provers").joinpath(bundled_path(version))
    if bundled.is_file():
        return _from_json(json.loads(bundled.read_text("utf-8")), f"verirl:{bundled.name}")
    local = cached_path(version)
    if local.is_file():
        return _from_json(json.loads(local.read_text("utf-8")), str(local))
    raise UserInputError(
        f"no Coq stdlib manifest for Coq {version}: build it (about 45 minutes on two cores) "
        "with: python -m verirl.provers.coq.stdlib_manifest"
    )


# ---- building ------------------------------------------------------------------------------
Progress = Callable[[str, int, int], None]
"""Called with (file, lemmas checked, excluded) after each file."""


def measure_file(checker: Any, file: str, timeout_s: float = MANIFEST_TIMEOUT_S) -> FileEntry:
    """Check every kept lemma of ``file`` with its library proof, in file order: the
    excluded ones with their reasons, and the file's context assumptions (what a library
    proof rejected by ``Print Assumptions`` alone rests on: it is then checked again with
    them allowed)."""
    out: dict[int, str] = {}
    assumptions: list[str] = []
    for lemma in file_lemmas(file):
        if lemma.skip is not None:
            continue
        try:
            check = checker.check(
                formal_problem(lemma, allowed=assumptions), lemma.proof, timeout_s=timeout_s
            )
            extra = check.raw.get("untrusted") if check.status == "rejected" else None
            if extra:
                assumptions.extend(a for a in extra if a not in assumptions)
                check = checker.check(
                    formal_problem(lemma, allowed=assumptions), lemma.proof, timeout_s=timeout_s
                )
        except CoqProblemError as exc:
            out[lemma.index] = f"context: {str(exc)[:300]}"
            continue
        if not check.passed:
            first = check.rejection or (check.messages[0].text if check.messages else "")
            out[lemma.index] = f"{check.status}: {first[:300]}"
    return FileEntry(file_sha256(file), out, tuple(sorted(assumptions)))


def build_manifest(
    workers: int = 2,
    timeout_s: float = MANIFEST_TIMEOUT_S,
    files: Sequence[str] | None = None,
    progress: Progress | None = None,
    memory_mb: int = 3072,
) -> Manifest:
    """Measure the library (or ``files``) with a pool of ``workers`` coqidetop processes:
    each thread takes whole files (largest first), so a worker keeps one file's prefix and
    moves forward through it."""
    from verirl.provers.coq.idetop import CoqIdeChecker

    todo = [f for f in (files if files is not None else library_files())]
    todo = [f for f in todo if any(lem.skip is None for lem in file_lemmas(f))]
    todo.sort(key=lambda f: -len(file_lemmas(f)))
    results: dict[str, FileEntry] = {}
    lock = threading.Lock()
    queue = list(todo)

    def run(checker: CoqIdeChecker) -> None:
        while True:
            with lock:
                if not queue:
                    return
                file = queue.pop(0)
            entry = measure_file(checker, file, timeout_s)
            with lock:
                results[file] = entry
                if progress is not None:
                    kept = sum(lem.skip is None for lem in file_lemmas(file))
                    progress(file, kept, len(entry.excluded))

    with (
        CoqIdeChecker(workers, memory_mb=memory_mb, restart_after_timeout=True) as checker,
        ThreadPoolExecutor(workers) as pool,
    ):
        for future in [pool.submit(run, checker) for _ in range(workers)]:
            future.result()
    return Manifest(coq_version(), timeout_s, results, "built here")


def write_manifest(manifest: Manifest, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(manifest.as_json(), indent=1, sort_keys=True) + "\n", "utf-8")
    tmp.replace(path)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Measure which Coq stdlib lemmas the checker runs in their context."
    )
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=MANIFEST_TIMEOUT_S)
    ap.add_argument("--files", nargs="*", help="only these library files (relative paths)")
    ap.add_argument("--out", type=Path, help=f"where to write it (default: {cached_path('V')})")
    args = ap.parse_args(argv)
    started = time.monotonic()
    done = [0, 0, 0]

    def report(file: str, kept: int, excluded: int) -> None:
        done[0] += 1
        done[1] += kept
        done[2] += excluded
        print(
            f"[{time.monotonic() - started:6.0f} s] {file}: {kept - excluded}/{kept} in "
            f"(files {done[0]}, lemmas {done[1]}, excluded {done[2]})",
            flush=True,
        )

    manifest = build_manifest(args.workers, args.timeout, args.files, report)
    path = write_manifest(manifest, args.out or cached_path(manifest.coq))
    print(f"{manifest.rule}: {done[2]} of {done[1]} lemmas; written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
