"""One Coq proof attempt, shared by the ``coqc`` and ``coqidetop`` backends.

:func:`prepare_attempt` splits the model's proof text into sentences, runs the safety filter and
builds the credited tactic spans; the ``*_check`` helpers build the :class:`ProofCheck` answers
so that both backends classify outcomes the same way, and :class:`CoqChecker` is the part of
the checker interface they share.

Tactic spans (the units of process credit), in the coordinates of the proof text:

- every tactic sentence is one span; the opening ``Proof.`` and the closing ``Qed.``/``Defined.``
  are not tactics and get no span;
- opening structure (bullets ``-``/``+``/``*``, ``{`` and ``2: {``) is merged into the span of
  the tactic that follows it, so ``- simpl.`` is one span starting at the bullet;
- a closing ``}`` is merged into the span of the tactic before it (it closes that block); one
  with no tactic before it is merged forward.

An error raised by a structural sentence is therefore charged to the tactic span that contains
it. A failing ``Qed`` with *Attempt to save an incomplete proof* is ``incomplete`` with no first
error; a failing ``Qed`` for any other reason is an ``error`` with ``first_error_index=None``.
When the text has no ``Qed.``/``Defined.``, the backends add ``Qed.`` themselves.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Self

from verirl.provers.base import FormalProblem, ProofCheck, ProverMessage, Status, TacticSpan
from verirl.provers.coq_safety import check_prelude, check_proof, check_statement
from verirl.provers.coq_sentences import Sentence, scan

INSTALL_HINT = (
    "Coq is not installed: install it with `apt-get install coq` (Debian/Ubuntu; provides "
    "coqc and coqidetop.opt), or put the binary on PATH"
)
INCOMPLETE_MARK = "Attempt to save an incomplete proof"


class CoqNotFoundError(RuntimeError):
    """The Coq binary a checker needs is missing."""


class CoqProblemError(ValueError):
    """The problem itself (prelude or statement) is invalid or does not check in Coq: a
    configuration error, not something the model did."""


def find_coq_binary(name: str) -> str:
    """The absolute path of a Coq binary, or :class:`CoqNotFoundError` naming the install."""
    path = shutil.which(name)  # also accepts an explicit path to an executable
    if path is None:
        raise CoqNotFoundError(f"{name} not found. {INSTALL_HINT}")
    return path


@dataclass(frozen=True)
class Attempt:
    """A proof text split and checked, ready to run.

    ``sentences`` are all sentences of ``proof``; ``sentence_tactic[k]`` is the tactic-span
    index of sentence ``k`` (None for ``Proof.``/``Qed.``); ``has_end`` says whether the text
    closes with ``Qed.``/``Defined.`` (otherwise the backend adds ``Qed.``); ``rejection`` is
    the safety filter's reason (and ``rejection_sentence`` the sentence it names) or None."""

    proof: str
    sentences: tuple[Sentence, ...]
    tactics: tuple[TacticSpan, ...]
    sentence_tactic: tuple[int | None, ...]
    has_end: bool
    rejection: str | None = None
    rejection_sentence: int | None = None

    def tactic_of(self, sentence_index: int | None) -> int | None:
        if sentence_index is None or not 0 <= sentence_index < len(self.sentence_tactic):
            return None
        return self.sentence_tactic[sentence_index]

    def sentence_at(self, char_offset: int) -> int | None:
        """Index of the sentence containing ``char_offset`` (or the next one after it)."""
        for k, s in enumerate(self.sentences):
            if char_offset < s.end:
                return k
        return None


def _is_word(s: Sentence, *words: str) -> bool:
    if s.structural:
        return False
    head = s.code.strip().split(".")[0].split()
    return bool(head) and head[0] in words


def prepare_attempt(proof: str) -> Attempt:
    """Split ``proof``, run the safety filter and build the tactic spans."""
    sc = scan(proof) if len(proof) <= 200_000 else None
    sentences = sc.sentences if sc is not None else ()
    rej = check_proof(proof, sc)
    has_end = bool(sentences) and _is_word(sentences[-1], "Qed", "Defined")
    owner: list[int | None] = [None] * len(sentences)
    spans: list[list[int]] = []  # [start, end] per tactic
    pending: list[int] = []  # opening structure waiting for the tactic it belongs to
    for k, s in enumerate(sentences):
        if (k == 0 and _is_word(s, "Proof")) or (k == len(sentences) - 1 and has_end):
            continue
        if s.structural:
            if s.text == "}" and spans and not pending:
                spans[-1][1] = s.end
                owner[k] = len(spans) - 1
            else:
                pending.append(k)
            continue
        spans.append([sentences[pending[0]].start if pending else s.start, s.end])
        for j in [*pending, k]:
            owner[j] = len(spans) - 1
        pending = []
    if pending:  # structure at the end with no tactic after it
        if spans:
            spans[-1][1] = sentences[pending[-1]].end
        else:
            spans.append([sentences[pending[0]].start, sentences[pending[-1]].end])
        for j in pending:
            owner[j] = len(spans) - 1
    tactics = tuple(
        TacticSpan(index=i, start=a, end=b, text=proof[a:b]) for i, (a, b) in enumerate(spans)
    )
    return Attempt(
        proof,
        tuple(sentences),
        tactics,
        tuple(owner),
        has_end,
        rej.reason if rej else None,
        rej.sentence_index if rej else None,
    )


def check_problem(problem: FormalProblem, extra_roots: Sequence[str] = ()) -> None:
    """Raise :class:`CoqProblemError` when the problem's prelude or statement is unusable."""
    if problem.system != "coq":
        raise CoqProblemError(f"a Coq checker got a {problem.system!r} problem ({problem.name})")
    err = check_statement(problem.statement)
    if err is not None:
        raise CoqProblemError(f"problem {problem.name}: {err}")
    rej = check_prelude(problem.prelude, extra_roots)
    if rej is not None:
        raise CoqProblemError(f"problem {problem.name}: {rej.reason}")


# ---- building answers ---------------------------------------------------------------------
def rejected_check(att: Attempt, backend: str, elapsed: float) -> ProofCheck:
    reason = att.rejection or "rejected"
    return ProofCheck(
        passed=False,
        status="rejected",
        tactics=att.tactics,
        rejection=reason,
        messages=(ProverMessage("error", f"rejected: {reason}"),),
        elapsed_s=elapsed,
        backend=backend,
        raw={"rejected_tactic": att.tactic_of(att.rejection_sentence)},
    )


def empty_check(att: Attempt, backend: str, elapsed: float) -> ProofCheck:
    """A proof with no tactic at all: nothing to run, the goal stays open."""
    return ProofCheck(
        passed=False,
        status="incomplete",
        tactics=att.tactics,
        messages=(ProverMessage("error", "the proof contains no tactic"),),
        elapsed_s=elapsed,
        backend=backend,
    )


def failure_check(
    att: Attempt,
    *,
    sentence_index: int | None,
    message: ProverMessage,
    backend: str,
    elapsed: float,
    raw: dict[str, object] | None = None,
) -> ProofCheck:
    """Classify a failure at ``sentence_index`` (``len(sentences)`` = the added ``Qed.``)."""
    at_end = (
        sentence_index is None
        or sentence_index >= len(att.sentences)
        or (att.has_end and sentence_index == len(att.sentences) - 1)
    )
    status: Status = "error"
    first = None if at_end else att.tactic_of(sentence_index)
    if at_end and INCOMPLETE_MARK in message.text:
        status = "incomplete"
    return ProofCheck(
        passed=False,
        status=status,
        tactics=att.tactics,
        first_error_index=first,
        messages=(message,),
        elapsed_s=elapsed,
        backend=backend,
        raw=raw or {},
    )


def timeout_check(
    att: Attempt,
    *,
    sentence_index: int | None,
    timeout_s: float,
    backend: str,
    elapsed: float,
    raw: dict[str, object] | None = None,
) -> ProofCheck:
    """The deadline was hit. ``first_error_index`` is the tactic that was running when known
    (the credit module decides how to score timeouts)."""
    span = None
    if sentence_index is not None and sentence_index < len(att.sentences):
        s = att.sentences[sentence_index]
        span = (s.start, s.end)
    msg = ProverMessage(
        "error",
        f"timeout: the proof did not finish within {timeout_s:g} s",
        span[0] if span else None,
        span[1] if span else None,
    )
    return ProofCheck(
        passed=False,
        status="timeout",
        tactics=att.tactics,
        first_error_index=att.tactic_of(sentence_index),
        messages=(msg,),
        timed_out=True,
        elapsed_s=elapsed,
        backend=backend,
        raw=raw or {},
    )


def crash_check(
    att: Attempt, detail: str, backend: str, elapsed: float, sentence_index: int | None = None
) -> ProofCheck:
    """The Coq process died (e.g. a tactic exhausted the memory limit); ``first_error_index``
    is the tactic that was running when known."""
    return ProofCheck(
        passed=False,
        status="crash",
        tactics=att.tactics,
        first_error_index=att.tactic_of(sentence_index),
        messages=(ProverMessage("error", f"the Coq process died: {detail}"),),
        elapsed_s=elapsed,
        backend=backend,
    )


def pass_check(
    att: Attempt, backend: str, elapsed: float, messages: Sequence[ProverMessage] = ()
) -> ProofCheck:
    return ProofCheck(
        passed=True,
        status="pass",
        tactics=att.tactics,
        messages=tuple(messages),
        elapsed_s=elapsed,
        backend=backend,
    )


def minimal_env(home: str) -> dict[str, str]:
    """The environment of a Coq subprocess: no inherited variables (and so no secrets)."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
    }


def limit_resources(memory_bytes: int, cpu_s: int | None, fsize_bytes: int) -> None:
    """Resource limits for a Coq child process (called in ``preexec_fn``)."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize_bytes, fsize_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if cpu_s is not None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 5))


class CoqChecker:
    """What the Coq backends share: the problem and the proof are screened here (an invalid
    problem raises :class:`CoqProblemError`; a rejected or empty proof is answered without
    starting Coq), then :meth:`_check_attempt` runs Coq on the prepared attempt.
    :meth:`check_batch` runs up to ``workers`` checks at a time."""

    name: str
    workers: int
    extra_roots: tuple[str, ...]

    def check(self, problem: FormalProblem, proof: str, *, timeout_s: float = 15.0) -> ProofCheck:
        """Check ``proof`` against ``problem``; never raises on the proof text."""
        t0 = time.perf_counter()
        check_problem(problem, self.extra_roots)
        att = prepare_attempt(proof)
        if att.rejection is not None:
            return rejected_check(att, self.name, time.perf_counter() - t0)
        if not att.tactics:
            return empty_check(att, self.name, time.perf_counter() - t0)
        return self._check_attempt(problem, att, timeout_s, t0)

    def _check_attempt(
        self, problem: FormalProblem, att: Attempt, timeout_s: float, t0: float
    ) -> ProofCheck:
        """Run Coq on ``att`` (``t0``: when :meth:`check` started, for ``elapsed_s``)."""
        raise NotImplementedError

    def check_batch(
        self, items: Sequence[tuple[FormalProblem, str]], *, timeout_s: float = 15.0
    ) -> list[ProofCheck]:
        """Check many proofs, spread over ``workers`` threads (results in the order of
        ``items``)."""
        if len(items) <= 1 or self.workers == 1:
            return [self.check(p, s, timeout_s=timeout_s) for p, s in items]
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            return list(pool.map(lambda it: self.check(it[0], it[1], timeout_s=timeout_s), items))

    def close(self) -> None:
        """Release the backend's processes (nothing by default)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
