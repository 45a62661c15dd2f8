"""``LeanReplChecker``: checks Lean 4 proofs through leanprover-community/repl.

The REPL reads JSON requests separated by blank lines on stdin and answers each with
pretty-printed JSON followed by a blank line. This client:

- starts the REPL (``lake env <path>/repl`` or any configured command) in its own session
  and process group, in a temporary working directory, with ``RLIMIT_AS`` set through
  ``preexec_fn`` (untrusted text is data);
- sends the problem's prelude (imports, opens) once as a header command, remembers the
  environment id it returns, and then sends ``{"cmd": statement + proof, "env": N,
  "allTactics": true}`` per proof, and, when that passes, ``{"cmd": "#print axioms
  <theorem>", "env": <the proof's env>}`` to reject proofs resting on axioms outside an
  allow-list (``sorryAx``, ``Lean.ofReduceBool``; :mod:`verirl.provers.lean.axioms`);
- enforces a wall-clock deadline per request (the REPL has none): past it the whole process
  group is killed, and the next request starts a fresh REPL and re-sends the header; the
  same happens after a crash, unparsable output, or every ``max_uses`` proofs;
- runs the safety filter (:mod:`verirl.provers.lean.safety`) before anything reaches Lean;
- turns each reply, in the v4.9.0-rc1 or the HEAD format, into a
  :class:`~verirl.provers.base.ProofCheck` (:mod:`verirl.provers.lean.reply`).

The paper (Kim & Yun 2026, arXiv:2606.20068) used Lean 4.9.0-rc1 with a 15 s limit per
proof and counted a timeout as a failure; those are the defaults here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import resource
import select
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from verirl.provers.base import FormalProblem, ProofCheck
from verirl.provers.lean.axioms import (
    failed_axioms_check,
    print_axioms_command,
    rejected_for_axioms,
)
from verirl.provers.lean.options import LeanOptions
from verirl.provers.lean.reply import (
    LeanBackend,
    LeanCheckPlan,
    ReplReply,
    parse_repl_reply,
    unchecked_result,
)

REPL_ENV_VAR = "VERIRL_LEAN_REPL"
_INSTALL_HINT = (
    "build leanprover-community/repl (git clone, then `lake build`) inside a Lean project and "
    "pass command=['lake', 'env', '<repl>/.lake/build/bin/repl'] (run from the project, see "
    f"cwd=) or set {REPL_ENV_VAR} to that command line"
)


class LeanReplError(RuntimeError):
    """A configuration problem: no REPL binary, or the problem's prelude fails in Lean."""


class _ReplTimeout(Exception):
    pass


class _ReplDied(Exception):
    pass


def _limit_memory(limit_bytes: int | None) -> Any:
    def apply() -> None:  # runs in the child between fork and exec
        if limit_bytes is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    return apply


class _ReplProcess:
    """One REPL process and the blank-line framed conversation with it."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        memory_limit_mb: int | None,
        stderr: IO[bytes],
    ) -> None:
        limit = memory_limit_mb * 1024 * 1024 if memory_limit_mb else None
        self.proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=cwd,
            env=dict(env),
            bufsize=0,
            start_new_session=True,
            preexec_fn=_limit_memory(limit),
        )
        self.buffer = b""
        self.uses = 0

    def request(self, payload: Mapping[str, Any], timeout_s: float) -> str:
        """Send one request and return the reply block (text without the blank line)."""
        data = (json.dumps(payload, ensure_ascii=False) + "\n\n").encode("utf-8")
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, ConnectionResetError, ValueError, OSError) as exc:
            raise _ReplDied(f"writing to the REPL failed: {exc}") from exc
        deadline = time.monotonic() + timeout_s
        fd = self.proc.stdout.fileno()
        while True:
            self.buffer = self.buffer.lstrip(b"\r\n")
            end = self.buffer.find(b"\n\n")
            if end >= 0:
                block, self.buffer = self.buffer[:end], self.buffer[end + 2 :]
                return block.decode("utf-8", errors="replace")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _ReplTimeout()
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                raise _ReplTimeout()
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                code = self.proc.poll()
                raise _ReplDied(f"the REPL closed its output (exit status {code})")
            self.buffer += chunk

    def kill(self) -> None:
        """Kill the whole process group (the REPL and anything it spawned) and reap it."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


class LeanReplChecker(LeanBackend):
    """A :class:`~verirl.provers.base.ProofChecker` over one leanprover-community/repl process.

    Args:
        options: the :class:`~verirl.provers.lean.options.LeanOptions` (span source, safety
            filter, axiom audit, ...); keyword arguments named like its fields override them.
        command: the REPL command line, e.g. ``["lake", "env", "/opt/repl/.lake/build/bin/
            repl"]``; default: ``$VERIRL_LEAN_REPL`` split like a shell would.
        cwd: working directory of the process. Default: a fresh temporary directory, removed
            by :meth:`close`. ``lake env`` needs the Lean project directory: pass it here, or
            use ``lake -d <project> env ...`` in ``command``.
        env: extra environment variables for the process (on top of this process's).
        memory_limit_mb: ``RLIMIT_AS`` of the REPL (8 GiB, Kimina's default for Mathlib);
            ``None`` for no limit.
        header_timeout_s: deadline for the prelude command (importing Mathlib takes
            minutes on a cold cache).
        all_tactics: ask the REPL for ``allTactics`` ranges.
        max_uses: restart the REPL after this many proofs (its memory grows); ``None``
            never.
        record_dir: append every request and reply to ``session.in`` /
            ``session.expected.out`` there, in the REPL test-suite layout, to record new
            fixtures from a real REPL.
    """

    name = "lean-repl"

    def __init__(
        self,
        command: Sequence[str] | None = None,
        *,
        options: LeanOptions | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        memory_limit_mb: int | None = 8192,
        header_timeout_s: float = 600.0,
        all_tactics: bool = True,
        max_uses: int | None = None,
        record_dir: str | None = None,
        **lean_options: Any,
    ) -> None:
        if command is None:
            configured = os.environ.get(REPL_ENV_VAR, "").strip()
            command = shlex.split(configured) if configured else None
        if not command:
            raise LeanReplError(f"no Lean REPL command given: {_INSTALL_HINT}")
        self.command = tuple(command)
        if shutil.which(self.command[0]) is None and not Path(self.command[0]).is_file():
            raise LeanReplError(
                f"Lean REPL executable {self.command[0]!r} not found: {_INSTALL_HINT}"
            )
        self._scratch = tempfile.mkdtemp(prefix="verirl-lean-")
        self.cwd = cwd or self._scratch
        self.env = {**os.environ, **(env or {})}
        self.memory_limit_mb = memory_limit_mb
        self.header_timeout_s = header_timeout_s
        self.all_tactics = all_tactics
        self.options = LeanOptions.build(options, lean_options)
        self.max_uses = max_uses
        self.record_dir = Path(record_dir) if record_dir else None
        self.restarts = 0  # processes started after the first (timeouts, crashes, max_uses)
        self._started = 0
        self._proc: _ReplProcess | None = None
        self._envs: dict[str, int] = {}
        self._lock = threading.Lock()
        self._stderr = open(os.path.join(self._scratch, "repl.stderr"), "ab")  # noqa: SIM115

    # ---- process management -------------------------------------------------------------

    def _process(self) -> _ReplProcess:
        if self._proc is None or self._proc.proc.poll() is not None:
            if self._proc is not None:
                self._proc.kill()
            self._envs.clear()
            self._proc = _ReplProcess(
                self.command,
                cwd=self.cwd,
                env=self.env,
                memory_limit_mb=self.memory_limit_mb,
                stderr=self._stderr,
            )
            self.restarts += 1 if self._started else 0
            self._started += 1
        return self._proc

    def _discard(self) -> None:
        if self._proc is not None:
            self._proc.kill()
        self._proc = None
        self._envs.clear()

    def _stderr_tail(self, limit: int = 400) -> str:
        try:
            with open(os.path.join(self._scratch, "repl.stderr"), "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - limit))
                return f.read().decode("utf-8", errors="replace").strip()
        except OSError:
            return ""

    def _record(self, payload: Mapping[str, Any], reply: str) -> None:
        if self.record_dir is None:
            return
        self.record_dir.mkdir(parents=True, exist_ok=True)
        with open(self.record_dir / "session.in", "a", encoding="utf-8") as f:
            f.write(json.dumps(payload, ensure_ascii=False) + "\n\n")
        with open(self.record_dir / "session.expected.out", "a", encoding="utf-8") as f:
            f.write(reply + "\n\n")

    def _send(self, payload: Mapping[str, Any], timeout_s: float) -> dict[str, Any]:
        """One request; raises _ReplTimeout/_ReplDied (the process is discarded then) or
        returns the decoded reply."""
        proc = self._process()
        try:
            text = proc.request(payload, timeout_s)
        except (_ReplTimeout, _ReplDied):
            self._discard()
            raise
        self._record(payload, text)
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            self._discard()
            raise _ReplDied(
                f"the REPL answered with text that is not JSON: {text[:200]!r}"
            ) from exc
        if not isinstance(obj, dict):
            self._discard()
            raise _ReplDied(f"the REPL answered with a JSON {type(obj).__name__}, not an object")
        return obj

    def _header_env(self, prelude: str) -> int | None:
        """The environment id holding ``prelude`` (sent once per process); ``None`` when the
        prelude is empty (each command then starts from Lean's core environment)."""
        if not prelude.strip():
            return None
        if prelude in self._envs and self._proc is not None:
            return self._envs[prelude]
        try:
            obj = self._send({"cmd": prelude}, self.header_timeout_s)
        except _ReplTimeout:
            raise LeanReplError(
                f"the problem prelude did not finish within header_timeout_s="
                f"{self.header_timeout_s}s: {prelude[:120]!r}"
            ) from None
        except _ReplDied as exc:
            raise LeanReplError(
                f"the REPL died while loading the prelude ({exc}); stderr: {self._stderr_tail()}"
            ) from None
        try:
            reply = parse_repl_reply(obj)
        except ValueError as exc:
            self._discard()
            raise LeanReplError(f"unexpected REPL reply to the prelude: {exc}") from None
        errors = [m.data for m in reply.messages if m.severity == "error"]
        if reply.kind != "command" or reply.env is None or errors:
            self._discard()
            raise LeanReplError(
                f"the problem prelude fails in Lean: {reply.error or '; '.join(errors)[:300]}"
            )
        self._envs[prelude] = reply.env
        return reply.env

    # ---- checking ---------------------------------------------------------------------------

    def _result_raw(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        return {"request": dict(payload), "backend_version": self.backend_version}

    def _run(self, problem: FormalProblem, plan: LeanCheckPlan, timeout_s: float) -> ProofCheck:
        for attempt in range(2):
            env_id = self._header_env(problem.prelude)
            payload: dict[str, Any] = {"cmd": plan.code}
            if env_id is not None:
                payload["env"] = env_id
            if self.all_tactics:
                payload["allTactics"] = True
            start = time.monotonic()
            try:
                obj = self._send(payload, timeout_s)
            except _ReplTimeout:
                return unchecked_result(
                    plan,
                    "timeout",
                    backend=self.name,
                    elapsed_s=time.monotonic() - start,
                    detail=f"Lean did not answer within {timeout_s:g} s; the REPL was killed",
                    raw=self._result_raw(payload),
                )
            except _ReplDied as exc:
                if attempt == 0 and "writing to the REPL failed" in str(exc):
                    continue  # the idle process had died: start a fresh one and resend
                return unchecked_result(
                    plan,
                    "crash",
                    backend=self.name,
                    elapsed_s=time.monotonic() - start,
                    detail=f"{exc}; stderr: {self._stderr_tail()}",
                    raw=self._result_raw(payload),
                )
            elapsed = time.monotonic() - start
            try:
                reply = parse_repl_reply(obj)
            except ValueError as exc:
                self._discard()
                return unchecked_result(
                    plan,
                    "crash",
                    backend=self.name,
                    elapsed_s=elapsed,
                    detail=f"unexpected REPL reply: {exc}",
                    raw=self._result_raw(payload),
                )
            if reply.kind == "error" and reply.error == "Unknown environment." and attempt == 0:
                self._discard()  # our env id is stale: reload the header in a fresh REPL
                continue
            check = self._built(plan, reply, elapsed_s=elapsed, raw=self._result_raw(payload))
            if check.passed and self.check_axioms:
                check = self._check_axioms(problem, check, reply.env, timeout_s)
            if self._proc is not None:
                self._proc.uses += 1
                if self.max_uses is not None and self._proc.uses >= self.max_uses:
                    self._discard()
            return check
        raise AssertionError("unreachable")  # pragma: no cover

    def _check_axioms(
        self, problem: FormalProblem, check: ProofCheck, env_id: int | None, timeout_s: float
    ) -> ProofCheck:
        """Ask the REPL, in the environment the proof produced, which axioms the theorem
        depends on: a command of its own, so only its reply's messages are read."""
        constant = self._axioms_target(problem)
        if constant is None or env_id is None:
            return self._axioms_verdict(problem, check, ())
        payload = {"cmd": print_axioms_command(constant), "env": env_id}
        raw = {"axioms_request": payload}
        try:
            obj = self._send(payload, timeout_s)
        except _ReplTimeout:
            detail = f"`#print axioms` did not answer within {timeout_s:g} s; the REPL was killed"
            return failed_axioms_check(check, "timeout", detail, raw=raw)
        except _ReplDied as exc:
            detail = f"the REPL died during `#print axioms` ({exc})"
            return failed_axioms_check(check, "crash", detail, raw=raw)
        try:
            reply = parse_repl_reply(obj)
        except ValueError as exc:
            reply = ReplReply(kind="error", error=str(exc))
        if reply.kind != "command":
            reason = f"`{payload['cmd']}` was refused: {reply.error or reply.kind}"
            return rejected_for_axioms(check, reason, raw=raw)
        verdict = self._axioms_verdict(problem, check, reply.messages)
        return dataclasses.replace(verdict, raw={**verdict.raw, **raw})

    def check(self, problem: FormalProblem, proof: str, *, timeout_s: float = 15.0) -> ProofCheck:
        """Check ``proof`` (the text after ``:= by``, or a snippet containing the exact
        statement) against ``problem``. Never raises on model output; raises
        :class:`LeanReplError` only when the prelude itself fails or cannot load."""
        plan = self._plan(problem, proof)
        if plan.rejection is not None:
            return self._rejected(plan)
        with self._lock:
            return self._run(problem, plan, timeout_s)

    def check_batch(
        self, items: Sequence[tuple[FormalProblem, str]], *, timeout_s: float = 15.0
    ) -> list[ProofCheck]:
        """Check proofs one after another on this checker's REPL (run several checkers,
        e.g. one per Ray worker, for parallelism)."""
        return [self.check(problem, proof, timeout_s=timeout_s) for problem, proof in items]

    def close(self) -> None:
        """Kill the REPL and remove the temporary directory."""
        with self._lock:
            self._discard()
            with contextlib.suppress(OSError):
                self._stderr.close()
            shutil.rmtree(self._scratch, ignore_errors=True)

    def __enter__(self) -> LeanReplChecker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
