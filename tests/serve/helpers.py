"""A real ``verirl serve`` process on loopback, for the serve tests and the bench."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


class ServerProcess:
    """``python -m verirl.cli serve`` with ``args``; :meth:`start` waits for its socket."""

    def __init__(self, state: Path, *args: str, startup_s: float = 240.0) -> None:
        self.state = state
        self.args = list(args)
        self.startup_s = startup_s
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self.output: deque[str] = deque(maxlen=2000)
        """The server's last output lines (drained by a thread, so a server that logs a lot
        never blocks on a full pipe)."""

    def start(self) -> ServerProcess:
        env = dict(os.environ)
        env["PYTHONPATH"] = str(REPO / "src") + os.pathsep + env.get("PYTHONPATH", "")
        env.setdefault("OMP_NUM_THREADS", "1")
        cmd = [sys.executable, "-m", "verirl.cli", "serve", "--port", "0"]
        cmd += ["--state", str(self.state), *self.args]
        self.proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        deadline = time.monotonic() + self.startup_s
        lines = []
        assert self.proc.stdout is not None
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if "listening on " in line:
                self.url = line.split("listening on ", 1)[1].strip()
                self.output.extend(lines)
                threading.Thread(target=self._drain, daemon=True).start()
                return self
        self.kill()
        raise RuntimeError("verirl serve did not start:\n" + "".join(lines[-30:]))

    def _drain(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            self.output.append(line)

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=60)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


@contextlib.contextmanager
def gym_server(state: Path, envs: Sequence[str], **curriculum: object) -> Iterator[str]:
    """A ``verirl serve`` process whose default curriculum is over ``envs`` (``curriculum``:
    more ``curriculum.*`` settings, e.g. ``tau_num=2``), verifying on threads; yields its URL
    and kills it afterwards."""
    args = [f"curriculum.environments=[{','.join(envs)}]"]
    args += [f"curriculum.{key}={value}" for key, value in curriculum.items()]
    proc = ServerProcess(state, *args, "verification.executor.name=threads").start()
    try:
        yield proc.url
    finally:
        proc.kill()
