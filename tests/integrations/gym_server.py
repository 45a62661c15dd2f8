"""A real OpenEnv server process (openenv-core's own app, uvicorn, loopback) for the adapter
tests: ``with openenv_server(["addition"], tau_num=2) as url: ...``."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import requests

SRC = Path(__file__).resolve().parents[2] / "src"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def openenv_server(envs: Sequence[str], **options: object) -> Iterator[str]:
    """Start ``python -m verirl.integrations.openenv.server`` on a free loopback port, wait
    for ``/health`` (≤ 120 s), yield its URL, and terminate it afterwards."""
    port = free_port()
    args = [sys.executable, "-m", "verirl.integrations.openenv.server", "--envs", ",".join(envs)]
    args += ["--port", str(port)]
    for key, value in options.items():
        args += [f"--{key.replace('_', '-')}", str(value)]
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                out = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
                raise RuntimeError(f"server exited with {proc.returncode}:\n{out[-3000:]}")
            try:
                if requests.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("server did not answer /health within 120 s")
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)
