"""The server's routes in-process (FastAPI's TestClient): OpenEnv episodes, verirl's JSON
routes, the guards, and one-line 4xx errors for bad input."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openenv.core", reason="needs openenv-core (the 'serve' extra)")

from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from verirl.curriculum import CurriculumConfig
from verirl.envs import get_env
from verirl.registry import Plugin
from verirl.serve.app import build_app
from verirl.serve.gym import Gym
from verirl.serve.settings import GymConfig, ServeConfig
from verirl.verification.settings import VerificationConfig

CFG = CurriculumConfig(environments=["addition", "multiplication"], tau_num=2, tau_acc=0.5)
TOKEN = "t" * 24


def _gym(tmp_path: Path, timeout_s: float = 10.0, **serve: Any) -> Gym:
    gym = GymConfig(
        serve=ServeConfig(**serve),
        curriculum=CFG,
        verification=VerificationConfig(executor=Plugin(name="inline"), timeout_s=timeout_s),
    )
    return Gym.from_config(gym, state_path=str(tmp_path / "state.sqlite"))


@pytest.fixture()
def client(tmp_path: Path) -> Iterator[TestClient]:
    gym = _gym(tmp_path, max_body_bytes=16384, max_answer_chars=200, max_batch=8)
    with TestClient(build_app(gym)) as c:
        yield c
    gym.close()


def _solve(env: str, difficulty: int, seed: int) -> str:
    e = get_env(env)
    return e.answer_format.render(e.solve(e.generate(difficulty, seed)))


def test_http_reset_and_one_turn_step_give_the_environments_verdicts(client: TestClient) -> None:
    r = client.post("/reset", json={"env": "addition", "difficulty": 2, "seed": 5})
    assert r.status_code == 200
    obs = r.json()["observation"]
    assert obs["prompt"] == get_env("addition").generate(2, 5).prompt
    good = _solve("addition", 2, 5)
    action = {"answer": good, "env": "addition", "difficulty": 2, "seed": 5}
    r = client.post("/step", json={"action": action})
    body = r.json()
    assert body["done"] is True and body["reward"] == 1.0
    assert body["observation"]["verdict"]["correct"] is True
    wrong = get_env("addition").verify(get_env("addition").generate(2, 5), "\\boxed{-1}")
    r = client.post("/step", json={"action": {**action, "answer": "\\boxed{-1}"}})
    assert r.json()["reward"] == pytest.approx(wrong.reward)
    assert r.json()["observation"]["verdict"]["correct"] is False


def test_verify_batch_and_curriculum_counting(client: TestClient) -> None:
    drawn = client.post("/curricula/run/tasks", json={"n": 4})
    assert drawn.status_code == 200, drawn.text
    problems = drawn.json()["problems"]
    assert [p["seed"] for p in problems] == [0, 1, 2, 3]
    items = [
        {k: p[k] for k in ("env", "difficulty", "seed")}
        | {"output": _solve(p["env"], p["difficulty"], p["seed"])}
        for p in problems
    ]
    items.append({"env": "addition", "difficulty": 0, "seed": 77, "output": "\\boxed{1}"})
    r = client.post("/verify", json={"items": items, "curriculum": "run"})
    verdicts = r.json()["verdicts"]
    assert [v["correct"] for v in verdicts[:4]] == [True] * 4
    assert [v["counted"] for v in verdicts] == [True] * 4 + [False]  # seed 77: not issued
    state = client.get("/curricula/run").json()
    assert state["verdicts"] == 4 and state["seed_counter"] == 4
    # every env at h=0 saw >= tau_num correct verdicts or still counts them
    assert sum(state["windows"][e][1] for e in state["windows"]) >= 1
    exported = client.get("/curricula/run/export").json()
    assert client.put("/curricula/copy", json=exported).status_code == 200
    assert client.get("/curricula/copy").json()["windows"] == state["windows"]
    assert client.get("/curricula").json()["curricula"] == ["copy", "run"]


def test_ws_multi_turn_refinement_feeds_back_and_counts_the_last_turn(
    client: TestClient,
) -> None:
    with client.websocket_connect("/ws") as ws:
        ws.send_text(json.dumps({"type": "reset", "data": {"curriculum": "mt", "turns": 3}}))
        obs = json.loads(ws.receive_text())["data"]["observation"]
        env, difficulty, seed = obs["env"], obs["difficulty"], obs["seed"]
        assert obs["max_turns"] == 3 and obs["turn"] == 0
        for turn in (1, 2):
            ws.send_text(json.dumps({"type": "step", "data": {"answer": "\\boxed{-5}"}}))
            data = json.loads(ws.receive_text())["data"]
            assert data["done"] is False and data["observation"]["turn"] == turn
            assert data["observation"]["feedback"]  # the environment's feedback, shown next
            assert data["observation"]["counted"] is None
        good = _solve(env, difficulty, seed)
        ws.send_text(json.dumps({"type": "step", "data": {"answer": good}}))
        data = json.loads(ws.receive_text())["data"]
        assert data["done"] is True and data["reward"] == 1.0
        assert data["observation"]["counted"] is True
        ws.send_text(json.dumps({"type": "step", "data": {"answer": good}}))
        err = json.loads(ws.receive_text())
        assert err["type"] == "error" and "episode is over" in err["data"]["message"]
        ws.send_text(json.dumps({"type": "state"}))
        state = json.loads(ws.receive_text())["data"]
        assert state["turn"] == 3 and state["done"] is True and len(state["rewards"]) == 3
    summary = client.get("/curricula/mt").json()
    assert summary["verdicts"] == 1  # one episode, one verdict for the curriculum


def test_ws_finish_and_a_left_episode_count_their_last_verdict_once(client: TestClient) -> None:
    def send(kind: str, data: dict[str, Any]) -> dict[str, Any]:
        ws.send_text(json.dumps({"type": kind, "data": data}))
        return dict(json.loads(ws.receive_text())["data"])

    with client.websocket_connect("/ws") as ws:
        # finish with no turn: a wrong-format verdict, counted
        obs = send("reset", {"curriculum": "fin", "turns": 3})["observation"]
        assert obs["answer_format"] == "boxed" and obs["tools"] == [] and obs["correct"] is None
        ended = send("step", {"finish": True})
        assert ended["done"] is True and ended["reward"] == -1.0
        assert ended["observation"]["correct"] is False and ended["observation"]["counted"]
        # one wrong turn, then a new reset: the left episode counts its verdict
        send("reset", {"curriculum": "fin", "turns": 3})
        wrong = send("step", {"answer": "\\boxed{-5}"})
        assert wrong["done"] is False and wrong["observation"]["detail"]
        assert wrong["observation"]["correct"] is False
        assert client.get("/curricula/fin").json()["verdicts"] == 1
        send("reset", {"curriculum": "fin", "turns": 3})
        assert client.get("/curricula/fin").json()["verdicts"] == 2
        # a reset with no verdict, then another: nothing counted
        send("reset", {"curriculum": "fin"})
        assert client.get("/curricula/fin").json()["verdicts"] == 2
        ws.send_text(json.dumps({"type": "state"}))
        state = json.loads(ws.receive_text())["data"]
        assert state["window"] == [0, 0] and state["reward"] is None


def test_tool_world_takes_one_native_reply_per_step(tmp_path: Path) -> None:
    """The transcript the verifier replays counts against serve.max_answer_chars (default
    limits here)."""
    from verirl.envs.agents.tool_world import TURN_SEPARATOR
    from verirl.tools import get_format
    from verirl.tools.calls import decode_transcript

    tw = get_env("tool_world")
    replies = decode_transcript(tw.solve(tw.generate(2, 3)), TURN_SEPARATOR)
    fmt = get_format("hermes")
    gym = _gym(tmp_path)
    with TestClient(build_app(gym)) as client, client.websocket_connect("/ws") as ws:
        reset = {"env": "tool_world", "difficulty": 2, "seed": 3, "tool_format": "hermes"}
        ws.send_text(json.dumps({"type": "reset", "data": reset}))
        start = json.loads(ws.receive_text())["data"]["observation"]
        names = [s["function"]["name"] for s in start["tool_schemas"]]
        assert start["tools"] == sorted(names) and "files_write" in names
        assert start["tool_format"] == "hermes" and start["demonstration"]
        for reply in replies:
            ws.send_text(json.dumps({"type": "step", "data": {"answer": fmt.render(reply)}}))
            data = json.loads(ws.receive_text())["data"]
            obs = data["observation"]
            assert data["done"] is False and obs["tool_messages"][0]["role"] == "tool"
            assert obs["assistant"]["tool_calls"][0]["function"]["name"] == reply.calls[0].name
        assert obs["tool_messages"][0]["content"] == obs["feedback"] == '{"id": 5}'  # the event
        assert obs["verdict"]["correct"] is True  # the task is done; the episode goes on
        ws.send_text(json.dumps({"type": "step", "data": {"answer": "<tool_call>{oops"}}))
        bad = json.loads(ws.receive_text())["data"]["observation"]
        assert bad["tool_messages"][0]["role"] == "user" and "could not be read" in bad["feedback"]
        ws.send_text(json.dumps({"type": "step", "data": {"answer": "All done."}}))
        end = json.loads(ws.receive_text())["data"]
        assert (
            end["done"] is True
            and end["reward"] == 1.0
            and end["observation"]["tool_messages"] == []
        )
        ws.send_text(json.dumps({"type": "reset", "data": {**reset, "tool_format": "yaml"}}))
        refused = json.loads(ws.receive_text())
        assert refused["type"] == "error" and "unknown tool_format" in json.dumps(refused)
    gym.close()


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "words"),
    [
        ("post", "/reset", {"env": "nope"}, 404, "unknown environment"),
        ("post", "/reset", {"env": "addition", "difficulty": 101}, 400, "max_difficulty"),
        ("post", "/reset", {"env": "addition", "turns": 0}, 400, "turns"),
        ("post", "/reset", {"bogus": 1}, 400, "unknown reset field"),
        ("post", "/reset", {"seed": 3}, 400, "need env"),
        ("post", "/reset", {"env": "addition", "curriculum": ["x"]}, 400, "curriculum name"),
        ("post", "/reset", {"curriculum": {"a": 1}}, 400, "curriculum name"),
        ("post", "/step", {"action": {"answer": 5}}, 422, "answer"),
        ("post", "/step", {"action": {"answer": "x"}}, 400, "no episode"),
        ("post", "/verify", {"items": []}, 422, "items"),
        (
            "post",
            "/verify",
            {"items": [{"env": "addition", "difficulty": 0, "seed": 0, "output": "x"}] * 9},
            400,
            "max_batch",
        ),
        (
            "post",
            "/verify",
            {"items": [{"env": "addition", "difficulty": "hard", "seed": 0, "output": "x"}]},
            422,
            "difficulty",
        ),
        (
            "post",
            "/verify",
            {
                "items": [{"env": "addition", "difficulty": 0, "seed": 0, "output": "x"}],
                "curriculum": "ghost",
            },
            404,
            "ghost",
        ),
        (
            "post",
            "/verify",
            {"items": [{"env": "addition", "difficulty": 0, "seed": 0, "output": 5}]},
            422,
            "output",
        ),
        (
            "post",
            "/verify",
            {
                "items": [{"env": "addition", "difficulty": 0, "seed": 0, "output": "x"}],
                "curriculum": "run",
                "request_id": "not an id\n",
            },
            422,
            "request_id",
        ),
        ("get", "/curricula/ghost", None, 404, "no curriculum"),
        ("post", "/curricula", {"name": "a b"}, 400, "curriculum name"),
        ("put", "/curricula/x", {"state": 1}, 400, "config"),
    ],
)
def test_bad_input_is_a_one_line_4xx(
    client: TestClient, method: str, path: str, body: Any, status: int, words: str
) -> None:
    r = getattr(client, method)(path, json=body) if body is not None else client.get(path)
    assert r.status_code == status, r.text
    detail = r.json()["detail"]
    assert isinstance(detail, str) and "\n" not in detail and words in detail


def test_malformed_bodies_and_size_limit(client: TestClient) -> None:
    for raw in (b"{", b"\xff\xfe\x00garbage", b"[" * 3000 + b"]" * 1000, b'{"action": nul}'):
        r = client.post("/step", content=raw, headers={"content-type": "application/json"})
        assert 400 <= r.status_code < 500, (raw[:20], r.status_code)
        assert isinstance(r.json()["detail"], str)
    r = client.post("/verify", content=b"x" * 20000, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "max_body_bytes" in r.json()["detail"]
    lone = '{"action": {"answer": "\\ud800", "env": "addition", "difficulty": 0, "seed": 0}}'
    r = client.post("/step", content=lone.encode(), headers={"content-type": "application/json"})
    assert r.status_code == 200 and r.json()["reward"] == -1.0  # scored, as /verify does
    assert r.json()["observation"]["verdict"]["status"] == "not_text"


def test_token_guards_every_route_but_health(tmp_path: Path) -> None:
    gym = _gym(tmp_path)
    with TestClient(build_app(gym, token=TOKEN)) as c:
        assert c.get("/health").status_code == 200
        for path in ("/envs", "/schema", "/state", "/metadata", "/curricula"):
            assert c.get(path).status_code == 401
            assert c.get(path, headers={"Authorization": "Bearer wrong"}).status_code == 401
            assert c.get(path, headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
        assert c.post("/reset", json={}).status_code == 401
        with (
            pytest.raises(WebSocketDisconnect),  # closed before accept: no session
            c.websocket_connect("/ws") as ws,
        ):
            ws.receive_text()
        with c.websocket_connect(f"/ws?token={TOKEN}") as ws:
            ws.send_text(json.dumps({"type": "reset", "data": {"env": "addition"}}))
            assert json.loads(ws.receive_text())["type"] == "observation"
    gym.close()


def test_verifier_past_its_deadline_is_a_timeout_verdict(tmp_path: Path) -> None:
    gym = _gym(tmp_path, timeout_s=1e-9)  # every call overruns this deadline
    with TestClient(build_app(gym)) as c:
        item = {"env": "addition", "difficulty": 0, "seed": 0, "output": _solve("addition", 0, 0)}
        r = c.post("/verify", json={"items": [item]})
        assert r.status_code == 200
        v = r.json()["verdicts"][0]
        assert v["status"] == "timeout" and v["correct"] is False and v["reward"] == -0.5
    gym.close()


def test_an_unreadable_output_is_a_verdict_and_the_others_are_verified(
    client: TestClient,
) -> None:
    """Over ``max_answer_chars`` (200 here) or not Unicode: a ``too_long`` / ``not_text``
    verdict for that item alone, whatever the text holds; the rest verified as usual."""
    assert client.get("/envs").json()["limits"]["max_answer_chars"] == 200
    good = _solve("addition", 1, 4)
    at_limit = " " * (200 - len(good)) + good  # exactly the limit: verified, accepted
    over = "x" * (201 - len(good)) + good  # one past it, correct answer at the end: rejected
    items = [
        {"env": "addition", "difficulty": 1, "seed": 4, "output": text}
        for text in (good, over, at_limit, "\ud800" + good, "no answer")
    ]
    body = json.dumps({"items": items}).encode()  # the lone surrogate as a \\u escape
    r = client.post("/verify", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 200, r.text
    v = r.json()["verdicts"]
    assert [x["status"] for x in v] == ["ok", "too_long", "ok", "not_text", "ok"]
    assert [x["correct"] for x in v] == [True, False, True, False, False]
    assert v[1]["reward"] == v[3]["reward"] == -1.0
    assert "serve.max_answer_chars" in v[1]["detail"] and "\n" not in v[1]["detail"]


def test_an_unreadable_step_is_a_wrong_format_turn_not_a_refused_request(
    client: TestClient,
) -> None:
    """An episode's step takes any model output: over ``max_answer_chars`` (a correct answer
    at its end) or not Unicode, the turn gets the too_long / not_text verdict (reward -1) and
    its detail as feedback, and the episode goes on; over plain HTTP the one-turn step too."""
    good = _solve("addition", 1, 4)
    over = "x" * 201 + good
    action = {"answer": over, "env": "addition", "difficulty": 1, "seed": 4}
    r = client.post("/step", json={"action": action})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["done"] is True and body["reward"] == -1.0
    assert body["observation"]["verdict"]["status"] == "too_long"
    with client.websocket_connect("/ws") as ws:
        reset = {"env": "addition", "difficulty": 1, "seed": 4, "turns": 3}
        ws.send_text(json.dumps({"type": "reset", "data": reset}))
        json.loads(ws.receive_text())
        for text, status in ((over, "too_long"), ("\ud800" + good, "not_text")):
            ws.send_text(json.dumps({"type": "step", "data": {"answer": text}}))  # \\u escape
            data = json.loads(ws.receive_text())["data"]
            obs = data["observation"]
            assert data["done"] is False and data["reward"] == -1.0, data
            assert obs["verdict"]["status"] == status and obs["correct"] is False
            assert obs["feedback"] == obs["detail"] and "not verified" in obs["feedback"]
        ws.send_text(json.dumps({"type": "step", "data": {"answer": good}}))
        data = json.loads(ws.receive_text())["data"]
        assert data["done"] is True and data["reward"] == 1.0


def test_a_body_limit_that_cannot_carry_one_answer_is_refused() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="cannot carry one answer"):
        ServeConfig(max_body_bytes=100_000, max_answer_chars=65_536)
    assert ServeConfig(max_body_bytes=100_000, max_answer_chars=7_000).max_answer_chars == 7_000


def test_a_call_of_only_unreadable_outputs_counts_them_as_failures(client: TestClient) -> None:
    client.post("/curricula", json={"name": "long"})
    row = client.post("/curricula/long/tasks", json={"n": 1}).json()["problems"][0]
    item = {k: row[k] for k in ("env", "difficulty", "seed")} | {"output": "y" * 500}
    r = client.post("/verify", json={"items": [item], "curriculum": "long"})
    assert r.status_code == 200, r.text
    (verdict,) = r.json()["verdicts"]
    assert verdict["status"] == "too_long" and verdict["counted"] is True
    assert client.get("/curricula/long").json()["verdicts"] == 1


def test_startup_objects_are_frozen_out_of_the_collectors_sight() -> None:
    """``serve.gc_freeze``: what is alive at start-up (here: this test run's objects) leaves
    the generations a full collection scans; off, nothing is frozen."""
    import gc

    from verirl.serve.server import freeze_startup_objects

    gc.unfreeze()
    try:
        assert freeze_startup_objects(False) == 0
        frozen = freeze_startup_objects(True)
        assert frozen > 10_000  # the imported library and test session, at the least
    finally:
        gc.unfreeze()
