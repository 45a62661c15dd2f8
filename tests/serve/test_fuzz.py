"""10,000 hostile HTTP requests over every route, and hostile WebSocket messages, against a
real ``verirl serve``: no 5xx, every 4xx a one-line ``detail``, the server still up.
(``bench/fuzz_server.py --requests 1000000`` is the on-demand run.)"""

from __future__ import annotations

import httpx
import pytest

pytest.importorskip("openenv.core", reason="needs openenv-core (the 'serve' extra)")

from tests.serve.helpers import ServerProcess
from tests.serve.hostile_requests import ROUTES, fuzz, fuzz_websocket


@pytest.mark.slow
def test_ten_thousand_hostile_requests_no_5xx(server: ServerProcess) -> None:
    result = fuzz(server.url, 10_000, seed=1, workers=4)
    assert result.requests == 10_000
    assert result.server_errors == [], result.server_errors[:5]
    assert result.bad_detail == [], result.bad_detail[:5]
    assert result.transport_errors == 0
    assert sum(c for s, c in result.statuses.items() if 400 <= s < 500) > 5_000
    assert result.statuses[200] > 100  # well-formed requests still get answers
    sent, _ = fuzz_websocket(server.url, 300, seed=1)
    assert sent >= 300
    assert server.alive()
    assert httpx.get(server.url + "/health", timeout=60).json() == {"status": "healthy"}
    # and it still gives the right verdicts
    r = httpx.post(
        server.url + "/verify",
        json={"items": [{"env": "addition", "difficulty": 0, "seed": 0, "output": "\\boxed{0}"}]},
        timeout=60,
    )
    assert r.status_code == 200 and isinstance(r.json()["verdicts"][0]["correct"], bool)
    assert len(ROUTES) >= 15
