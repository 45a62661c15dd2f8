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

Behind the lexical filter, the prover itself is asked what a passing proof rests on: after
``Qed`` both backends run ``Print Assumptions <theorem>.`` and a proof that depends on an axiom
outside :attr:`CoqChecker.allowed_axioms` (empty by default) and outside what the prelude
itself assumes is ``rejected`` (:func:`assumptions_check`). Only the output attached to that
query is read (its ``Chars`` span for coqc, its state id for coqidetop), so text a tactic
prints (``idtac "Closed under the global context"``) cannot pose as the answer.

Text that is not Unicode (a lone surrogate) is rejected by the filter with a verdict rather
than re-encoded, so that both backends check exactly what the model wrote.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Self

from verirl.provers.base import FormalProblem, ProofCheck, ProverMessage, Status, TacticSpan
from verirl.provers.coq.safety import check_prelude, check_proof, check_statement
from verirl.provers.coq.sentences import THEOREM_KEYWORDS, Sentence, scan, scan_cached

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


# ---- what a passing proof rests on ----------------------------------------------------------
CLOSED_MARK = "Closed under the global context"
_NAME_AFTER_KEYWORD = re.compile(
    r"^(?:#\[[^\]]*\]\s*)?(?:(?:Local|Global|Polymorphic|Monomorphic)\s+)*"
    r"(?:" + "|".join(sorted(THEOREM_KEYWORDS | {"Definition"})) + r")\s+([A-Za-z_][\w']*)"
)
_ASSUMPTION_ENTRY = re.compile(r"^(\S+)\s+:(?:\s|$)")
# Headers of Print Assumptions whose entries are not trust assumptions (a section's own
# variables, discharged at its End).
_HARMLESS_HEADERS = ("Section Variables:",)


def statement_name(statement: str) -> str | None:
    """The name the statement declares (``Theorem t ...`` → ``t``; ``Goal`` → Coq's
    ``Unnamed_thm``), or ``None`` when it cannot be read (the assumption check is skipped)."""
    code = " ".join(scan(statement).code.split())
    if re.match(r"^(?:#\[[^\]]*\]\s*)?Goal\b", code):
        return "Unnamed_thm"
    m = _NAME_AFTER_KEYWORD.match(code)
    return m.group(1) if m else None


_ASSUMPTION_KEYWORDS = frozenset(
    {"Axiom", "Axioms", "Parameter", "Parameters", "Conjecture", "Hypothesis", "Hypotheses"}
    | {"Variable", "Variables"}
)


def prelude_assumptions(prelude: str) -> frozenset[str]:
    """Names the prelude itself assumes: its ``Axiom``/``Parameter``/``Variable``... names and
    its lemmas closed with ``Admitted`` (an earlier stub of a user file). They are the
    problem's premises, so a proof may use them; the proof text itself can declare nothing
    (:mod:`verirl.provers.coq.safety`)."""
    names: set[str] = set()
    last_theorem = None
    for sentence in scan_cached(prelude).sentences:
        words = re.findall(r"[A-Za-z_][\w']*|:", sentence.code)
        words = [w for w in words if w not in ("Local", "Global", "Polymorphic", "Monomorphic")]
        if not words:
            continue
        if words[0] in _ASSUMPTION_KEYWORDS:
            for w in words[1:]:
                if w == ":" and "(" not in sentence.code:
                    break
                if w != ":":
                    names.add(w)  # over-approximates with type words of ``(x : A)``: harmless
        elif words[0] in THEOREM_KEYWORDS and len(words) > 1:
            last_theorem = words[1]
        elif words[0] == "Admitted" and last_theorem is not None:
            names.add(last_theorem)
    return frozenset(names)


def print_assumptions_command(name: str) -> str:
    return f"Print Assumptions {name}."


def untrusted_assumptions(output: str, allowed: Sequence[str]) -> list[str] | None:
    """What the output of ``Print Assumptions`` lists beyond ``allowed`` (axiom names, matched
    in full or by their last component), e.g. ``["classic"]``; ``[]`` when the theorem is
    closed or uses only allowed axioms; ``None`` when the output is not recognised (the
    caller fails the proof: a check that cannot be read is not a pass)."""
    text = output.replace("\xa0", " ").strip()
    if text == CLOSED_MARK:
        return []
    lines = text.splitlines()
    if not lines or not lines[0].endswith(":"):
        return None
    ok = set(allowed)
    out: list[str] = []
    header = ""
    for line in lines:
        if not line.strip():
            continue
        if not line[0].isspace() and line.endswith(":") and " : " not in line:
            header = line.strip()
            if header != "Axioms:" and header not in _HARMLESS_HEADERS:
                out.append(header.rstrip(":"))  # e.g. relying on type-in-type or no guard
            continue
        if line[0].isspace():
            continue  # the continuation of a long type
        # An entry starts at the left margin: ``name : type`` or, when the type is long,
        # ``name`` alone with ``  : type`` on the lines below.
        m = _ASSUMPTION_ENTRY.match(line)
        if header == "Axioms:":
            name = m.group(1) if m is not None else line.split()[0]
            if name not in ok and name.rsplit(".", 1)[-1] not in ok:
                out.append(name)
    return out


def assumptions_check(
    att: Attempt,
    output: str | None,
    allowed: Sequence[str],
    backend: str,
    elapsed: float,
    messages: Sequence[ProverMessage] = (),
) -> ProofCheck:
    """The answer for a proof Coq accepted, given what ``Print Assumptions`` printed for the
    theorem (``None``: the check was skipped): a pass, or ``rejected`` naming the axioms."""
    if output is None:
        return pass_check(att, backend, elapsed, messages)
    extra = untrusted_assumptions(output, allowed)
    if extra == []:
        return pass_check(att, backend, elapsed, messages)
    if extra is None:
        reason = "Print Assumptions gave output that could not be read: " + output[:200]
    else:
        listed = ", ".join(extra[:5]) + (", ..." if len(extra) > 5 else "")
        reason = (
            f"the proof relies on assumptions beyond the allow-list: {listed} "
            "(Print Assumptions; allow axioms with allowed_axioms)"
        )
    return ProofCheck(
        passed=False,
        status="rejected",
        tactics=att.tactics,
        rejection=reason,
        messages=(ProverMessage("error", f"rejected: {reason}"), *messages),
        elapsed_s=elapsed,
        backend=backend,
        raw={"assumptions": output[:2000], "untrusted": extra},
    )


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


HAMMER_HELPERS = "/usr/libexec/coq-hammer"
"""Where Debian's ``libcoq-hammer`` puts the helpers its tactic runs (``htimeout``,
``predict``): off ``PATH``, so :func:`minimal_env` adds the directory when it exists."""


def minimal_env(home: str) -> dict[str, str]:
    """The environment of a Coq subprocess: no inherited variables (and so no secrets), and
    ``PATH`` plus CoqHammer's helper directory (:data:`HAMMER_HELPERS`) when installed."""
    path = os.environ.get("PATH", "/usr/bin:/bin")
    if os.path.isdir(HAMMER_HELPERS) and HAMMER_HELPERS not in path.split(os.pathsep):
        path = f"{path}{os.pathsep}{HAMMER_HELPERS}"
    return {
        "PATH": path,
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
    # After a proof passes, ``Print Assumptions <theorem>`` runs and any axiom not named here
    # fails the proof (the theorem must rest on the prelude's definitions alone).
    allowed_axioms: tuple[str, ...] = ()
    check_assumptions: bool = True

    def allowed_for(self, problem: FormalProblem) -> tuple[str, ...]:
        """The axioms a proof of ``problem`` may rest on: :attr:`allowed_axioms`, the
        problem's own :attr:`~verirl.provers.base.FormalProblem.allowed_axioms` and what the
        prelude assumes (:func:`prelude_assumptions`)."""
        return (
            *self.allowed_axioms,
            *problem.allowed_axioms,
            *sorted(prelude_assumptions(problem.prelude)),
        )

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
