"""The ``server`` problem source (``envs.server``): training from a ``verirl serve`` gym.

The server keeps the curriculum. :class:`ServerTasks` asks the server's named curriculum
for problems (``POST /curricula/{name}/tasks``: the server draws environment, difficulty and
seed, and records what it handed out); :class:`ServerVerifier` sends the step's (problem,
output) pairs to the batched ``POST /verify``, and the verdicts it returns are the run's
rewards. A verdict on a problem the curriculum handed to this run is counted towards that
curriculum by the server, once, in the same call (``count``); evaluation and any second
verification of a problem are not counted. So the server's windows move on exactly the
verdicts the trainer trained on, as a local curriculum would on the same rollouts.

Only the standard library (``http.client``); one keep-alive connection per process.

Failures stop the run with one line naming what is wrong (:class:`GymServerError`): a server
that cannot be reached, a refused token, an environment the server does not have, an answer
that is not verirl's wire format. Connection errors are retried ``envs.retries`` times with a
doubling wait (0.5 s, 1 s, 2 s, ... at most 10 s); a verdict is never invented.

A counted ``/verify`` carries a request id (a fresh UUID per call, the same on each of its
retries), so a retry of a call whose reply was lost after the server committed it gets the
server's stored reply and is not counted twice (:mod:`verirl.serve.store`).

Model output never stops the run: the calls are sized by the server's advertised ``limits``
(``GET /envs``: items per call, body bytes), and an output longer than the server's
``max_answer_chars`` is sent as its first ``max_answer_chars + 1`` characters. The server
answers any output over the limit with the same ``too_long`` verdict (reward -1) whatever its
content, so the cut never changes a verdict; outputs within the limit are sent whole.
"""

from __future__ import annotations

import http.client
import itertools
import json
import math
import os
import threading
import time
import urllib.parse
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from verirl.envs import get_env, is_env, load_all
from verirl.errors import UserInputError
from verirl.serve.settings import GymConfig, ServeConfig
from verirl.sources.base import PROBLEM_SOURCES, ProblemSource
from verirl.types import Problem, Rollout, Span, Verdict
from verirl.verification.batch import BatchVerifier

if TYPE_CHECKING:
    from verirl.provers.settings import Provers
    from verirl.verification.executors import Executor

MAX_TASKS_PER_CALL = 4096
"""``POST /curricula/{name}/tasks`` hands out at most this many problems per call."""
VERIFY_CHUNK = 256
"""Items per ``POST /verify`` (the server's default ``serve.max_batch`` is 512)."""
MAX_REPLY_BYTES = 256 * 1024 * 1024


class GymServerError(UserInputError):
    """The gym server cannot be used as configured; the message names the server and why."""


class GymClient:
    """JSON over HTTP to one server, with the token and bounded retries (thread-safe)."""

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        timeout_s: float = 300.0,
        retries: int = 5,
        backoff_s: float = 0.5,
    ) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise GymServerError(f"envs.server: {url!r} is not an http:// or https:// URL")
        self.url = url.rstrip("/")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self.token = token
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self._conn: http.client.HTTPConnection | None = None
        self._lock = threading.Lock()
        self.requests = 0
        self.retried = 0

    def get(self, path: str) -> Any:
        return self.request("GET", path)

    def post(self, path: str, body: Any) -> Any:
        return self.request("POST", path, body)

    def request(
        self, method: str, path: str, body: Any = None, *, data: bytes | None = None
    ) -> Any:
        """The parsed JSON reply of a 2xx; :class:`GymServerError` otherwise. ``data``: the
        body already encoded as JSON (instead of ``body``). Every retry sends the same
        bytes."""
        if data is None and body is not None:
            data = json.dumps(body).encode("utf-8")
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        where = f"{method} {self.url}{path}"
        last: Exception | None = None
        with self._lock:
            for attempt in range(self.retries + 1):
                if attempt:
                    self.retried += 1
                    time.sleep(min(10.0, self.backoff_s * 2 ** (attempt - 1)))
                try:
                    status, raw = self._send(method, self._prefix + path, data, headers)
                except (OSError, http.client.HTTPException) as exc:
                    self._drop()
                    last = exc
                    continue
                self.requests += 1
                return self._reply(where, status, raw)
        reason = _reason(last)
        tries = self.retries + 1
        raise GymServerError(
            f"envs.server: cannot reach the gym server ({where}: {reason}; "
            f"{tries} {'try' if tries == 1 else 'tries'})"
        )

    def close(self) -> None:
        with self._lock:
            self._drop()

    # ---- internals ------------------------------------------------------------------------
    def _send(
        self, method: str, path: str, data: bytes | None, headers: dict[str, str]
    ) -> tuple[int, bytes]:
        if self._conn is None:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            self._conn = cls(self._host, self._port, timeout=self.timeout_s)
        self._conn.request(method, path, body=data, headers=headers)
        resp = self._conn.getresponse()
        raw = resp.read(MAX_REPLY_BYTES + 1)
        if len(raw) > MAX_REPLY_BYTES or resp.will_close:
            self._drop()
        return resp.status, raw

    def _drop(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _reply(self, where: str, status: int, raw: bytes) -> Any:
        try:
            payload = json.loads(raw)
        except ValueError:
            payload = None
        if 200 <= status < 300:
            if payload is None:
                raise GymServerError(
                    f"envs.server: {where} answered {status} with something that is not "
                    f"JSON ({_snippet(raw)}); is {self.url} a verirl serve gym?"
                )
            return payload
        detail = payload.get("detail") if isinstance(payload, dict) else None
        detail = str(detail) if detail is not None else _snippet(raw)
        if status == 401:
            raise GymServerError(
                f"envs.server: {self.url} refused the token (401: {detail[:200]}); set the "
                "environment variable named by envs.token_env to the server's token"
            )
        raise GymServerError(f"envs.server: {where} answered {status}: {detail[:300]}")


def _reason(exc: Exception | None) -> str:
    if exc is None:
        return "no reply"
    text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:200]


def _snippet(raw: bytes) -> str:
    text = raw[:120].decode("utf-8", "replace")
    return repr(" ".join(text.split())) if text else "an empty body"


def _garbage(where: str, what: str) -> GymServerError:
    return GymServerError(f"envs.server: the reply to {where} is not verirl's: {what}"[:400])


def _int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


class ServerTasks:
    """The task stream of a server's named curriculum (a :class:`~verirl.sources.TaskStream`).

    :meth:`sample` asks the server for problems; :meth:`update` counts nothing itself (the
    server counted each verdict when it gave it) and reads the curriculum's windows back for
    the metrics and the environments whose window rose."""

    def __init__(self, client: GymClient, name: str, summary: Mapping[str, Any]) -> None:
        self.client = client
        self.name = name
        self.pending: dict[tuple[str, int, int], int] = {}  # handed out, not yet verified
        self._summary = self._check_summary(summary, f"the curriculum {name!r}")
        self._last: dict[str, float] = {}

    def sample(self, n: int) -> list[Problem]:
        problems: list[Problem] = []
        while len(problems) < n:
            k = min(MAX_TASKS_PER_CALL, n - len(problems))
            where = f"POST /curricula/{self.name}/tasks"
            reply = self.client.post(f"/curricula/{self.name}/tasks", {"n": k})
            rows = reply.get("problems") if isinstance(reply, dict) else None
            if not isinstance(rows, list) or len(rows) != k:
                raise _garbage(where, f"expected {{'problems': [{k} problems]}}")
            for row in rows:
                problems.append(self._problem(row, where))
        for p in problems:
            key = (p.env, p.difficulty, p.seed)
            self.pending[key] = self.pending.get(key, 0) + 1
        return problems

    def preview(self, n: int) -> list[Problem]:
        """``n`` problems at the top of the curriculum's windows, generated here: the server
        records every problem it hands out, so none is asked of it."""
        windows = itertools.islice(itertools.cycle(self._summary["windows"].items()), n)
        return [get_env(e).generate(h, seed) for seed, (e, (_, h)) in enumerate(windows)]

    def update(self, results: Iterable[Rollout]) -> list[str]:
        items = list(results)
        before = self._summary
        self._summary = self._check_summary(
            self.client.get(f"/curricula/{self.name}"), f"GET /curricula/{self.name}"
        )
        last: dict[str, float] = {"rollouts": float(len(items))}
        verdicts = [r.verdict for r in items if r.verdict is not None]
        if items:
            last["mean_difficulty"] = sum(r.problem.difficulty for r in items) / len(items)
        if verdicts:
            last["accuracy"] = sum(float(v.correct) for v in verdicts) / len(verdicts)
        self._last = last
        old = before["windows"]
        return [
            env
            for env, (_, high) in self._summary["windows"].items()
            if env in old and high > old[env][1]
        ]

    def metrics(self) -> dict[str, float]:
        """The server's windows and counters under the local curriculum's metric names."""
        s = self._summary
        out: dict[str, float] = {}
        for env, (low, high) in s["windows"].items():
            prefix = f"curriculum/{env}/"
            out[prefix + "h"] = float(high)
            out[prefix + "low"] = float(low)
            correct, attempted = s["counters"].get(env, (0, 0))
            out[prefix + "count_at_h"] = float(attempted)
            if attempted:
                out[prefix + "acc_at_h"] = correct / attempted
        highs = [high for _, high in s["windows"].values()]
        if highs:
            out["curriculum/mean_h"] = sum(highs) / len(highs)
            out["curriculum/max_h"] = float(max(highs))
        out["curriculum/seed_counter"] = float(s["seed_counter"])
        out["curriculum/server_verdicts"] = float(s["verdicts"])
        out.update({f"curriculum/last/{k}": v for k, v in self._last.items()})
        return out

    def state_dict(self) -> dict[str, Any]:
        """Where the state lives (the server keeps the windows, counters and seeds)."""
        return {"kind": "server", "server": self.client.url, "curriculum": self.name}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        if state.get("kind") != "server" or state.get("curriculum") != self.name:
            raise UserInputError(
                f"the checkpoint's curriculum state ({str(dict(state).get('kind'))!r}, "
                f"{str(state.get('curriculum'))!r}) is not the server curriculum "
                f"{self.name!r} this run trains from (envs.server, envs.curriculum)"
            )

    # ---- reading the server's answers ----------------------------------------------------
    @staticmethod
    def _problem(row: object, where: str) -> Problem:
        if not isinstance(row, dict):
            raise _garbage(where, "a problem is not an object")
        env, difficulty, seed = row.get("env"), row.get("difficulty"), row.get("seed")
        prompt = row.get("prompt")
        if not (isinstance(env, str) and _int(difficulty) and _int(seed)):
            raise _garbage(
                where, f"a problem's env/difficulty/seed are {env!r}/{difficulty!r}/{seed!r}"
            )
        if not isinstance(prompt, str):
            raise _garbage(where, "a problem has no prompt")
        if not is_env(env):
            raise GymServerError(
                f"envs.server: the server handed out a problem of environment {env[:80]!r}, "
                "which this installation does not have (its prompt format is read locally)"
            )
        assert isinstance(difficulty, int) and isinstance(seed, int)
        # the reference answer stays on the server: the verdicts come from there
        return Problem(env=env, difficulty=difficulty, seed=seed, prompt=prompt, answer="")

    @staticmethod
    def _check_summary(summary: object, where: str) -> dict[str, Any]:
        ok = (
            isinstance(summary, dict)
            and isinstance(summary.get("windows"), dict)
            and isinstance(summary.get("counters"), dict)
            and _int(summary.get("seed_counter"))
            and _int(summary.get("verdicts"))
            and all(
                isinstance(w, list) and len(w) == 2 and all(_int(x) for x in w)
                for w in summary["windows"].values()
            )
            and all(
                isinstance(c, list) and len(c) == 2 and all(_int(x) for x in c)
                for c in summary["counters"].values()
            )
        )
        if not ok:
            raise _garbage(where, "expected a curriculum summary (windows, counters, verdicts)")
        assert isinstance(summary, dict)
        return summary


class ServerVerifier(BatchVerifier):
    """The batched verification stage on the server (``POST /verify``). A verdict counts
    towards the server's curriculum when its problem was handed to this run by
    :class:`ServerTasks` and not verified yet; ``counted`` sums those the server counted.

    ``limits`` are the server's (``GET /envs``; its defaults when not given): each call holds
    at most ``max_batch`` items (and :data:`VERIFY_CHUNK`) in at most ``max_body_bytes``."""

    def __init__(
        self, client: GymClient, tasks: ServerTasks, limits: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__()
        self.client = client
        self.tasks = tasks
        self.counted = 0
        self.limits = server_limits(limits)
        self.calls = 0

    def verify(self, problems: Sequence[Problem], texts: Sequence[str]) -> list[Verdict | None]:
        if len(problems) != len(texts):
            raise ValueError(f"{len(problems)} problems but {len(texts)} texts")
        t0 = time.perf_counter()
        load_all()
        out: list[Verdict | None] = [None] * len(problems)
        idx = [i for i, p in enumerate(problems) if is_env(p.env)]
        pending = self.tasks.pending
        count = {i: _key(problems[i]) in pending for i in idx}
        for part in self._calls(idx, problems, texts, count):
            flags = [count[i] for i, _ in part]
            items = b",".join(item for _, item in part)
            data = b'{"items":[' + items + b"]"
            if any(flags):
                extra = {"curriculum": self.tasks.name, "count": flags, "request_id": _new_id()}
                data += b"," + json.dumps(extra).encode("utf-8")[1:-1]
            rows = self.client.request("POST", "/verify", data=data + b"}")
            self.calls += 1
            rows = rows.get("verdicts") if isinstance(rows, dict) else None
            if not isinstance(rows, list) or len(rows) != len(part):
                raise _garbage("POST /verify", f"expected {{'verdicts': [{len(part)} verdicts]}}")
            for (i, _), row in zip(part, rows, strict=True):
                verdict, counted = _verdict(row)
                out[i] = verdict
                self.counted += int(counted)
                self._count(problems[i], verdict)
        for i in idx:
            if count[i]:  # a problem's verdicts count in the call that first verifies it
                pending.pop(_key(problems[i]), None)
        self._seconds += time.perf_counter() - t0
        return out

    def _calls(
        self,
        idx: Sequence[int],
        problems: Sequence[Problem],
        texts: Sequence[str],
        count: Mapping[int, bool],
    ) -> list[list[tuple[int, bytes]]]:
        """The items of ``idx``, encoded, in calls within the server's limits."""
        chars = self.limits["max_answer_chars"]
        per_call = min(VERIFY_CHUNK, self.limits["max_batch"])
        room = self.limits["max_body_bytes"] - 1024  # the call's own keys, request id
        calls: list[list[tuple[int, bytes]]] = []
        size = room + 1
        for i in idx:
            p, text = problems[i], texts[i]
            # past the limit the server's verdict is too_long whatever the text: the first
            # chars + 1 characters get that same verdict and keep the call small
            cut = text if len(text) <= chars else text[: chars + 1]
            item = {"env": p.env, "difficulty": p.difficulty, "seed": p.seed, "output": cut}
            encoded = json.dumps(item).encode("utf-8")
            need = len(encoded) + 7  # its comma and its count flag
            if need > room:
                raise GymServerError(
                    f"envs.server: one /verify item is {len(encoded)} bytes, more than the "
                    f"server's serve.max_body_bytes ({self.limits['max_body_bytes']}) holds"
                )
            if not calls or len(calls[-1]) >= per_call or size + need > room:
                calls.append([])
                size = 0
            calls[-1].append((i, encoded))
            size += need
        return calls


def server_limits(limits: Mapping[str, Any] | None) -> dict[str, int]:
    """The server's ``/verify`` limits (``GET /envs``'s ``limits``; a value it does not give
    is ``serve:``'s default)."""
    fields = ServeConfig.model_fields
    out: dict[str, int] = {}
    for key in ("max_answer_chars", "max_body_bytes", "max_batch"):
        value = (limits or {}).get(key)
        default = fields[key].default
        assert isinstance(default, int)
        out[key] = value if isinstance(value, int) and _int(value) and value > 0 else default
    return out


def _new_id() -> str:
    return uuid.uuid4().hex


def _key(p: Problem) -> tuple[str, int, int]:
    return (p.env, p.difficulty, p.seed)


def _verdict(row: object) -> tuple[Verdict, bool]:
    where = "POST /verify"
    if not isinstance(row, dict):
        raise _garbage(where, "a verdict is not an object")
    reward, correct, detail = row.get("reward"), row.get("correct"), row.get("detail", "")
    if (
        isinstance(reward, bool)
        or not isinstance(reward, int | float)
        or not math.isfinite(reward)
        or not -1.0 <= reward <= 1.0
    ):
        raise _garbage(where, f"a verdict's reward is {str(reward)[:40]!r}, not in [-1, 1]")
    if not isinstance(correct, bool) or not isinstance(detail, str):
        raise _garbage(where, "a verdict's correct/detail are not a bool and a string")
    first = row.get("first_failed_step")
    extra = row.get("extra", {})
    steps = row.get("steps", [])
    if (first is not None and not _int(first)) or not isinstance(extra, dict):
        raise _garbage(where, "a verdict's first_failed_step/extra are malformed")
    if not isinstance(steps, list) or not all(
        isinstance(s, list) and len(s) == 2 and all(_int(x) for x in s) for s in steps
    ):
        raise _garbage(where, "a verdict's steps are not [start, end] pairs")
    spans = tuple(Span(int(a), int(b)) for a, b in steps)
    return Verdict(float(reward), correct, detail, spans, first, extra), bool(row.get("counted"))


@PROBLEM_SOURCES.register("server")
def server_source(
    gym: GymConfig, executor: Executor, provers: Provers, start_checkers: bool = True
) -> ProblemSource:
    """Problems and verdicts from the ``verirl serve`` gym at ``envs.server`` (whose own
    checkers check proofs: none start here)."""
    return connect(gym)


def connect(gym: GymConfig) -> ProblemSource:
    """The ``server`` problem source of ``gym``: checks the server is reachable, accepts the
    token and has every environment of ``curriculum:``, then opens (or creates from
    ``curriculum:``) the curriculum ``envs.curriculum`` names."""
    e = gym.envs
    assert e.server is not None
    name = e.curriculum
    if name is None:
        raise GymServerError(
            "envs.server needs the server's curriculum name: set envs.curriculum or run.name"
        )
    token = os.environ.get(e.token_env) or None
    client = GymClient(e.server, token, timeout_s=e.timeout_s, retries=e.retries)
    health = client.get("/health")
    if not isinstance(health, dict):
        raise _garbage("GET /health", "expected an object; is this a verirl serve gym?")
    listing = client.get("/envs")
    served = listing.get("environments") if isinstance(listing, dict) else None
    if not isinstance(served, list) or not all(
        isinstance(x, dict) and isinstance(x.get("name"), str) for x in served
    ):
        raise _garbage("GET /envs", "expected {'environments': [{'name': ...}, ...]}")
    names = {x["name"] for x in served}
    wanted = gym.curriculum.resolved_environments()
    missing = [env for env in wanted if env not in names]
    if missing:
        shown = ", ".join(repr(m) for m in missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise GymServerError(
            f"envs.server: the server at {client.url} has no environment {shown} "
            f"(curriculum.environments; GET /envs lists its {len(names)})"
        )
    config = gym.curriculum.model_dump(mode="json")
    config["environments"] = wanted
    summary = client.post(
        "/curricula", {"name": name, "config": config, "seed": gym.run.seed, "exist_ok": True}
    )
    tasks = ServerTasks(client, name, summary)
    unknown = [env for env in tasks._summary["windows"] if not is_env(env)]
    if unknown:
        raise GymServerError(
            f"envs.server: the server's curriculum {name!r} draws from environment "
            f"{unknown[0][:80]!r}, which this installation does not have"
        )
    limits = listing.get("limits")
    return ProblemSource(
        tasks, ServerVerifier(client, tasks, limits if isinstance(limits, dict) else None)
    )
