"""A real ``verirl serve`` process on loopback, for the serve tests and the bench."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
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
                return self
        self.kill()
        raise RuntimeError("verirl serve did not start:\n" + "".join(lines[-30:]))

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=60)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None
