"""One executor for untrusted code: limits, isolation and a warm pool.

Every verifier that runs model-written code (program synthesis, HumanEval, code refinement)
goes through :class:`Sandbox`. An execution runs a Python program in a fresh directory with

- limits (:class:`Limits`): CPU time, wall time, address space, file size, open files, process
  count, output bytes (stdout and stderr each captured up to the bound);
- a minimal environment (``PATH``, ``HOME``, ``TMPDIR``, ``LANG``; nothing of the caller's);
- isolation, by the strongest mode the machine allows (:func:`isolation_mode`):

  ``bwrap``  (bubblewrap): new PID, network, IPC and UTS namespaces; the file system is only
             the system directories and the Python installation, read-only, plus size-bounded
             tmpfs ``/sandbox`` and ``/tmp``; programs run as an unprivileged user when the
             caller is root. No network, nothing outside the sandbox is writable, nothing of
             the caller's files is visible, every leftover process is killed after each run.
  ``unshare`` (util-linux, root only): new PID, network, IPC, UTS and mount namespaces;
             programs run as an unprivileged user, so only world-writable places (``/tmp``)
             are writable and the rest of the file system is readable.
  ``rlimits``: resource limits, process groups and (when root) an unprivileged user only.
             Network and reads are NOT blocked; a warning is logged once.

The warm pool: each worker is one long-lived interpreter inside the isolation layer
(``_runner.py``) that forks a fresh child per execution, so a run costs a fork, not an
interpreter start-up. A runaway is killed with its whole process group and then every process
left in the worker's namespace (or of its user). The :class:`Execution` verdict says why a run
ended (``ok``, ``error``, ``timeout``, ``cpu_time``, ``memory``, ``output_limit``,
``file_size``, ``killed``, ``sandbox_error``); :meth:`Sandbox.run` never raises for anything a
program does.

A *checked run* (:meth:`Sandbox.run_checked`) makes a verdict the program cannot forge: the
program runs in one process and answers calls to its function; trusted checking code runs in
another, receives the answers as plain data, and reports that it ran to its end, with a
per-run nonce, on a channel only it holds. Exiting early, killing itself, patching builtins,
printing or writing forged lines anywhere does not pass. HumanEval and the program-synthesis
environments use it; the threat model is in ``_runner.py`` and ``docs/security.md``.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import queue
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from verirl.errors import UserInputError

log = logging.getLogger("verirl.sandbox")

Mode = Literal["bwrap", "unshare", "rlimits"]
Status = Literal[
    "ok",
    "error",
    "timeout",
    "cpu_time",
    "memory",
    "output_limit",
    "file_size",
    "killed",
    "sandbox_error",
]
_RUNNER = Path(__file__).with_name("_runner.py")
_TMPFS_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """Per-execution limits. ``processes`` is the most processes (and threads) the program's
    user may have at once; ``output_bytes`` bounds stdout and stderr each."""

    cpu_s: float = 2.0
    wall_s: float = 5.0
    memory_mb: int = 512
    file_size_mb: int = 16
    open_files: int = 64
    processes: int = 16
    output_bytes: int = 1_000_000

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
                raise UserInputError(f"sandbox limits: {name} must be a positive number: {value!r}")


@dataclass(frozen=True)
class Execution:
    """What happened to one program: ``status`` (why it ended), its exit code or signal, the
    captured (bounded) stdout/stderr and its wall time. For a checked run
    (:meth:`Sandbox.run_checked`), ``checked`` says whether the checker ran to its end (the
    report only the checker process can send, with the run's nonce) and ``reports`` holds
    the values the checker sent with ``report(...)``; ``None`` and ``()`` otherwise."""

    status: Status
    stdout: str = ""
    stderr: str = ""
    exit_code: int | None = None
    signal: int | None = None
    wall_s: float = 0.0
    checked: bool | None = None
    reports: tuple[Any, ...] = ()

    @property
    def ok(self) -> bool:
        """The run ended normally; for a checked run (:meth:`Sandbox.run_checked`) this also
        means the checker ran to its end."""
        return self.status == "ok" and self.checked is not False

    @property
    def error_line(self) -> str:
        """The last line of stderr (an exception's ``Type: message``), or the status."""
        lines = [ln for ln in self.stderr.strip().splitlines() if ln.strip()]
        return lines[-1][:300] if lines else self.status

    def reason(self) -> str:
        """One sentence saying why the run ended (for feedback and logs)."""
        return {
            "ok": "finished",
            "error": f"raised an error: {self.error_line}",
            "timeout": "ran past its wall-time limit and was killed",
            "cpu_time": "ran past its CPU-time limit and was killed",
            "memory": "ran out of its memory limit",
            "output_limit": "printed more output than allowed and was killed",
            "file_size": "wrote a file larger than allowed",
            "killed": f"was killed by signal {self.signal}",
            "sandbox_error": f"could not be run by the sandbox ({self.error_line})",
        }[self.status]


# ---- isolation modes -------------------------------------------------------------------------
def _python() -> str:
    """The base interpreter (a venv's python is a symlink into its installation)."""
    return os.path.realpath(getattr(sys, "_base_executable", sys.executable))


_PY_MOUNT = "/python"


def _sandbox_python(mode: str) -> str:
    """The interpreter path inside the sandbox: under bwrap the Python installation is
    mounted at ``/python`` (its real place may sit in a directory the unprivileged execution
    user cannot enter, such as ``/root``)."""
    real = _python()
    if mode != "bwrap":
        return real
    prefix = os.path.realpath(sys.base_prefix)
    return _PY_MOUNT + real[len(prefix) :] if real.startswith(prefix + "/") else real


def _ro_binds() -> list[str]:
    paths = ["/usr", "/bin", "/lib", "/lib64", "/sbin", "/etc/ld.so.cache", "/etc/localtime"]
    out: list[str] = []
    for p in paths:
        if os.path.exists(p):
            out += ["--ro-bind", p, p]
    return [*out, "--ro-bind", os.path.realpath(sys.base_prefix), _PY_MOUNT]


def _bwrap_prefix() -> list[str]:
    root = os.geteuid() == 0
    cmd = ["bwrap", *_ro_binds(), "--dev", "/dev", "--proc", "/proc"]
    cmd += ["--size", str(_TMPFS_BYTES), "--tmpfs", "/tmp"]
    cmd += ["--size", str(_TMPFS_BYTES), "--tmpfs", "/sandbox"]
    cmd += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
    cmd += ["--unshare-cgroup-try", "--die-with-parent", "--new-session", "--clearenv"]
    if root:
        for cap in ("SETUID", "SETGID", "KILL", "CHOWN", "DAC_OVERRIDE", "FOWNER"):
            cmd += ["--cap-add", f"CAP_{cap}"]
    else:
        cmd += ["--unshare-user"]
    return [*cmd, "--chdir", "/sandbox"]


def _unshare_prefix() -> list[str]:
    return ["unshare", "--pid", "--fork", "--net", "--ipc", "--uts", "--mount", "--mount-proc"]


def _probe(prefix: list[str], python: str) -> bool:
    try:
        res = subprocess.run(
            [*prefix, python, "-I", "-S", "-c", "print(6*7)"],
            capture_output=True,
            timeout=20,
            env={"PATH": "/usr/bin:/bin"},
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return res.returncode == 0 and res.stdout.strip() == b"42"


@cache
def isolation_mode(wanted: str = "auto") -> Mode:
    """The isolation mode used: ``wanted`` if it works here (``auto``: the strongest that
    does), else :class:`~verirl.errors.UserInputError` for an explicit mode that cannot run."""
    if wanted not in ("auto", "bwrap", "unshare", "rlimits"):
        raise UserInputError(
            f"sandbox mode must be auto, bwrap, unshare or rlimits, got {wanted!r}"
        )
    if (
        wanted in ("auto", "bwrap")
        and shutil.which("bwrap")
        and _probe(_bwrap_prefix(), _sandbox_python("bwrap"))
    ):
        return "bwrap"
    if wanted == "bwrap":
        raise UserInputError("sandbox mode bwrap: bubblewrap is missing or cannot run here")
    root = os.geteuid() == 0
    if (
        wanted in ("auto", "unshare")
        and root
        and shutil.which("unshare")
        and _probe(_unshare_prefix(), _python())
    ):
        return "unshare"
    if wanted == "unshare":
        raise UserInputError("sandbox mode unshare: needs root and a working unshare(1)")
    log.warning(
        "verirl.sandbox: no namespace isolation available (install bubblewrap); running "
        "untrusted code under resource limits only: network access and reads of the file "
        "system are NOT blocked"
    )
    return "rlimits"


# ---- one warm worker ---------------------------------------------------------------------------
class _Worker:
    def __init__(self, mode: Mode, uid: int) -> None:
        self.mode = mode
        self.uid = uid
        self._host_dir: str | None = None
        runner = str(_RUNNER)
        if mode == "bwrap":
            # the runner and _checked.py, which it loads from beside itself
            runner = f"/verirl-sandbox/{_RUNNER.name}"
            prefix = [*_bwrap_prefix()[:-2], "--ro-bind", str(_RUNNER.parent), "/verirl-sandbox"]
            prefix += ["--chdir", "/"]
            root, wipe, pidns = "/sandbox", "1", "1"
        else:
            self._host_dir = tempfile.mkdtemp(prefix="verirl-sandbox-")
            os.chmod(self._host_dir, 0o711)
            root = self._host_dir
            prefix = _unshare_prefix() if mode == "unshare" else []
            wipe, pidns = "0", "1" if mode == "unshare" else "0"
        cmd = [
            *prefix,
            _sandbox_python(mode),
            "-I",
            "-S",
            "-B",
            runner,
            str(uid),
            root,
            wipe,
            pidns,
            "0" if mode == "bwrap" else "1",  # preload more of the stdlib (see _runner.py)
        ]
        # A socket, not pipes: a program cannot open a socket through /proc/PID/fd (a pipe it
        # could, wherever it may read the holder's descriptors) to forge the runner's replies.
        self._sock, theirs = socket.socketpair()
        try:
            self.proc = subprocess.Popen(
                cmd,
                stdin=theirs.fileno(),
                stdout=theirs.fileno(),
                stderr=subprocess.DEVNULL,
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                start_new_session=True,
            )
        finally:
            theirs.close()
        self._buf = b""
        hello = self._read_line(30.0)
        if hello is None or not json.loads(hello).get("ready"):
            self.close()
            raise RuntimeError(f"sandbox worker ({mode}) did not start")

    def _read_line(self, timeout: float) -> bytes | None:
        fd = self._sock.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            poller = select.poll()
            poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
            if not poller.poll(left * 1000):
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return None
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line

    def run(self, req: dict[str, Any], limits: Limits, checker: str | None = None) -> Execution:
        """Send one request (``checker``, for a checked run, travels after it so the runner
        can hand it to the checker process without holding it) and read the verdict."""
        body = json.dumps({**req, "limits": asdict(limits)}).encode()
        tail = checker.encode("utf-8") if checker is not None else b""
        head = b"%15d %15d\n" % (len(body), len(tail))
        try:
            self._sock.sendall(head + body + tail)
        except OSError as exc:
            raise RuntimeError(f"sandbox worker is gone: {exc}") from exc
        line = self._read_line(limits.wall_s + 10.0)
        if line is None:
            raise RuntimeError("sandbox worker did not answer")
        reply = json.loads(line)
        checked = reply.get("checked") if checker is not None else None
        reports = reply.get("reports", []) if checker is not None else []
        return Execution(
            status=reply["status"],
            stdout=reply.get("stdout", ""),
            stderr=reply.get("stderr", ""),
            exit_code=reply.get("exit_code"),
            signal=reply.get("signal"),
            wall_s=float(reply.get("wall_s", 0.0)),
            checked=bool(checked) if checker is not None else None,
            reports=tuple(reports),
        )

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.killpg(self.proc.pid, 9)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        with contextlib.suppress(OSError):
            self._sock.close()
        if self._host_dir:
            shutil.rmtree(self._host_dir, ignore_errors=True)


def _uid_base() -> int:
    """Execution users 62000..64999, spread by process id so pools of different processes
    rarely share a user (a shared user shares its process budget)."""
    return 62000 + (os.getpid() * 8) % 2992


class Sandbox:
    """A warm pool of ``workers`` sandboxed runners; thread-safe (one execution per worker at
    a time). ``mode``: ``auto`` (strongest available), ``bwrap``, ``unshare`` or ``rlimits``.
    """

    def __init__(self, workers: int = 2, mode: str = "auto", limits: Limits | None = None) -> None:
        if workers < 1:
            raise UserInputError(f"sandbox workers must be >= 1, got {workers}")
        self.mode: Mode = isolation_mode(mode)
        self.limits = limits or Limits()
        self._uids = [_uid_base() + i for i in range(workers)]
        self._idle: queue.Queue[int] = queue.Queue()
        self._workers: dict[int, _Worker | None] = dict.fromkeys(range(workers))
        self._lock = threading.Lock()
        self._closed = False
        for i in range(workers):
            self._idle.put(i)

    def _worker(self, i: int) -> _Worker:
        w = self._workers[i]
        if w is None or not w.alive():
            if w is not None:
                w.close()
            uid = self._uids[i] if os.geteuid() == 0 else os.geteuid()
            w = _Worker(self.mode, uid)
            self._workers[i] = w
        return w

    def run(
        self,
        code: str,
        stdin: str = "",
        limits: Limits | None = None,
        argv: list[str] | None = None,
        **overrides: float,
    ) -> Execution:
        """Run the Python program ``code`` (``stdin`` as its standard input) under ``limits``
        (default: the pool's, with keyword ``overrides`` such as ``wall_s=1``)."""
        req = {"code": code, "stdin": stdin, "argv": argv or []}
        return self._submit(req, None, limits, overrides)

    def run_checked(
        self,
        program: str,
        entry: str,
        checker: str,
        data: Any = None,
        limits: Limits | None = None,
        **overrides: float,
    ) -> Execution:
        """Check the untrusted ``program`` with the trusted ``checker`` code, in two processes.

        The program runs in the *candidate* process (standard output discarded, stderr
        captured), which then answers calls to its function ``entry``. The checker runs in the
        *checker* process, where ``candidate(*args, **kwargs)`` calls that function and returns
        its answer as plain data (``candidate.map(arg_lists)`` sends many calls at once and
        yields ``(True, value)`` or ``(False, error)`` per call; ``CandidateError`` when it
        raised or answered garbage,
        ``CandidateLoadError`` when the program did not load, ``CandidateGone`` when the
        process ended); ``data`` (any JSON value) is there as ``data``, and
        ``report(value)`` sends a JSON value back (``Execution.reports``).
        ``Execution.checked`` is true only when the checker ran to its end: the checker
        process reports it, with a per-run nonce, on a channel the program cannot reach
        (threat model: ``docs/security.md``). ``data`` is visible to the program; the
        checker's text is not. The limits apply to each process.
        """
        req = {"code": program, "entry": entry, "data": data}
        return self._submit(req, checker, limits, overrides)

    def _submit(
        self,
        req: dict[str, Any],
        checker: str | None,
        limits: Limits | None,
        overrides: dict[str, float],
    ) -> Execution:
        if self._closed:
            raise RuntimeError("the sandbox is closed")
        lim = limits or self.limits
        if overrides:
            lim = replace(lim, **overrides)  # type: ignore[arg-type]
        i = self._idle.get()
        try:
            for attempt in range(2):
                try:
                    return self._worker(i).run(req, lim, checker)
                except (RuntimeError, OSError, ValueError) as exc:
                    w = self._workers[i]
                    if w is not None:
                        w.close()
                    self._workers[i] = None
                    log.warning("sandbox worker failed (attempt %d): %r", attempt + 1, exc)
                    if attempt == 1:
                        failed = Execution("sandbox_error", stderr=repr(exc))
                        return replace(failed, checked=False) if checker is not None else failed
            return Execution("sandbox_error")
        finally:
            self._idle.put(i)

    def warm(self) -> None:
        """Start every worker now (otherwise they start on first use)."""
        for i in list(self._workers):
            self._worker(i)

    def close(self) -> None:
        self._closed = True
        for i, w in self._workers.items():
            if w is not None:
                w.close()
                self._workers[i] = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SandboxConfig(BaseModel):
    """The ``sandbox:`` section of a config: the warm pool a training run or ``verirl serve``
    runs model-written code in. ``VERIRL_SANDBOX_WORKERS`` and ``VERIRL_SANDBOX_MODE``, when
    set, override ``workers`` and ``mode`` (documented operator overrides)."""

    model_config = ConfigDict(extra="forbid")

    workers: int = Field(
        2, ge=1, le=256, description="Programs run at once (warm sandboxed interpreters)."
    )
    mode: Literal["auto", "bwrap", "unshare", "rlimits"] = Field(
        "auto",
        description="Isolation: 'auto' (the strongest the machine allows), 'bwrap', 'unshare' "
        "or 'rlimits' (limits only; no network or file-system isolation).",
    )
    cpu_s: float = Field(2.0, gt=0, description="Default CPU-time limit of one program.")
    wall_s: float = Field(5.0, gt=0, description="Default wall-time limit of one program.")
    memory_mb: int = Field(512, ge=16, description="Address-space limit of one program.")
    file_size_mb: int = Field(16, ge=1, description="Largest file a program may write.")
    open_files: int = Field(64, ge=8, description="Open file descriptors per program.")
    processes: int = Field(16, ge=1, description="Processes/threads a program may have.")
    output_bytes: int = Field(
        1_000_000, ge=1024, description="stdout and stderr are each captured up to this."
    )

    def resolved(self) -> SandboxConfig:
        """This config with the ``VERIRL_SANDBOX_*`` overrides applied."""
        update: dict[str, object] = {}
        workers = os.environ.get("VERIRL_SANDBOX_WORKERS")
        if workers:
            try:
                update["workers"] = int(workers)
            except ValueError:
                raise UserInputError(
                    f"VERIRL_SANDBOX_WORKERS must be an integer, got {workers!r}"
                ) from None
        mode = os.environ.get("VERIRL_SANDBOX_MODE")
        if mode:
            update["mode"] = mode
        if not update:
            return self
        try:
            return SandboxConfig.model_validate({**self.model_dump(), **update})
        except ValidationError as exc:
            raise UserInputError(f"VERIRL_SANDBOX_*: {exc.errors()[0]['msg']}") from None

    def limits(self) -> Limits:
        return Limits(
            cpu_s=self.cpu_s,
            wall_s=self.wall_s,
            memory_mb=self.memory_mb,
            file_size_mb=self.file_size_mb,
            open_files=self.open_files,
            processes=self.processes,
            output_bytes=self.output_bytes,
        )

    def build(self) -> Sandbox:
        """A new sandbox pool from this config (overrides applied)."""
        cfg = self.resolved()
        return Sandbox(cfg.workers, cfg.mode, cfg.limits())


# The config this process's sandbox is built from: configure_sandbox() sets it; verifier
# worker processes receive it explicitly (the process pool's initializer arguments, a Ray
# actor's start-up arguments) and configure their own copy.
_CONFIGURED: SandboxConfig | None = None
_DEFAULT: dict[int, Sandbox] = {}
_DEFAULT_LOCK = threading.Lock()


def configure_sandbox(config: SandboxConfig) -> None:
    """Make ``config`` the sandbox configuration of this process (the training loop and
    ``verirl serve`` call this with their config's ``sandbox:`` section before building their
    executors, whose worker processes are handed :func:`current_sandbox_config` when they
    start). A sandbox already built under another configuration is closed; the next use
    builds the new one."""
    global _CONFIGURED
    with _DEFAULT_LOCK:
        if config == _CONFIGURED and _DEFAULT:
            return
        _CONFIGURED = config
        old = list(_DEFAULT.values())
        _DEFAULT.clear()
    for box in old:
        box.close()


def current_sandbox_config() -> SandboxConfig:
    """The configuration :func:`default_sandbox` builds from (defaults when nothing was
    configured), before the ``VERIRL_SANDBOX_*`` overrides."""
    return _CONFIGURED or SandboxConfig()


def configure_worker_sandbox(config_json: str | None) -> None:
    """In a verifier worker process: configure the sandbox its parent handed over (a
    :class:`SandboxConfig` as JSON; None keeps the defaults)."""
    if config_json:
        configure_sandbox(SandboxConfig.model_validate_json(config_json))


def default_sandbox() -> Sandbox:
    """This process's sandbox, built on first use from the configured :class:`SandboxConfig`
    (:func:`configure_sandbox`; the ``VERIRL_SANDBOX_*`` overrides apply), closed at exit."""
    pid = os.getpid()
    with _DEFAULT_LOCK:
        box = _DEFAULT.get(pid)
        if box is None:
            box = current_sandbox_config().build()
            _DEFAULT.clear()  # a forked child must not reuse its parent's workers
            _DEFAULT[pid] = box
            atexit.register(box.close)
        return box


__all__ = [
    "Execution",
    "Limits",
    "Sandbox",
    "SandboxConfig",
    "configure_sandbox",
    "configure_worker_sandbox",
    "current_sandbox_config",
    "default_sandbox",
    "isolation_mode",
]
