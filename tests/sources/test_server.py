"""``verirl train`` against a real ``verirl serve`` (``envs.server``): the server's named
curriculum hands out the problems, its ``/verify`` gives the rewards, and its counters move by
exactly the verdicts the trainer trained on. Plus the one-line failures of the source."""

from __future__ import annotations

import http.server
import json
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn", reason="needs uvicorn (the 'serve' extra): verirl serve is started")

from tests.serve.helpers import ServerProcess
from tests.tiny_run import tiny_run
from verirl.assembly import build
from verirl.config import load_config
from verirl.envs import get_env
from verirl.serve.settings import TOKEN_ENV
from verirl.sources.server import GymClient, GymServerError, ServerTasks, ServerVerifier, connect
from verirl.train.metrics import read_metrics
from verirl.trainer import Trainer

TOKEN = "a-test-token-of-32-characters-xx"


@pytest.fixture(scope="module")
def gym(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    state = tmp_path_factory.mktemp("serve-train") / "state.sqlite"
    proc = ServerProcess(state, "--token", TOKEN, "verification.executor.name=threads").start()
    yield proc
    proc.kill()


def _call(gym: ServerProcess, method: str, path: str, body: Any = None) -> Any:
    req = urllib.request.Request(
        gym.url + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=120) as resp:
        return json.loads(resp.read())


def _overrides(url: str, run_dir: Path, model_dir: Path | None = None) -> list[str]:
    out = [
        f"envs.server={url}",
        "envs.retries=0",
        f"run.dir={run_dir.parent}",
        f"run.name={run_dir.name}",
        "curriculum.environments=[addition,multiplication]",
        "curriculum.tau_num=1000",  # no check yet: the counters at h hold every verdict
        "verification.executor.name=inline",
    ]
    if model_dir is not None:  # a tiny training run (the shared one) from the server
        out = [
            *tiny_run(
                model_dir,
                run_dir,
                3,
                "reward.name=env",
                "run.save_every=0",
                "run.log_samples=6",
                "rollout.group_size=2",
                "rollout.max_new_tokens=8",
            ),
            *out,
        ]
    return out


def test_training_draws_problems_and_rewards_from_the_server(
    gym: ServerProcess, tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    run_dir = tmp_path / "remote-run"
    cfg = load_config(None, _overrides(gym.url, run_dir, tiny_model_dir))
    run_dir.mkdir()
    with Trainer(build(cfg), run_dir) as trainer:
        verifier = trainer.parts.producer.verifier
        assert isinstance(verifier, ServerVerifier)
        trainer.fit()
        counted = verifier.counted
    rollouts = 3 * 3 * 2  # steps × prompts × group size
    assert counted == rollouts
    state = _call(gym, "GET", "/curricula/remote-run")
    assert state["verdicts"] == rollouts  # every verdict trained on, each counted once
    assert state["seed_counter"] == 3 * 3  # every problem the trainer asked for, no more
    assert sum(attempted for _, attempted in state["counters"].values()) == rollouts

    samples = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]
    assert len(samples) == rollouts
    assert {s["seed"] for s in samples} == set(range(9))  # the server's seeds, in order
    again = _call(
        gym,
        "POST",
        "/verify",
        {
            "items": [
                {k: s[k] for k in ("env", "difficulty", "seed")} | {"output": s["response"]}
                for s in samples
            ]
        },
    )["verdicts"]
    assert [s["reward"] for s in samples] == [v["reward"] for v in again]
    assert [s["correct"] for s in samples] == [v["correct"] for v in again]
    assert _call(gym, "GET", "/curricula/remote-run")["verdicts"] == rollouts  # uncounted
    rows = read_metrics(run_dir)
    for row in rows:
        step = [s["reward"] for s in samples if s["step"] == row["step"]]
        assert row["rollout/reward"] == pytest.approx(sum(step) / len(step))
    assert rows[-1]["curriculum/server_verdicts"] == rollouts


@pytest.mark.slow
def test_asynchronous_training_counts_each_verdict_once(
    gym: ServerProcess, tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bounded-staleness schedule: the producer process builds its own server source from
    the config."""
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    run_dir = tmp_path / "remote-async"
    overrides = [
        *_overrides(gym.url, run_dir, tiny_model_dir),
        "run.schedule.name=bounded_staleness",
        "run.schedule.params.max_staleness=1",
    ]
    cfg = load_config(None, overrides)
    run_dir.mkdir()
    with Trainer(build(cfg), run_dir) as trainer:
        trainer.fit()
    samples = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]
    state = _call(gym, "GET", "/curricula/remote-async")
    assert len(samples) == 3 * 3 * 2
    # the producer may run one step ahead (staleness 1): what it drew is counted too
    assert state["verdicts"] == 2 * state["seed_counter"] >= len(samples)
    assert state["seed_counter"] in (9, 12)


def test_wrong_token_is_one_line(gym: ServerProcess, tmp_path: Path) -> None:
    cfg = load_config(None, _overrides(gym.url, tmp_path / "r"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(TOKEN_ENV, "not-the-token-but-long-enough")
        with pytest.raises(GymServerError, match="refused the token") as err:
            connect(cfg.gym())
    assert "\n" not in str(err.value)


def test_unreachable_server_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    cfg = load_config(None, _overrides(f"http://127.0.0.1:{port}", tmp_path / "r"))
    with pytest.raises(GymServerError, match="cannot reach the gym server") as err:
        connect(cfg.gym())
    assert f"127.0.0.1:{port}" in str(err.value) and "\n" not in str(err.value)


class _Fake(http.server.BaseHTTPRequestHandler):
    answer: Callable[[str], tuple[int, bytes]]

    def _reply(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        status, body = type(self).answer(self.path)
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _reply

    def log_message(self, *args: object) -> None:
        pass


def _fake(answer: Callable[[str], tuple[int, bytes]], port: int = 0) -> http.server.HTTPServer:
    handler = type("Handler", (_Fake,), {"answer": staticmethod(answer)})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _addition_only(path: str) -> tuple[int, bytes]:
    if path == "/health":
        return 200, b'{"status": "healthy"}'
    if path == "/envs":
        return 200, json.dumps({"environments": [{"name": "addition"}]}).encode()
    return 404, b'{"detail": "no"}'


def test_environment_the_server_lacks_is_one_line(tmp_path: Path) -> None:
    fake = _fake(_addition_only)
    try:
        url = f"http://127.0.0.1:{fake.server_address[1]}"
        with pytest.raises(GymServerError, match="has no environment 'multiplication'"):
            connect(load_config(None, _overrides(url, tmp_path / "r")).gym())
    finally:
        fake.shutdown()


@pytest.mark.parametrize(
    ("body", "match"),
    [(b"<html>proxy error</html>", "not JSON"), (b'{"verdicts": [{"reward": 7}]}', "reward")],
)
def test_garbage_from_the_server_stops_with_one_line(body: bytes, match: str) -> None:
    fake = _fake(lambda path: (200, body))
    try:
        client = GymClient(f"http://127.0.0.1:{fake.server_address[1]}", retries=0)
        empty = {"windows": {}, "counters": {}, "seed_counter": 0, "verdicts": 0}
        tasks = ServerTasks(client, "c", empty)
        problem = get_env("addition").generate(1, 3)
        with pytest.raises(GymServerError, match=match) as err:
            ServerVerifier(client, tasks).verify([problem], ["\\boxed{1}"])
        assert "\n" not in str(err.value)
    finally:
        fake.shutdown()


def test_connection_errors_are_retried_then_stop() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = GymClient(f"http://127.0.0.1:{port}", retries=2, backoff_s=0.01)
    with pytest.raises(GymServerError, match="3 tries"):
        client.get("/health")
    assert client.retried == 2 and client.requests == 0
    # a server that comes up during the backoff is reached
    client = GymClient(f"http://127.0.0.1:{port}", retries=6, backoff_s=0.1)
    starter = threading.Timer(0.15, lambda: started.append(_fake(_addition_only, port)))
    started: list[http.server.HTTPServer] = []
    starter.start()
    try:
        assert client.get("/health") == {"status": "healthy"}
        assert client.retried >= 1
    finally:
        starter.join()
        for server in started:
            server.shutdown()


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["reward.name=exact_match"], "reward.name must be 'env'"),
        (["rollout.collector.name=multi_turn"], "single_turn"),
        (
            [
                "run.placement.name=local",
                "run.plugins=[tests.backends.plugin_placement]",
                "run.placement.name=test_recording",
            ],
            "run.placement",
        ),
        (["envs.server=ftp://127.0.0.1:1"], "http:// or https:// URL"),
        (["envs.curriculum=../etc"], "not a server curriculum name"),
    ],
)
def test_config_refuses_what_a_server_run_cannot_do(
    extra: list[str], match: str, tmp_path: Path
) -> None:
    from verirl.config import ConfigError

    with pytest.raises(ConfigError, match=match):
        load_config(None, [*_overrides("http://127.0.0.1:1", tmp_path / "r"), *extra])


def test_config_needs_a_curriculum_name_for_a_server_run() -> None:
    from verirl.config import ConfigError

    with pytest.raises(ConfigError, match=r"envs\.curriculum or run\.name"):
        load_config(None, ["envs.server=http://127.0.0.1:1"])
    cfg = load_config(None, [])
    assert cfg.envs.source == "local"


def _drawn(gym: ServerProcess, name: str, n: int) -> list[dict[str, Any]]:
    config = {"environments": ["addition"], "tau_num": 1000}
    _call(gym, "POST", "/curricula", {"name": name, "config": config})
    return _call(gym, "POST", f"/curricula/{name}/tasks", {"n": n})["problems"]


def _answer(row: dict[str, Any], right: bool) -> str:
    env = get_env(row["env"])
    problem = env.generate(row["difficulty"], row["seed"])
    return env.answer_format.render(env.solve(problem)) if right else "\\boxed{-1}"


def test_a_repeated_request_id_is_answered_from_the_store_not_counted_again(
    gym: ServerProcess,
) -> None:
    rows = _drawn(gym, "idempotent", 2)
    items = [
        {k: row[k] for k in ("env", "difficulty", "seed")} | {"output": _answer(row, i == 0)}
        for i, row in enumerate(rows)
    ]
    body = {"items": items, "curriculum": "idempotent", "count": [True, True]}
    first = _call(gym, "POST", "/verify", body | {"request_id": "step-7-chunk-0"})["verdicts"]
    assert [v["correct"] for v in first] == [True, False] and all(v["counted"] for v in first)
    again = _call(gym, "POST", "/verify", body | {"request_id": "step-7-chunk-0"})["verdicts"]
    assert again == first
    assert _call(gym, "GET", "/curricula/idempotent")["verdicts"] == 2  # counted once
    _call(gym, "POST", "/verify", body)  # no id: a second call, counted again
    assert _call(gym, "GET", "/curricula/idempotent")["verdicts"] == 4
    other = body | {"request_id": "step-7-chunk-0", "count": [True, False]}
    with pytest.raises(urllib.error.HTTPError) as err:
        _call(gym, "POST", "/verify", other)
    assert err.value.code == 409 and "other items" in json.loads(err.value.read())["detail"]


def test_a_lost_reply_is_retried_and_counted_once(
    gym: ServerProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server commits the counts, the reply is lost (the connection fails after the
    request went through), the client retries: the same verdicts, counted once."""
    client = GymClient(gym.url, TOKEN, retries=2, backoff_s=0.01)
    name = "lost-reply"
    summary = client.post(
        "/curricula", {"name": name, "config": {"environments": ["addition"], "tau_num": 1000}}
    )
    tasks = ServerTasks(client, name, summary)
    verifier = ServerVerifier(client, tasks, client.get("/envs")["limits"])
    problems = tasks.sample(3)
    texts = [
        _answer({"env": p.env, "difficulty": p.difficulty, "seed": p.seed}, True) for p in problems
    ]
    real = GymClient._send
    sent: list[str] = []

    def lose_first_reply(self: GymClient, method: str, path: str, *args: Any) -> tuple[int, bytes]:
        status, raw = real(self, method, path, *args)
        sent.append(path)
        if path == "/verify" and sent.count("/verify") == 1:
            raise ConnectionResetError("the reply was lost")
        return status, raw

    monkeypatch.setattr(GymClient, "_send", lose_first_reply)
    verdicts = verifier.verify(problems, texts)
    assert sent.count("/verify") == 2 and client.retried == 1  # the server saw it twice
    assert [v.correct for v in verdicts if v is not None] == [True] * 3
    assert verifier.counted == 3
    assert client.get(f"/curricula/{name}")["verdicts"] == 3  # not 6


def test_an_over_long_output_is_a_verdict_not_a_stopped_run(gym: ServerProcess) -> None:
    """Outputs far past the server's max_answer_chars (and its body limit, in ASCII JSON)
    are rejected item by item, counted as failures; the others are verified as usual."""
    client = GymClient(gym.url, TOKEN, retries=0)
    listing = client.get("/envs")
    limit = listing["limits"]["max_answer_chars"]
    name = "long-outputs"
    summary = client.post(
        "/curricula", {"name": name, "config": {"environments": ["addition"], "tau_num": 1000}}
    )
    tasks = ServerTasks(client, name, summary)
    verifier = ServerVerifier(client, tasks, listing["limits"])
    problems = tasks.sample(5)
    good = [
        _answer({"env": p.env, "difficulty": p.difficulty, "seed": p.seed}, True) for p in problems
    ]
    texts = [
        good[0],
        "\U0001f600" * (3 * limit) + good[1],  # ~2.4 MB in ASCII JSON; correct at the end
        " " * (limit - len(good[2])) + good[2],  # exactly the limit: verified whole
        "\U0001f600" * limit + good[3],
        good[4],
    ]
    verdicts = verifier.verify(problems, texts)
    assert [v.correct for v in verdicts if v is not None] == [True, False, True, False, True]
    assert [v.extra.get("status") for v in verdicts if v is not None][1::2] == ["too_long"] * 2
    # two items of ~0.8 MB each cannot share a 1 MiB body: the client split the call
    assert verifier.calls == 2
    assert verifier.counted == 5
    assert client.get(f"/curricula/{name}")["verdicts"] == 5
