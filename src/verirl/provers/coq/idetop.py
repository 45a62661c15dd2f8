"""``CoqIdeChecker``: the fast backend, a pool of persistent ``coqidetop.opt`` workers.

Each worker is ``coqidetop.opt -main-channel stdfds -async-proofs off -q -native-compiler no``
speaking Coq's XML protocol (8.16, protocol ``20220205``) on stdin/stdout, in its own temporary
directory, with ``RLIMIT_AS`` set in ``preexec_fn`` and an environment that inherits nothing
but ``PATH``. The protocol in brief (one ``<value>`` answers each ``<call>``, preceded by any
number of ``<feedback>``)::

    Init    <call val="Init"><option val="none"/></call>         -> the root state id
    Add     (sentence, edit id), (parent state, verbose), bp, (line, bol) -> the new state id
    Goal    <call val="Goal"><unit/></call>   forces execution; <value val="fail" loc_s loc_e>
    Edit_at <call val="Edit_at"><state_id val="N"/></call>       rewinds the document to N

Per attempt: the worker loads the prelude and the statement once per (prelude, statement) --
sentence by sentence, reusing the longest already-loaded prefix -- and remembers the state after
the statement. The pool hands a check to the idle worker whose document shares the longest
prefix with the problem, so problems with one header (miniF2F's ``Require Import Reals.``, a
library file's prefix) pay for the header once per worker: the worker rewinds (``Edit_at``) to
the state after the shared sentences and adds only what differs. Each proof then starts with
``Edit_at`` that state and adds the proof's sentences **one per Add** (an ``Add`` holding
several sentences silently runs only the first), each followed by ``Goal``; the first failure is
the first error. ``Qed.`` is added when the proof has none. ``bp`` is the byte offset of the
sentence in the proof text, so ``loc_s``/``loc_e`` come back in proof-text bytes.

On the deadline (for the whole attempt, excluding prelude loading) the worker gets SIGINT; Coq
answers ``User interrupt.`` and stays usable. If it does not answer within ``grace_s`` it is
killed and restarted on its next use; so is a worker that died, answered garbage, or has served
``max_uses`` attempts.
"""

from __future__ import annotations

import codecs
import contextlib
import functools
import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
import xml.etree.ElementTree as ET
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast
from xml.sax.saxutils import escape

from verirl.provers.base import FormalProblem, ProofCheck, ProverMessage
from verirl.provers.coq.attempt import (
    Attempt,
    CoqChecker,
    CoqProblemError,
    assumptions_check,
    check_problem,
    crash_check,
    failure_check,
    find_coq_binary,
    limit_resources,
    minimal_env,
    print_assumptions_command,
    statement_name,
    timeout_check,
)
from verirl.provers.coq.sentences import ByteOffsets, scan

BACKEND = "coq-ide"
_INTERRUPTED = "User interrupt."


class _Timeout(Exception):
    """No complete reply before the deadline."""


class _Dead(Exception):
    """The worker closed its output, died, or sent something that is not XML."""


# ---- XML encoding and decoding -----------------------------------------------------------
def _text(s: str) -> str:
    # "\r" is escaped so that XML end-of-line normalisation keeps byte offsets exact.
    return escape(s).replace("\r", "&#13;")


def xml_init() -> str:
    return '<call val="Init"><option val="none"/></call>'


def xml_add(sentence: str, parent: int, bp: int) -> str:
    """``Add``: one sentence after state ``parent``; ``bp`` = its byte offset (for locations)."""
    return (
        '<call val="Add"><pair><pair><pair><pair>'
        f"<string>{_text(sentence)}</string><int>-1</int></pair>"
        f'<pair><state_id val="{parent}"/><bool val="true"/></pair></pair>'
        f"<int>{bp}</int></pair><pair><int>0</int><int>0</int></pair></pair></call>"
    )


def xml_goal() -> str:
    return '<call val="Goal"><unit/></call>'


def xml_edit_at(state: int) -> str:
    return f'<call val="Edit_at"><state_id val="{state}"/></call>'


def xml_quit() -> str:
    return '<call val="Quit"><unit/></call>'


def richpp_text(el: ET.Element) -> str:
    """The plain text of the first ``<richpp>`` under ``el`` (spaces normalised)."""
    pp = el.find(".//richpp")
    src = pp if pp is not None else el
    return " ".join("".join(src.itertext()).replace("\xa0", " ").split())


# Characters XML 1.0 forbids (https://www.w3.org/TR/xml/#charsets) but Coq echoes verbatim,
# e.g. in the feedback of ``idtac "\uffff"``; written raw or as a character reference.
_NON_XML_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_CHAR_REF = re.compile(r"&#(x[0-9a-fA-F]{1,8}|[0-9]{1,10});")


def _xml_char_ref(m: re.Match[str]) -> str:
    code = m.group(1)
    value = int(code[1:], 16) if code[0] == "x" else int(code)
    allowed = value in (0x9, 0xA, 0xD) or 0x20 <= value <= 0xD7FF
    allowed = allowed or 0xE000 <= value <= 0xFFFD or 0x10000 <= value <= 0x10FFFF
    return m.group(0) if allowed else "&#65533;"


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 forbids (raw or as ``&#N;``) replaced by U+FFFD,
    so that a message Coq prints (``idtac "\uffff"``) cannot make its reply unreadable. Only
    message text is affected: tags, attributes and offsets are ASCII."""
    text = _NON_XML_CHARS.sub("\ufffd", text)
    return _CHAR_REF.sub(_xml_char_ref, text) if "&#" in text else text


class XmlReplies:
    """Incremental parser of coqidetop's output: a stream of top-level ``<value>`` and
    ``<feedback>`` elements with no enclosing root. ``&nbsp;`` (unknown to XML) is rewritten,
    also when split across reads, and so are UTF-8 sequences split across reads."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(events=("start", "end"))
        self._parser.feed("<root>")
        self._root: ET.Element | None = None
        self._depth = 0
        self._held = ""
        self.elements: deque[ET.Element] = deque()

    def feed(self, data: bytes) -> None:
        text = self._held + self._decoder.decode(data)
        amp = text.rfind("&")
        if amp >= 0 and ";" not in text[amp:]:
            text, self._held = text[:amp], text[amp:]
        else:
            self._held = ""
        self._parser.feed(xml_safe(text.replace("&nbsp;", "&#160;")))
        for item in self._parser.read_events():
            # Only start/end events were asked for: each is (event, element).
            event, el = cast(tuple[str, ET.Element], item)
            if event == "start":
                if self._root is None:
                    self._root = el
                self._depth += 1
            else:
                self._depth -= 1
                if self._depth == 1 and self._root is not None:
                    self.elements.append(el)
                    self._root.remove(el)


@dataclass
class _Reply:
    good: bool
    value: ET.Element
    feedback: list[ET.Element]

    @property
    def text(self) -> str:
        return richpp_text(self.value)

    def state_id(self) -> int | None:
        el = self.value.find(".//state_id")
        return int(el.get("val", "-1")) if el is not None else None


# ---- one worker process ------------------------------------------------------------------
class _Worker:
    def __init__(self, binary: str, memory_bytes: int, extra_args: Sequence[str]) -> None:
        self.binary = binary
        self.memory_bytes = memory_bytes
        self.extra_args = tuple(extra_args)
        self.proc: subprocess.Popen[bytes] | None = None
        self.workdir: str | None = None
        self.uses = 0
        self.sentences_loaded = 0  # prelude/statement sentences run by load(), restarts included
        self.root_state = 0
        self.loaded: list[tuple[str, int]] = []  # (sentence, state after it): prelude+statement
        self.tip: int | None = None

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def key(self) -> tuple[str, ...]:
        return tuple(s for s, _ in self.loaded)

    def start(self, timeout_s: float = 30.0) -> None:
        self.stop()
        self.workdir = tempfile.mkdtemp(prefix="verirl-coqide-")
        cmd = [
            self.binary,
            "-main-channel",
            "stdfds",
            "-async-proofs",
            "off",
            "-q",
            "-native-compiler",
            "no",
            *self.extra_args,
        ]
        mem = self.memory_bytes
        self.proc = subprocess.Popen(
            cmd,
            cwd=self.workdir,
            env=minimal_env(self.workdir),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
            start_new_session=True,
            preexec_fn=lambda: limit_resources(mem, None, 256 * 1024 * 1024),
        )
        self.replies = XmlReplies()
        self.uses = 0
        self.loaded = []
        reply = self.call(xml_init(), time.monotonic() + timeout_s)
        sid = reply.state_id()
        if not reply.good or sid is None:
            raise _Dead(f"Init failed: {reply.text}")
        self.root_state = self.tip = sid

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            if proc.poll() is None:
                with contextlib.suppress(OSError):
                    assert proc.stdin is not None
                    proc.stdin.write(xml_quit().encode())
                    proc.stdin.flush()
                try:
                    proc.wait(timeout=0.3)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(proc.pid, signal.SIGKILL)
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        proc.wait(timeout=2)
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None
        self.loaded, self.tip = [], None

    def send(self, xml: str) -> None:
        if self.proc is None or self.proc.stdin is None:
            raise _Dead("worker not started")
        try:
            self.proc.stdin.write(xml.encode("utf-8"))
        except (BrokenPipeError, OSError) as exc:
            raise _Dead(f"cannot write to coqidetop: {exc}") from exc

    def receive(self, deadline: float) -> _Reply:
        """The next ``<value>`` and the feedback before it."""
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        feedback: list[ET.Element] = []
        while True:
            while self.replies.elements:
                el = self.replies.elements.popleft()
                if el.tag == "value":
                    return _Reply(el.get("val") == "good", el, feedback)
                feedback.append(el)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Timeout
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                raise _Timeout
            data = os.read(fd, 1 << 16)
            if not data:
                try:
                    status = self.proc.wait(timeout=1.0)
                except subprocess.TimeoutExpired:
                    status = None
                raise _Dead(
                    f"coqidetop exited (status {status}; killed by a signal when "
                    "negative, e.g. the memory limit)"
                )
            try:
                self.replies.feed(data)
            except ET.ParseError as exc:
                raise _Dead(f"unreadable reply from coqidetop: {exc}") from exc

    def call(self, xml: str, deadline: float) -> _Reply:
        self.send(xml)
        return self.receive(deadline)

    def interrupt(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGINT)

    def edit_at(self, state: int, deadline: float) -> None:
        if self.tip == state:
            return
        reply = self.call(xml_edit_at(state), deadline)
        union = reply.value.find("union")
        if not reply.good or (union is not None and union.get("val") != "in_l"):
            raise _Dead(f"Edit_at {state} failed: {reply.text}")
        self.tip = state

    def add_and_run(self, sentence: str, bp: int, deadline: float) -> _Reply:
        """Add one sentence after the tip and execute it. On success the tip moves on."""
        assert self.tip is not None
        reply = self.call(xml_add(sentence, self.tip, bp), deadline)
        if not reply.good:
            return reply
        new_state = reply.state_id()
        goal = self.call(xml_goal(), deadline)
        if goal.good:
            self.tip = new_state
        else:
            self.tip = None  # the failed state is still in the document: rewind before reuse
        return goal

    def sentence_output(self, sentence: str, bp: int, deadline: float) -> str:
        """Run one query sentence (``Print Assumptions t.``) after the tip and return the
        messages Coq printed *for its state* (text a tactic printed earlier is attached to
        other states); an error becomes ``"error: ..."``, which no caller reads as a pass."""
        assert self.tip is not None
        added = self.call(xml_add(sentence, self.tip, bp), deadline)
        if not added.good:
            return f"error: {added.text}"
        sid = added.state_id()
        goal = self.call(xml_goal(), deadline)
        self.tip = sid if goal.good else None
        if not goal.good:
            return f"error: {goal.text}"
        texts = []
        for el in (*added.feedback, *goal.feedback):
            state = el.find("state_id")
            content = el.find("feedback_content")
            if state is None or content is None or content.get("val") != "message":
                continue
            if state.get("val") != str(sid):
                continue
            level = el.find(".//message_level")
            if level is not None and level.get("val") != "notice":
                continue  # "Fetching opaque proofs from disk for ..." is info/debug
            pp = el.find(".//richpp")
            src = pp if pp is not None else el
            texts.append("".join(src.itertext()).replace("\xa0", " "))
        return "\n".join(texts)

    def load(self, sentences: Sequence[tuple[str, int]], timeout_s: float) -> int:
        """Make the document hold exactly ``sentences`` (text, bp) and return the state after
        them. Raises :class:`CoqProblemError` when one of them fails in Coq."""
        deadline = time.monotonic() + timeout_s
        common = 0
        while (
            common < len(self.loaded)
            and common < len(sentences)
            and self.loaded[common][0] == sentences[common][0]
        ):
            common += 1
        self.loaded = self.loaded[:common]
        base = self.loaded[-1][1] if self.loaded else self.root_state
        self.edit_at(base, deadline)
        for text, bp in sentences[common:]:
            self.sentences_loaded += 1
            reply = self.add_and_run(text, bp, deadline)
            if not reply.good:
                raise CoqProblemError(
                    f"the prelude or statement fails in Coq at {text!r}: {reply.text}"
                )
            assert self.tip is not None
            self.loaded.append((text, self.tip))
        return self.loaded[-1][1] if self.loaded else self.root_state


def _problem_sentences(problem: FormalProblem) -> list[tuple[str, int]]:
    return [*_source_sentences(problem.prelude), *_source_sentences(problem.statement)]


@functools.lru_cache(maxsize=16)
def _source_sentences(source: str) -> tuple[tuple[str, int], ...]:
    """The sentences of ``source`` with their byte offsets (remembered: a prelude recurs)."""
    offsets = ByteOffsets(source)
    return tuple((s.text, offsets.to_byte(s.start)) for s in scan(source).sentences)


# ---- the pool ----------------------------------------------------------------------------
class CoqIdeChecker(CoqChecker):
    """A pool of ``coqidetop`` workers (see the module docstring).

    - ``workers``: processes in the pool (one per core is a good default);
    - ``memory_mb``: ``RLIMIT_AS`` of each worker;
    - ``max_uses``: attempts a worker serves before it is restarted;
    - ``grace_s``: how long to wait for ``User interrupt.`` after SIGINT before killing;
    - ``load_timeout_s``: time allowed for loading a prelude and statement;
    - ``restart_after_timeout``: also restart a worker that answered the interrupt (frees
      the memory a runaway tactic took; costs a prelude reload);
    - ``extra_roots``: extra module roots the prelude may ``Require`` (e.g. ``"mathcomp"``).
    """

    name = BACKEND

    def __init__(
        self,
        workers: int | None = None,
        *,
        coqidetop: str = "coqidetop.opt",
        memory_mb: int = 3072,
        max_uses: int = 500,
        grace_s: float = 2.0,
        load_timeout_s: float = 120.0,
        restart_after_timeout: bool = False,
        extra_roots: Sequence[str] = (),
        extra_args: Sequence[str] = (),
        allowed_axioms: Sequence[str] = (),
        check_assumptions: bool = True,
    ) -> None:
        self.binary = find_coq_binary(coqidetop)
        self.allowed_axioms = tuple(allowed_axioms)
        self.check_assumptions = check_assumptions
        self.workers = max(1, workers if workers is not None else min(4, os.cpu_count() or 1))
        self.memory_bytes = memory_mb * 1024 * 1024
        self.max_uses = max_uses
        self.grace_s = grace_s
        self.load_timeout_s = load_timeout_s
        self.restart_after_timeout = restart_after_timeout
        self.extra_roots = tuple(extra_roots)
        self.extra_args = tuple(extra_args)
        self._cond = threading.Condition()
        self._idle: list[_Worker] = []
        self._all: list[_Worker] = []
        self._closed = False
        self.starts = 0  # how many worker processes were started (restarts included)
        self._finalizer = weakref.finalize(self, _stop_all, self._all)

    # ---- the protocol ------------------------------------------------------------------
    def _check_attempt(
        self, problem: FormalProblem, att: Attempt, timeout_s: float, t0: float
    ) -> ProofCheck:
        sentences = _problem_sentences(problem)
        worker = self._acquire(tuple(s for s, _ in sentences))
        try:
            theorem = statement_name(problem.statement) if self.check_assumptions else None
            allowed = self.allowed_for(problem)
            return self._check_on(worker, sentences, att, timeout_s, t0, theorem, allowed)
        finally:
            self._release(worker)

    def statement_error(self, problem: FormalProblem, timeout_s: float) -> str | None:
        """Why Coq does not accept ``problem``'s prelude and statement within ``timeout_s``
        seconds (loading the prelude included), or ``None`` when it does. The problem's
        lexical rules are checked first (:func:`~verirl.provers.coq.attempt.check_problem`)."""
        try:
            check_problem(problem, self.extra_roots)
        except CoqProblemError as exc:
            return str(exc)
        sentences = _problem_sentences(problem)
        worker = self._acquire(tuple(s for s, _ in sentences))
        try:
            for tries in (1, 2):
                try:
                    self._ensure_started(worker)
                    worker.load(sentences, timeout_s)
                    return None
                except CoqProblemError as exc:
                    return str(exc)
                except _Timeout:
                    worker.stop()
                    return f"not accepted within {timeout_s:g} s"
                except (_Dead, OSError) as exc:
                    worker.stop()
                    if tries == 2:
                        return f"coqidetop failed while loading it: {exc}"
            return None  # unreachable: the loop returns
        finally:
            self._release(worker)

    @property
    def sentences_loaded(self) -> int:
        """Prelude and statement sentences the workers have run so far (a header shared by
        many problems counts once per worker that loaded it)."""
        with self._cond:
            return sum(w.sentences_loaded for w in self._all)

    def close(self) -> None:
        """Stop every worker process and remove their directories."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._finalizer()

    # ---- pool management ---------------------------------------------------------------
    def _acquire(self, key: tuple[str, ...]) -> _Worker:
        """A worker for a problem whose prelude and statement are ``key``: the idle worker
        whose loaded document shares the longest prefix with it (a problem with the same
        header then costs only its own statement: the worker rewinds to the state after the
        header instead of loading it again; among equals, the one released last); when no
        idle worker shares anything and the pool is not full, a new worker, so that the
        headers already loaded stay loaded."""
        with self._cond:
            while True:
                if self._closed:
                    raise RuntimeError("CoqIdeChecker is closed")
                if self._idle:
                    shared = [_common_prefix(w.key, key) for w in self._idle]
                    best = max(range(len(self._idle)), key=lambda i: (shared[i], i))
                    if shared[best] > 0 or len(self._all) >= self.workers:
                        return self._idle.pop(best)
                if len(self._all) < self.workers:
                    w = _Worker(self.binary, self.memory_bytes, self.extra_args)
                    self._all.append(w)
                    return w
                self._cond.wait()

    def _release(self, worker: _Worker) -> None:
        if worker.uses >= self.max_uses:
            worker.stop()
        with self._cond:
            if self._closed:
                worker.stop()
            self._idle.append(worker)
            self._cond.notify()

    # ---- one attempt on one worker -----------------------------------------------------
    def _ensure_started(self, worker: _Worker) -> None:
        if not worker.alive:
            worker.start()
            with self._cond:
                self.starts += 1

    def _check_on(
        self,
        worker: _Worker,
        problem_sentences: list[tuple[str, int]],
        att: Attempt,
        timeout_s: float,
        t0: float,
        theorem: str | None = None,
        allowed: Sequence[str] = (),
    ) -> ProofCheck:
        base = self._load(worker, problem_sentences, timeout_s)
        worker.uses += 1
        offsets = ByteOffsets(att.proof)
        deadline = time.monotonic() + timeout_s
        items = [(s.text, offsets.to_byte(s.start)) for s in att.sentences]
        if not att.has_end:
            items.append(("Qed.", offsets.n_bytes + 1))
        index = 0
        try:
            worker.edit_at(base, deadline)
            for index, (text, bp) in enumerate(items):
                reply = worker.add_and_run(text, bp, deadline)
                if not reply.good:
                    if "Out of memory" in reply.text or "Stack overflow" in reply.text:
                        worker.stop()  # reported as an error here; start afresh next time
                    return self._failure(att, index, reply, offsets, t0)
            output = None
            if theorem is not None:
                index = len(items)
                output = worker.sentence_output(
                    print_assumptions_command(theorem), offsets.n_bytes + 8, deadline
                )
        except _Timeout:
            self._interrupt(worker)
            return timeout_check(
                att,
                sentence_index=index,
                timeout_s=timeout_s,
                backend=BACKEND,
                elapsed=time.perf_counter() - t0,
            )
        except (_Dead, OSError) as exc:
            worker.stop()
            return crash_check(
                att, str(exc), BACKEND, time.perf_counter() - t0, sentence_index=index
            )
        return assumptions_check(att, output, allowed, BACKEND, time.perf_counter() - t0)

    def _load(self, worker: _Worker, sentences: list[tuple[str, int]], timeout_s: float) -> int:
        """Load the prelude and statement (one retry on a fresh process if the worker dies)."""
        for tries in (1, 2):
            try:
                self._ensure_started(worker)
                return worker.load(sentences, max(self.load_timeout_s, timeout_s))
            except CoqProblemError:
                raise
            except (_Dead, _Timeout, OSError) as exc:
                worker.stop()
                if tries == 2:
                    what = str(exc) or f"no answer within {self.load_timeout_s:g} s"
                    raise CoqProblemError(
                        "coqidetop could not load the prelude and statement "
                        f"(memory limit {self.memory_bytes >> 20} MiB): {what}"
                    ) from exc
        raise AssertionError("unreachable")

    def _failure(
        self, att: Attempt, index: int, reply: _Reply, offsets: ByteOffsets, t0: float
    ) -> ProofCheck:
        text = reply.text
        start = end = None
        if index < len(att.sentences) and reply.value.get("loc_s") is not None:
            start = offsets.to_char(int(reply.value.get("loc_s", "0")))
            end = offsets.to_char(int(reply.value.get("loc_e", "0")))
        elif index < len(att.sentences):
            start, end = att.sentences[index].start, att.sentences[index].end
        return failure_check(
            att,
            sentence_index=index,
            message=ProverMessage("error", text, start, end),
            backend=BACKEND,
            elapsed=time.perf_counter() - t0,
        )

    def _interrupt(self, worker: _Worker) -> None:
        """SIGINT the worker and wait for its answer; kill it if none comes in time."""
        worker.interrupt()
        try:
            reply = worker.receive(time.monotonic() + self.grace_s)
        except (_Timeout, _Dead, OSError):
            worker.stop()
            return
        worker.tip = None
        if self.restart_after_timeout or reply.good or _INTERRUPTED not in reply.text:
            # A reply that is not the interrupt means SIGINT may still be pending: restart.
            worker.stop()


def _common_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _stop_all(workers: list[_Worker]) -> None:
    for w in list(workers):
        w.stop()
