"""A real ``verirl serve`` process on loopback: ``openenv validate`` passes, openenv-core's own
client plays an episode, a non-loopback address needs a token, and ``kill -9`` mid-load
loses no verdict a client received."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("openenv.core", reason="needs openenv-core (the 'serve' extra)")

import httpx

from tests.serve.helpers import REPO, ServerProcess
from verirl.envs import get_env


def _solve(env: str, difficulty: int, seed: int) -> str:
    e = get_env(env)
    return e.answer_format.render(e.solve(e.generate(difficulty, seed)))


def test_openenv_validate_passes(server: ServerProcess) -> None:
    exe = shutil.which("openenv") or str(Path(sys.executable).with_name("openenv"))
    if not Path(exe).exists():
        pytest.skip("openenv CLI not installed")
    run = subprocess.run(
        [exe, "validate", "--url", server.url], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert '"passed": true' in run.stdout


def test_openenv_core_client_plays_an_episode(server: ServerProcess) -> None:
    from openenv.core import GenericEnvClient

    with GenericEnvClient(base_url=server.url, message_timeout_s=120).sync() as env:
        result = env.reset(env="addition", difficulty=1, seed=4, turns=2)
        assert result.done is False
        assert result.observation["prompt"] == get_env("addition").generate(1, 4).prompt
        result = env.step({"answer": "\\boxed{-1}"})
        assert result.done is False and result.observation["feedback"]
        result = env.step({"answer": _solve("addition", 1, 4)})
        assert result.done is True and result.reward == 1.0
        assert env.state()["turn"] == 2


def test_websocket_sessions_end_without_an_application_error(server: ServerProcess) -> None:
    """A client that closes its /ws session, or drops the connection mid-step, ends the session
    quietly: uvicorn logs no "Exception in ASGI application" traceback for it."""
    import socket

    from websockets.sync.client import connect

    before = len(server.output)
    ws_url = server.url.replace("http://", "ws://") + "/ws"
    with connect(ws_url, open_timeout=60) as ws:  # a clean close
        ws.send('{"type": "reset", "data": {"env": "addition", "difficulty": 0, "seed": 1}}')
        assert '"observation"' in ws.recv(timeout=60)
    with connect(ws_url, open_timeout=60) as ws:  # a dropped connection, mid-step
        ws.send('{"type": "reset", "data": {}}')
        ws.recv(timeout=60)
        ws.send('{"type": "step", "data": {"answer": "\\\\boxed{3}"}}')
        ws.socket.shutdown(socket.SHUT_RDWR)  # no close frame: the client just goes
    # a third session proves the server went on, and gives it time to log the first two
    with connect(ws_url, open_timeout=60) as ws:
        ws.send('{"type": "reset", "data": {}}')
        assert '"observation"' in ws.recv(timeout=60)
    time.sleep(1.0)
    logged = "".join(list(server.output)[before:])
    assert "Exception in ASGI application" not in logged, logged[-3000:]
    assert "Traceback" not in logged, logged[-3000:]


def test_non_loopback_address_needs_a_token(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    env.pop("VERIRL_SERVE_TOKEN", None)
    cmd = [sys.executable, "-m", "verirl.cli", "serve", "--host", "0.0.0.0", "--port", "0"]
    run = subprocess.run(
        [*cmd, "--state", str(tmp_path / "s.sqlite")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert run.returncode == 2
    assert "without a token" in run.stderr


@pytest.mark.slow
def test_kill_9_mid_load_keeps_every_received_verdict(tmp_path: Path) -> None:
    state = tmp_path / "k9.sqlite"
    first = ServerProcess(state, "verification.executor.name=threads").start()
    received: list[tuple[int, bool, bool]] = []  # (seed, answered right, verdict correct)
    errors: list[str] = []
    stop = threading.Event()

    def client(k: int) -> None:
        with httpx.Client(base_url=first.url, timeout=60) as c:
            i = 0
            while not stop.is_set():
                try:
                    drawn = c.post("/curricula/k9/tasks", json={"n": 2}).json()["problems"]
                    items = []
                    for j, p in enumerate(drawn):
                        right = (i + j + k) % 3 != 0
                        out = (
                            _solve(p["env"], p["difficulty"], p["seed"]) if right else "\\boxed{x}"
                        )
                        items.append(
                            {**{x: p[x] for x in ("env", "difficulty", "seed")}, "output": out}
                        )
                    r = c.post("/verify", json={"items": items, "curriculum": "k9"})
                    for item, v in zip(items, r.json()["verdicts"], strict=True):
                        assert v["counted"] is True
                        received.append(
                            (item["seed"], item["output"] != "\\boxed{x}", v["correct"])
                        )
                    i += 1
                except httpx.TransportError as exc:  # the server was killed: expected
                    errors.append(type(exc).__name__)
                    return

    threads = [threading.Thread(target=client, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    t0 = time.monotonic()
    while len(received) < 60 and time.monotonic() - t0 < 180:
        time.sleep(0.2)
    first.kill()  # SIGKILL mid-load
    stop.set()
    for t in threads:
        t.join(timeout=120)
    assert len(received) >= 60 and errors, (len(received), errors)
    # never a wrong verdict: a right answer was judged correct, a wrong one not
    assert all(right == correct for _, right, correct in received)

    second = ServerProcess(state, "verification.executor.name=threads").start()
    try:
        with httpx.Client(base_url=second.url, timeout=60) as c:
            summary = c.get("/curricula/k9").json()
            # every verdict a client received was committed before it was sent
            assert summary["verdicts"] >= len(received)
            # no seed handed out before the kill is handed out again
            top = max(seed for seed, _, _ in received)
            assert summary["seed_counter"] > top
            fresh = c.post("/curricula/k9/tasks", json={"n": 1}).json()["problems"][0]
            assert fresh["seed"] == summary["seed_counter"]
    finally:
        second.kill()
