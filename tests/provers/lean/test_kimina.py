"""KiminaChecker against a fake Kimina server on 127.0.0.1 serving the recorded responses
and against a real server when ``VERIRL_KIMINA_URL`` is set."""

from __future__ import annotations

import copy
import json
import os
import threading
import time
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.provers.lean.fixtures import KIMINA_DIR, require, transcript
from verirl.provers.base import FormalProblem
from verirl.provers.lean.kimina import (
    KiminaChecker,
    KiminaError,
    kimina_fix_header_offset,
    kimina_header_line_count,
)


class FakeKimina:
    """A scripted HTTP server: each POST pops the next (status, body, delay_s) answer and
    records (path, headers, decoded body)."""

    def __init__(self) -> None:
        self.answers: list[tuple[int, Any, float]] = []
        self.requests: list[tuple[str, dict[str, str], Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length).decode("utf-8"))
                fake.requests.append((self.path, dict(self.headers), body))
                status, answer, delay = fake.answers.pop(0) if fake.answers else (500, {}, 0.0)
                if callable(answer):
                    answer = answer(body)
                time.sleep(delay)
                data = json.dumps(answer).encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def answer(self, body: Any, status: int = 200, delay_s: float = 0.0) -> None:
        self.answers.append((status, body, delay_s))

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def server() -> Iterator[FakeKimina]:
    fake = FakeKimina()
    yield fake
    fake.close()


def checker(server: FakeKimina, **kw: Any) -> KiminaChecker:
    kw.setdefault("backoff_s", 0.01)
    return KiminaChecker(server.url, **kw)


def load(name: str) -> dict[str, Any]:
    return json.loads((require(KIMINA_DIR) / name).read_text(encoding="utf-8"))


def print_axioms_message(code: str, axioms: Sequence[str]) -> dict[str, Any] | None:
    """Lean's ``info`` message for a ``#print axioms NAME`` command on the last line of a
    snippet, at that line (column 0, the ``#print`` token), in the format of
    ``Lean/Elab/Print.lean`` (``printAxiomsOf``). Built from that documented format: no
    recorded Kimina transcript holds a ``#print axioms`` reply. ``None`` when the snippet
    does not end in the command."""
    lines = code.split("\n")
    if not lines[-1].startswith("#print axioms "):
        return None
    name = lines[-1][len("#print axioms ") :]
    data = (
        f"'{name}' depends on axioms: [{', '.join(axioms)}]"
        if axioms
        else f"'{name}' does not depend on any axioms"
    )
    return {
        "severity": "info",
        "pos": {"line": len(lines), "column": 0},
        "endPos": {"line": len(lines), "column": len(lines[-1])},
        "data": data,
    }


def answer_by_id(
    results: list[dict[str, Any]], key: str = "id", axioms: Sequence[str] | None = ()
) -> Any:
    """An answer that copies the request's snippet ids into the recorded results, in order.
    Where a snippet ends in the ``#print axioms`` command the checker appends, Lean's answer
    to it (:func:`print_axioms_message`) is added, as the server would (``axioms=None``:
    leave it out)."""

    def build(body: dict[str, Any]) -> dict[str, Any]:
        items = body.get("snippets") or body.get("codes")
        out = []
        for item, result in zip(items, results, strict=True):
            result = {**copy.deepcopy(result), key: item.get("id", item.get("custom_id"))}
            code = item.get("code", item.get("proof", ""))
            response = result.get("response")
            message = print_axioms_message(code, axioms) if axioms is not None else None
            if message and isinstance(response, dict) and "message" not in response:
                response["messages"] = [*response.get("messages", []), message]
            out.append(result)
        return {"results": out}

    return build


ONEPP = FormalProblem(system="lean", name="onepp", statement="theorem onepp : 1+1 = 2:= by")


# ---- the recorded responses ------------------------------------------------------------------


def test_infotree_pass_and_request_shape(server: FakeKimina) -> None:
    recorded = load("check_infotree_original.json")
    server.answer(answer_by_id(recorded["expected_response_ignoring_time_env"]["results"]))
    result = checker(server, api_key="s3cret").check(ONEPP, " rfl")
    assert (result.passed, result.status, result.backend) == (True, "pass", "kimina")
    # the tactic comes from the info tree (tacticRfl at 1:29-1:32), in proof coordinates
    assert [(t.start, t.end, t.text) for t in result.tactics] == [(1, 4, "rfl")]
    path, headers, body = server.requests[0]
    assert path == "/api/check"
    assert headers["Authorization"] == "Bearer s3cret"
    # the recorded snippet, then the axiom check on lines of its own
    sent = body["snippets"][0]["code"]
    assert sent == recorded["request"]["snippets"][0]["code"] + "\n\n#print axioms onepp"
    assert (body["infotree"], body["timeout"], body["reuse"]) == ("original", 15, True)


def test_header_offset_fix_for_the_infotree(server: FakeKimina) -> None:
    # Two import lines and a blank line go to the server's header (3 lines); the server
    # leaves infotree ranges relative to the body, so `rfl` is reported on line 1 while it
    # sits on line 4 of the snippet. Our fix must put it back under `rfl`.
    recorded = load("check_infotree_original.json")
    server.answer(answer_by_id(recorded["expected_response_ignoring_time_env"]["results"]))
    problem = FormalProblem(
        system="lean",
        name="onepp",
        statement=ONEPP.statement,
        prelude="import Mathlib\nimport Aesop",
    )
    result = checker(server).check(problem, " rfl")
    sent = server.requests[0][2]["snippets"][0]["code"]
    assert sent == (
        "import Mathlib\nimport Aesop\n\ntheorem onepp : 1+1 = 2:= by rfl\n\n#print axioms onepp"
    )
    assert kimina_header_line_count(sent) == 3
    assert [(t.start, t.end, t.text) for t in result.tactics] == [(1, 4, "rfl")]


@pytest.mark.parametrize("with_messages", [True, False])
def test_header_offset_fix_for_sorries(server: FakeKimina, with_messages: bool) -> None:
    # Built from the REPL's recorded `tactic_sorry` reply (HEAD), moved to a two-tactic proof:
    # body lines are 1 `def f ...`, 2 `skip`, 3 `sorry`; the snippet adds 3 header lines.
    ((_, recorded),) = transcript("HEAD", "tactic_sorry")
    sorry = {
        **recorded["sorries"][0],
        "pos": {"line": 3, "column": 2},
        "endPos": {"line": 3, "column": 7},
    }
    response: dict[str, Any] = {"sorries": [sorry], "env": 0}
    if with_messages:  # the server shifted messages and sorries (+3)
        response["messages"] = copy.deepcopy(recorded["messages"])
        for item in (*response["messages"], sorry):
            item["pos"]["line"] += 3
            item["endPos"]["line"] += 3
    # without messages the server returned early and left the sorry on body line 3 (the
    # appended `#print axioms` would have added a message; left out to keep that case)
    axioms = () if with_messages else None
    server.answer(answer_by_id([{"time": 0.1, "response": response}], axioms=axioms))
    problem = FormalProblem(
        system="lean",
        name="f",
        statement="def f : Nat := by",
        prelude="import Mathlib\nimport Aesop",
    )
    result = checker(server, reject_unsafe=False).check(problem, "\n  skip\n  sorry")
    assert [t.text for t in result.tactics] == ["skip", "sorry"]
    assert (result.passed, result.status, result.first_error_index) == (False, "error", 1)


def test_documented_mid_proof_error_on_the_legacy_endpoint(server: FakeKimina) -> None:
    recorded = load("verify_lean_error_documented.json")
    code = recorded["request"]["codes"][0]["proof"]
    head, _, after = code.partition("theorem ")
    statement = "theorem " + after.split(":= by", 1)[0] + ":= by"
    proof = after.split(":= by", 1)[1]
    problem = FormalProblem(
        system="lean", name="lw10009", statement=statement, prelude=head.rstrip()
    )
    # The documented reply numbers lines after the two import lines (an older server); the
    # current server numbers messages in the submitted snippet, i.e. two lines further down.
    result = copy.deepcopy(recorded["documented_response"]["results"][0])
    for message in result["response"]["messages"]:
        message["pos"]["line"] += 2
        message["endPos"]["line"] += 2
    server.answer(answer_by_id([result], key="custom_id"))
    check = checker(server, endpoint="verify").check(problem, proof)
    path, _, body = server.requests[0]
    sent = body["codes"][0]["proof"]
    assert path == "/verify" and sent == code + "\n\n#print axioms lean_workbook_10009"
    assert (check.passed, check.status, check.first_error_index) == (False, "error", 0)
    assert [t.text for t in check.tactics] == [
        "nlinarith [sq_nonneg (a - b), sq_nonneg (b - c), sq_nonneg (c - a),\n"
        "sq_nonneg (a + b + c)]"
    ]
    assert check.messages[0].start == proof.index("nlinarith")
    assert check.messages[0].text.startswith("linarith failed")
    assert check.elapsed_s == pytest.approx(1.0048656463623047)


def test_warnings_only_pass_on_the_legacy_endpoint(server: FakeKimina) -> None:
    recorded = load("match_output_goedel-lean_workbook_1001.warnings.json")
    server.answer(answer_by_id(recorded["results"], key="custom_id"))
    problem = FormalProblem(system="lean", name="t", statement="theorem t : True := by")
    # the recorded warnings sit on lines 18 and 20 of a longer proof: pad ours so that those
    # lines are inside it (and before the appended `#print axioms`), as they were there
    check = checker(server, endpoint="verify").check(problem, " trivial" + "\n" * 21)
    assert (check.passed, check.status) == (True, "pass")
    assert all(m.severity == "warning" for m in check.messages) and len(check.messages) == 4


@pytest.mark.parametrize("error", ["Lean REPL command timed out in 15 seconds", "recorded"])
def test_timeout_errors_in_both_spellings(server: FakeKimina, error: str) -> None:
    if error == "recorded":
        result = load("match_output_goedel-lean_workbook_10036.timeout.json")["results"][0]
        assert result["error"] == "Lean process timed out"
    else:
        result = {"time": 15.0, "error": error}
    server.answer(answer_by_id([result]))
    check = checker(server).check(ONEPP, "\n  simp\n  ring")
    assert (check.passed, check.status, check.timed_out) == (False, "timeout", True)
    assert [t.text for t in check.tactics] == ["simp", "ring"]


def test_repl_refusal_is_an_error(server: FakeKimina) -> None:
    server.answer(answer_by_id([{"time": 0.1, "response": {"message": "Unknown environment."}}]))
    check = checker(server).check(ONEPP, " rfl")
    assert (check.passed, check.status) == (False, "error")
    assert check.messages[-1].text == "Unknown environment."


# ---- HTTP behaviour ------------------------------------------------------------------------


def test_429_is_retried_with_backoff(server: FakeKimina) -> None:
    server.answer({"detail": "No available REPLs"}, status=429)
    server.answer({"detail": "boom"}, status=503)
    server.answer(answer_by_id([{"time": 0.1, "response": {"env": 0}}]))
    check = checker(server).check(ONEPP, " rfl")
    assert check.passed and len(server.requests) == 3


def test_retries_run_out_into_a_crash(server: FakeKimina) -> None:
    for _ in range(3):
        server.answer({"detail": "internal"}, status=500)
    check = checker(server, max_retries=2).check(ONEPP, " rfl")
    assert (check.passed, check.status) == (False, "crash")
    assert "3 tries" in check.messages[0].text and len(server.requests) == 3


def test_refused_key_raises(server: FakeKimina) -> None:
    server.answer({"detail": "Invalid API key"}, status=401)
    with pytest.raises(KiminaError, match="api_key"):
        checker(server, api_key="wrong").check(ONEPP, " rfl")


def test_http_deadline_is_a_timeout(server: FakeKimina) -> None:
    # the answer comes after 1.5 s and would pass: "timeout" says the 0.4 s HTTP deadline
    # ended the wait (the socket timed out) and the late answer was never read
    server.answer(answer_by_id([{"time": 0.1, "response": {"env": 0}}]), delay_s=1.5)
    check = checker(server, http_margin_s=0.3).check(ONEPP, " rfl", timeout_s=0.1)
    assert (check.status, check.timed_out) == ("timeout", True)


def test_batch_maps_results_by_id_and_skips_rejected(server: FakeKimina) -> None:
    def reversed_results(body: dict[str, Any]) -> dict[str, Any]:
        ids = [s["id"] for s in body["snippets"]]
        ok_message = print_axioms_message(body["snippets"][0]["code"], ["propext"])
        bad = {
            "severity": "error",
            "pos": {"line": 1, "column": 29},
            "endPos": {"line": 1, "column": 33},
            "data": "The rfl tactic failed",
        }
        return {
            "results": [
                {"id": ids[1], "time": 0.1, "response": {"env": 0, "messages": [bad]}},
                {"id": ids[0], "time": 0.1, "response": {"env": 0, "messages": [ok_message]}},
            ]
        }

    server.answer(reversed_results)
    results = checker(server).check_batch([(ONEPP, " rfl"), (ONEPP, " sorry"), (ONEPP, " simp")])
    assert [r.status for r in results] == ["pass", "rejected", "error"]
    assert results[2].first_error_index == 0
    assert len(server.requests[0][2]["snippets"]) == 2  # the rejected proof was never sent


# ---- pure helpers --------------------------------------------------------------------------


def test_fix_header_offset_rules() -> None:
    response = {
        "messages": [{"pos": {"line": 5, "column": 0}, "endPos": {"line": 5, "column": 3}}],
        "sorries": [{"pos": {"line": 5, "column": 0}}],
        "infotree": [
            {
                "kind": "TacticInfo",
                "children": [],
                "node": {
                    "stx": {
                        "range": {
                            "start": {"line": 2, "column": 0},
                            "finish": {"line": 2, "column": 3},
                        }
                    }
                },
            }
        ],
    }
    fixed = kimina_fix_header_offset(response, 3)
    assert fixed["messages"][0]["pos"]["line"] == 5  # already shifted by the server
    assert fixed["sorries"][0]["pos"]["line"] == 5
    assert fixed["infotree"][0]["node"]["stx"]["range"]["start"]["line"] == 5
    old = kimina_fix_header_offset(response, 3, server_shifts_messages=False)
    assert old["messages"][0]["pos"]["line"] == 8 and old["sorries"][0]["pos"]["line"] == 8
    assert response["messages"][0]["pos"]["line"] == 5  # the input is not modified


def test_missing_url_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VERIRL_KIMINA_URL", raising=False)
    with pytest.raises(KiminaError, match="VERIRL_KIMINA_URL"):
        KiminaChecker()


@pytest.mark.skipif(
    not os.environ.get("VERIRL_KIMINA_URL"),
    reason="no Kimina server: set VERIRL_KIMINA_URL (and VERIRL_KIMINA_API_KEY if it needs one)",
)
def test_live_kimina() -> None:
    live = KiminaChecker()
    assert live.check(ONEPP, " rfl", timeout_s=60).passed
    bad = live.check(ONEPP, "\n  skip\n  exact Nat.lt_irrefl 0\n  rfl", timeout_s=60)
    assert (bad.passed, bad.status, bad.first_error_index) == (False, "error", 1)
