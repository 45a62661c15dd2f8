"""Hostile requests for every route of ``verirl serve`` (test helper; also driven by
``bench/fuzz_server.py`` for the on-demand million-request run).

:func:`hostile_request` composes, from a seeded RNG, a method, a path and a body: random
bytes, truncated or deeply nested JSON, wrong types, huge numbers, unknown environments and
curricula, difficulties past ``max_difficulty``, hostile model outputs (lone surrogates,
NUL, nested ``\\boxed{``), bodies past the size limit, unknown paths and methods — and some
well-formed requests. :func:`fuzz` sends them and counts status codes; the server must answer
every one below 500 and stay up.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.fuzz.hostile import hostile_output

ENVS = ["addition", "multiplication", "chain_sum", "tool_world", "sorting", "nope", "", "../x"]
NAMES = ["fz-a", "fz-b", "fz-c", "bad name", "x" * 80, "%00", "..", "fz-d"]


def _value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(12)
    if kind == 0:
        return rng.choice([10**400, -(10**30), 2**63, -1, 0, 7])
    if kind == 1:
        return rng.choice([float("inf"), float("nan"), 1e308, -0.0, 0.5])
    if kind == 2:
        return hostile_output(rng)
    if kind == 3:
        return None
    if kind == 4:
        return rng.choice([True, False])
    if kind == 5 and depth < 3:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if kind == 6 and depth < 3:
        return {hostile_output(rng)[:20]: _value(rng, depth + 1) for _ in range(rng.randrange(3))}
    if kind == 7:
        return rng.choice(ENVS)
    return rng.randrange(-5, 200)


def _item(rng: random.Random) -> dict[str, Any]:
    item: dict[str, Any] = {
        "env": rng.choice(ENVS[:5]) if rng.random() < 0.7 else _value(rng),
        "difficulty": rng.choice([0, 1, 3, 100, 101, 10**6, -1])
        if rng.random() < 0.8
        else _value(rng),
        "seed": rng.randrange(0, 50) if rng.random() < 0.8 else _value(rng),
        "output": hostile_output(rng) if rng.random() < 0.8 else _value(rng),
    }
    if rng.random() < 0.1:
        item.pop(rng.choice(list(item)))
    if rng.random() < 0.05:
        item["extra"] = 1
    return item


def _json_body(rng: random.Random, path: str) -> Any:
    if path == "/reset":
        body: dict[str, Any] = {}
        for key in rng.sample(
            ["env", "difficulty", "seed", "turns", "curriculum", "zz"], rng.randrange(4)
        ):
            body[key] = (
                _item(rng).get(key, _value(rng))
                if key != "curriculum"
                else rng.choice([*NAMES, _value(rng)])
            )
        return body
    if path == "/step":
        action = _item(rng)
        action["answer"] = action.pop("output", "")
        if rng.random() < 0.5:
            action = {"answer": action["answer"]}
        return {"action": action} if rng.random() < 0.9 else action
    if path == "/verify":
        body = {"items": [_item(rng) for _ in range(rng.choice([0, 1, 2, 5, 600]))]}
        if rng.random() < 0.3:
            body["curriculum"] = rng.choice(NAMES)
        return body
    if path == "/curricula":
        return {
            "name": rng.choice(NAMES),
            "config": rng.choice(
                [None, {"environments": [rng.choice(ENVS)]}, {"tau_num": _value(rng)}, _value(rng)]
            ),
        }
    if path.endswith("/tasks"):
        return {"n": rng.choice([1, 2, 0, -1, 5000, "3", None])}
    if path.startswith("/curricula/"):
        return {"config": _value(rng), "state": _value(rng), "seed": _value(rng)}
    return _value(rng)


ROUTES = [
    ("GET", "/health"),
    ("GET", "/schema"),
    ("GET", "/metadata"),
    ("GET", "/state"),
    ("GET", "/envs"),
    ("GET", "/curricula"),
    ("GET", "/curricula/{name}"),
    ("GET", "/curricula/{name}/export"),
    ("POST", "/reset"),
    ("POST", "/step"),
    ("POST", "/verify"),
    ("POST", "/curricula"),
    ("PUT", "/curricula/{name}"),
    ("POST", "/curricula/{name}/tasks"),
    ("POST", "/mcp"),
    ("GET", "/openapi.json"),
    ("DELETE", "/reset"),
    ("PATCH", "/verify"),
    ("GET", "/no/such/path"),
    ("POST", "/ws"),
]


def hostile_request(rng: random.Random, max_body: int) -> tuple[str, str, bytes, dict[str, str]]:
    """``(method, path, body, headers)``."""
    method, path = rng.choice(ROUTES)
    path = path.replace("{name}", rng.choice(NAMES).replace("/", "%2F"))
    if rng.random() < 0.03:
        path += "?" + "&".join(f"{k}=%ff%00" for k in "abc")
    headers = {
        "content-type": rng.choice(
            ["application/json"] * 8
            + [
                "text/plain",
                "application/x-www-form-urlencoded",
                "multipart/form-data; boundary=zz",
            ]
        )
    }
    kind = rng.random()
    if kind < 0.1:
        body = rng.randbytes(rng.choice([0, 1, 17, 1000, 5000]))
    elif kind < 0.15:
        depth = rng.choice([100, 5000, 200_000])
        body = (b"[" * depth + b"]" * depth) if rng.random() < 0.5 else b'{"action":' + b"{" * depth
    elif kind < 0.17:
        body = b'{"items": "' + b"a" * (max_body + rng.randrange(1, 1000)) + b'"}'
    else:
        text = json.dumps(_json_body(rng, path.split("?")[0]), ensure_ascii=rng.random() < 0.5)
        data = text.encode("utf-8", "surrogatepass")
        if rng.random() < 0.1:
            data = data[: rng.randrange(len(data) + 1)]
        body = data
    return method, path, body, headers


@dataclass
class FuzzResult:
    requests: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    server_errors: list[str] = field(default_factory=list)  # 5xx: method path status body
    bad_detail: list[str] = field(default_factory=list)  # 4xx without a one-line detail
    transport_errors: int = 0
    seconds: float = 0.0


def fuzz(
    url: str,
    n: int,
    *,
    seed: int = 0,
    workers: int = 4,
    max_body: int = 1_048_576,
    time_limit_s: float = 3600.0,
    progress: Callable[[int], None] | None = None,
) -> FuzzResult:
    """Send ``n`` hostile requests to ``url`` from ``workers`` threads (each its own seeded
    stream); stop early past ``time_limit_s``."""
    import httpx

    result = FuzzResult()
    lock = threading.Lock()
    t0 = time.monotonic()
    per = [n // workers + (1 if k < n % workers else 0) for k in range(workers)]

    def worker(k: int) -> None:
        rng = random.Random(f"serve-fuzz/{seed}/{k}")
        with httpx.Client(base_url=url, timeout=120) as client:
            for _ in range(per[k]):
                if time.monotonic() - t0 > time_limit_s:
                    return
                method, path, body, headers = hostile_request(rng, max_body)
                try:
                    r = client.request(method, path, content=body, headers=headers)
                except httpx.HTTPError:
                    with lock:
                        result.transport_errors += 1
                        result.requests += 1
                    continue
                line = f"{method} {path[:60]} -> {r.status_code}: {r.text[:200]!r}"
                with lock:
                    result.requests += 1
                    result.statuses[r.status_code] += 1
                    if r.status_code >= 500:
                        result.server_errors.append(line)
                    elif 400 <= r.status_code < 500:
                        try:
                            detail = r.json().get("detail")
                        except ValueError:
                            detail = None
                        if not isinstance(detail, str) or "\n" in detail:
                            result.bad_detail.append(line)
                    if progress is not None and result.requests % 10_000 == 0:
                        progress(result.requests)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    result.seconds = time.monotonic() - t0
    return result


def fuzz_websocket(url: str, n: int, seed: int = 0) -> tuple[int, int]:
    """``n`` hostile WebSocket messages over /ws sessions; returns (messages sent, sessions
    the server ended with an error frame or a close). The server must stay up."""
    from websockets.exceptions import WebSocketException
    from websockets.sync.client import connect

    rng = random.Random(f"serve-ws-fuzz/{seed}")
    ws_url = url.replace("http://", "ws://") + "/ws"
    sent = closed = 0
    while sent < n:
        try:
            with connect(ws_url, open_timeout=60, max_size=2**24) as ws:
                for _ in range(rng.randrange(1, 30)):
                    kind = rng.random()
                    if kind < 0.3:
                        msg: str | bytes = rng.randbytes(rng.randrange(50))
                    elif kind < 0.5:
                        msg = json.dumps(_value(rng))
                    else:
                        mtype = rng.choice(["reset", "step", "state", "mcp", "bogus", 5])
                        data = _json_body(rng, "/reset" if mtype == "reset" else "/step")
                        if mtype == "step" and isinstance(data, dict):
                            data = data.get("action", data)
                        msg = json.dumps({"type": mtype, "data": data})
                    sent += 1
                    ws.send(msg)
                    ws.recv(timeout=120)
        except (WebSocketException, TimeoutError, OSError):
            closed += 1
    return sent, closed
