"""``CoqcChecker``: the one-shot reference backend (one ``coqc`` process per proof).

Each proof is written with its prelude and statement into a fresh temporary directory as
``Proof.v``::

    <prelude>\\n<statement>\\n<proof>[\\nQed.]\\n[End <section>.\\n ...]

(``Qed.`` when the proof has none; ``End`` for each Section/Module the prelude leaves open,
since coqc refuses a file that ends inside one) and compiled with
``coqc -q -time -native-compiler no`` in that directory (the working directory of the child),
with a wall-clock deadline (the process group is killed on expiry),
``RLIMIT_AS``/``RLIMIT_CPU``/``RLIMIT_FSIZE`` limits and an environment that inherits nothing
but ``PATH``. The first ``File "...", line L, characters C1-C2:`` + ``Error:`` block on stderr
locates the failure: ``L``/``C1`` are a line and a UTF-8 *byte* column, converted to an
absolute byte offset in the file, then to a character offset in the proof text, then to the
sentence and tactic that contain it. On a timeout, the ``Chars B - E`` lines of ``-time`` (one
per sentence Coq started) tell which sentence was running.

It is slow (~50-300 ms per proof, mostly loading the prelude) but simple; the tests use it as
the oracle for :class:`~verirl.provers.coq.idetop.CoqIdeChecker`.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence

from verirl.provers.base import FormalProblem, ProofCheck, ProverMessage
from verirl.provers.coq.attempt import (
    Attempt,
    CoqChecker,
    CoqProblemError,
    assumptions_check,
    crash_check,
    failure_check,
    find_coq_binary,
    limit_resources,
    minimal_env,
    print_assumptions_command,
    statement_name,
    timeout_check,
)
from verirl.provers.coq.sentences import ByteOffsets, line_start_bytes, scan

BACKEND = "coq-coqc"
_LOCATED = re.compile(
    r'^File "[^"\n]*", line (\d+), characters (\d+)-(\d+):\n(Error|Warning)', re.M
)
_CHARS = re.compile(r"^Chars (\d+) - (\d+) \[", re.M)
_RAW_LIMIT = 4000
_BLOCK_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_']*")


class CoqcChecker(CoqChecker):
    """Check each proof with a fresh ``coqc`` process (see the module docstring).

    ``memory_mb`` bounds the address space of ``coqc``; ``workers`` is the number of
    concurrent ``coqc`` processes :meth:`check_batch` runs; ``extra_roots`` extends the
    ``Require`` allowlist of the prelude (e.g. ``("mathcomp",)``)."""

    name = BACKEND

    def __init__(
        self,
        coqc: str = "coqc",
        *,
        memory_mb: int = 3072,
        workers: int = 2,
        extra_roots: Sequence[str] = (),
        keep_dirs: bool = False,
        allowed_axioms: Sequence[str] = (),
        check_assumptions: bool = True,
    ) -> None:
        self.binary = find_coq_binary(coqc)
        self.allowed_axioms = tuple(allowed_axioms)
        self.check_assumptions = check_assumptions
        self.memory_bytes = memory_mb * 1024 * 1024
        self.workers = max(1, workers)
        self.extra_roots = tuple(extra_roots)
        self.keep_dirs = keep_dirs

    # ---- one run -----------------------------------------------------------------------
    def _check_attempt(
        self, problem: FormalProblem, att: Attempt, timeout_s: float, t0: float
    ) -> ProofCheck:
        head = problem.prelude
        if head and not head.endswith("\n"):
            head += "\n"
        head += problem.statement + "\n"
        doc = head + att.proof + ("\n" if att.has_end else "\nQed.") + "\n"
        theorem = statement_name(problem.statement) if self.check_assumptions else None
        print_byte0 = len(doc.encode("utf-8"))
        if theorem is not None:
            doc += print_assumptions_command(theorem) + "\n"
        doc += "".join(f"End {name}.\n" for name in reversed(open_blocks(head)))
        proof_byte0 = len(head.encode("utf-8"))
        workdir = tempfile.mkdtemp(prefix="verirl-coqc-")
        try:
            with open(os.path.join(workdir, "Proof.v"), "w", encoding="utf-8") as f:
                f.write(doc)
            rc, out, err, timed_out = self._spawn(workdir, timeout_s)
        finally:
            if not self.keep_dirs:
                shutil.rmtree(workdir, ignore_errors=True)
        elapsed = time.perf_counter() - t0
        raw: dict[str, object] = {
            "returncode": rc,
            "stdout": out[-_RAW_LIMIT:],
            "stderr": err[-_RAW_LIMIT:],
        }
        if timed_out:
            running = self._running_sentence(att, out, proof_byte0)
            return timeout_check(
                att,
                sentence_index=running,
                timeout_s=timeout_s,
                backend=BACKEND,
                elapsed=elapsed,
                raw=raw,
            )
        if rc == 0:
            output = _sentence_output(out, print_byte0) if theorem is not None else None
            if theorem is not None and output is None:
                output = "(no output)"
            return assumptions_check(
                att, output, self.allowed_for(problem), BACKEND, elapsed, _warnings(err)
            )
        located = _first_error(err)
        if located is None:
            if rc is not None and rc < 0:
                running = self._running_sentence(att, out, proof_byte0)
                return crash_check(
                    att, f"coqc killed by signal {-rc}", BACKEND, elapsed, sentence_index=running
                )
            text = _error_text(err) or f"coqc exited with status {rc}"
            if "Out of memory" in text or "Stack overflow" in text:
                running = self._running_sentence(att, out, proof_byte0)
                return failure_check(
                    att,
                    sentence_index=running,
                    message=ProverMessage("error", text),
                    backend=BACKEND,
                    elapsed=elapsed,
                    raw=raw,
                )
            return crash_check(att, text, BACKEND, elapsed)
        line, col0, col1, text = located
        starts = line_start_bytes(doc)
        if line - 1 >= len(starts):
            return crash_check(
                att, f"error on line {line} past the file end: {text}", BACKEND, elapsed
            )
        abs0 = starts[line - 1] + col0
        abs1 = starts[line - 1] + col1
        if abs0 < proof_byte0:
            raise CoqProblemError(
                f"problem {problem.name}: the prelude or statement does not check in Coq: {text}"
            )
        offsets = ByteOffsets(att.proof)
        c0 = offsets.to_char(abs0 - proof_byte0)
        c1 = offsets.to_char(abs1 - proof_byte0)
        in_proof = abs0 - proof_byte0 < offsets.n_bytes
        sentence = att.sentence_at(c0) if in_proof else len(att.sentences)
        if sentence is None:
            sentence = len(att.sentences)
        msg = ProverMessage("error", text, c0 if in_proof else None, c1 if in_proof else None)
        return failure_check(
            att, sentence_index=sentence, message=msg, backend=BACKEND, elapsed=elapsed, raw=raw
        )

    def _spawn(self, workdir: str, timeout_s: float) -> tuple[int | None, str, str, bool]:
        cmd = [self.binary, "-q", "-time", "-native-compiler", "no", "Proof.v"]
        mem, cpu = self.memory_bytes, int(timeout_s) + 2
        proc = subprocess.Popen(
            cmd,
            cwd=workdir,
            env=minimal_env(workdir),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=lambda: limit_resources(mem, cpu, 256 * 1024 * 1024),
        )
        try:
            out, err = proc.communicate(timeout=timeout_s)
            timed_out = False
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            out, err = proc.communicate()
            timed_out = True
        return (
            proc.returncode,
            out.decode("utf-8", errors="replace"),
            err.decode("utf-8", errors="replace"),
            timed_out,
        )

    @staticmethod
    def _running_sentence(att: Attempt, out: str, proof_byte0: int) -> int | None:
        """The proof sentence after the last one ``-time`` reported as started."""
        ends = [int(m.group(2)) for m in _CHARS.finditer(out)]
        done = max(ends) - proof_byte0 if ends else -1
        offsets = ByteOffsets(att.proof)
        for k, s in enumerate(att.sentences):
            if offsets.to_byte(s.start) >= done:
                return k
        return len(att.sentences)


def open_blocks(text: str) -> list[str]:
    """Names of the Sections/Modules still open at the end of ``text`` (outermost first);
    ``coqc`` refuses a file that leaves one open, so the document closes them after ``Qed``."""
    stack: list[str] = []
    for s in scan(text).sentences:
        if s.structural:
            continue
        words = _BLOCK_WORDS.findall(s.code)
        if len(words) >= 2 and words[0] == "Section":
            stack.append(words[1])
        elif len(words) >= 2 and words[0] == "Module" and ":=" not in s.code:
            name = (
                words[2]
                if words[1] in ("Type", "Import", "Export") and len(words) > 2
                else words[1]
            )
            stack.append(name)
        elif len(words) >= 2 and words[0] == "End" and stack and stack[-1] == words[1]:
            stack.pop()
    return stack


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _sentence_output(out: str, byte0: int) -> str | None:
    """What the sentence starting at byte ``byte0`` printed: with ``-time``, the text between
    the ``Chars`` line of the sentence before it and its own ``Chars`` line (the *last* such
    lines, so that text a tactic printed earlier cannot pose as this output)."""
    own = None
    for m in _CHARS.finditer(out):
        if int(m.group(1)) == byte0:
            own = m
    if own is None:
        return None
    before = [m for m in _CHARS.finditer(out, 0, own.start()) if int(m.group(2)) <= byte0]
    start = out.find("\n", before[-1].end()) + 1 if before else 0
    return out[start : own.start()]


def _first_error(err: str) -> tuple[int, int, int, str] | None:
    """(line, byte column start, byte column end, message) of the first located error."""
    for m in _LOCATED.finditer(err):
        if m.group(4) != "Error":
            continue
        rest = err[m.end() :]
        body = rest.split("\n\n", 1)[0]
        text = " ".join(body.lstrip(":").split())
        return int(m.group(1)), int(m.group(2)), int(m.group(3)), text
    return None


def _error_text(err: str) -> str:
    i = err.find("Error:")
    if i < 0:
        return " ".join(err.split())[:500]
    return " ".join(err[i + len("Error:") :].split("\n\n", 1)[0].split())


def _warnings(err: str) -> tuple[ProverMessage, ...]:
    out = []
    for m in _LOCATED.finditer(err):
        if m.group(4) == "Warning":
            body = err[m.end() :].split("\n\n", 1)[0]
            out.append(ProverMessage("warning", " ".join(body.lstrip(":").split())))
    return tuple(out)
