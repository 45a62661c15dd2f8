"""The FastAPI application: openenv-core's own OpenEnv routes plus verirl's JSON routes.

OpenEnv (``openenv-core`` 0.3.0, served by its ``create_fastapi_app``): ``GET /health``,
``GET /metadata``, ``GET /schema``, ``POST /reset``, ``POST /step``, ``GET /state``,
``POST /mcp``, WebSocket ``/ws`` (and ``/mcp``). verirl: ``GET /envs``, ``POST /verify``,
``GET|POST /curricula``, ``GET|PUT /curricula/{name}``, ``GET /curricula/{name}/export``,
``POST /curricula/{name}/tasks``. See docs/serving.md for the wire format.

``GET /envs`` also gives the server's ``limits`` (``max_answer_chars``, ``max_body_bytes``,
``max_batch``), which verirl's client sizes its ``/verify`` calls by.

Hostile input: request bodies and WebSocket messages are bounded (413 past
``serve.max_body_bytes``); a token, when set, is required on every route but ``/health``
(401); every refusal is a 4xx whose ``detail`` is one line naming what is wrong.
"""

from __future__ import annotations

import contextlib
import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from openenv.core.env_server.http_server import create_fastapi_app
from pydantic import BaseModel, ConfigDict, Field
from starlette import websockets as _websockets
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from verirl.curriculum import Task
from verirl.errors import UserInputError
from verirl.serve.episode import VerirlAction, VerirlEnvironment, VerirlObservation
from verirl.serve.gym import Gym, UnknownEnvironment
from verirl.serve.store import CurriculumNotFound, RequestIdReused

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


# ---- request bodies of verirl's routes ---------------------------------------------------
class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class VerifyItem(_Body):
    env: str = Field(..., max_length=128)
    difficulty: int = Field(..., ge=0)
    seed: int = Field(..., ge=0, lt=2**63)
    output: str


class VerifyRequest(_Body):
    items: list[VerifyItem] = Field(..., min_length=1)
    curriculum: str | None = Field(None, max_length=64)
    count: list[bool] | None = Field(
        None, description="Per item, whether its verdict counts towards the curriculum."
    )
    request_id: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9_.:-]{1,128}$",
        description="With curriculum: names this request, so that a retry of it (same id, "
        "same items) gets the stored reply and counts nothing again.",
    )


class CreateCurriculum(_Body):
    name: str = Field(..., max_length=64)
    config: dict[str, Any] | None = None
    seed: int = Field(0, ge=0, lt=2**63)
    exist_ok: bool = True


class TasksRequest(_Body):
    n: int = Field(1, ge=1, le=4096)


# ---- one-line errors ---------------------------------------------------------------------
def one_line(detail: object) -> str:
    """A validation error list (FastAPI's or pydantic's) or any detail as one line."""
    if isinstance(detail, list):
        parts = []
        for err in detail[:3]:
            if isinstance(err, dict):
                loc = ".".join(str(x) for x in err.get("loc", ()) if x != "body")
                msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
                parts.append(f"{loc}: {msg}" if loc else msg)
            else:
                parts.append(str(err))
        more = f" (and {len(detail) - 3} more)" if len(detail) > 3 else ""
        text = "; ".join(parts) + more
    else:
        text = str(detail)
    text = " ".join(text.split())[:500] or "bad request"
    # echoed input may hold lone surrogates, which UTF-8 JSON cannot carry
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _error(status: int, detail: object) -> JSONResponse:
    return JSONResponse({"detail": one_line(detail)}, status_code=status)


_CLIENT_GONE: tuple[type[Exception], ...] = (
    _websockets.WebSocketDisconnect,
    getattr(_websockets, "WebSocketDisconnected", _websockets.WebSocketDisconnect),
)
"""What starlette raises when a /ws handler receives from, or sends to, a client that has gone
(``WebSocketDisconnected``: starlette >= 1.0)."""


# ---- ASGI guards: token and body size ----------------------------------------------------
class Guard:
    """Checks the token (every route but ``/health``) and bounds request bodies before the
    application sees a request."""

    def __init__(self, app: ASGIApp, token: str | None, max_body: int) -> None:
        self.app = app
        self.token = token.encode() if token else None
        self.max_body = max_body

    def _authorized(self, scope: Scope) -> bool:
        if self.token is None or scope.get("path") == "/health":
            return True
        for key, value in scope.get("headers", []):
            if key == b"authorization" and value.startswith(b"Bearer "):
                return hmac.compare_digest(value[7:].strip(), self.token)
            if key == b"x-verirl-token":
                return hmac.compare_digest(value.strip(), self.token)
        if scope["type"] == "websocket":  # browsers and openenv's client cannot set headers
            from urllib.parse import parse_qs

            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            given = (query.get("token") or [""])[0].encode("latin-1", "replace")
            return bool(given) and hmac.compare_digest(given, self.token)
        return False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if not self._authorized(scope):
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008, "reason": "bad token"})
                return
            await _send_json(send, 401, "missing or wrong token (Authorization: Bearer ...)")
            return
        if scope["type"] == "websocket":
            # openenv-core's /ws handler answers a failed step, and closes the socket in a
            # ``finally``, without expecting the client to have gone: starlette then raises one
            # of these, which uvicorn would log as an application error with a traceback at the
            # end of every session. The session is already destroyed.
            with contextlib.suppress(*_CLIENT_GONE):
                await self.app(scope, receive, send)
            return
        for key, value in scope.get("headers", []):
            if key == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    await _send_json(send, 400, "Content-Length is not a number")
                    return
                if length > self.max_body:
                    await _send_json(send, 413, self._too_large())
                    return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                await _send_json(send, 413, self._too_large())
                return
            chunks.append(chunk)
            more = bool(message.get("more_body", False))
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def _too_large(self) -> str:
        return f"request body is larger than {self.max_body} bytes (serve.max_body_bytes)"


async def _send_json(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", b"%d" % len(body)),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


# ---- the application ---------------------------------------------------------------------
def build_app(gym: Gym, token: str | None = None) -> FastAPI:
    """openenv-core's app for :class:`VerirlEnvironment` plus verirl's routes and guards."""
    settings = gym.settings
    app = create_fastapi_app(
        lambda: VerirlEnvironment(gym),
        VerirlAction,
        VerirlObservation,
        max_concurrent_envs=settings.max_sessions,
    )
    app.title = "verirl gym (OpenEnv protocol)"

    @app.exception_handler(UserInputError)
    async def _user_error(request: Request, exc: UserInputError) -> JSONResponse:
        if isinstance(exc, UnknownEnvironment | CurriculumNotFound):
            status = 404
        else:
            status = 409 if isinstance(exc, RequestIdReused) else 400
        return _error(status, str(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(422, exc.errors())

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error(exc.status_code, exc.detail)

    @app.get("/envs", tags=["verirl"], summary="The environments: family, difficulty, format")
    async def list_envs() -> dict[str, Any]:
        return {"environments": gym.environments(), "limits": limits}

    limits = {
        "max_answer_chars": settings.max_answer_chars,
        "max_body_bytes": settings.max_body_bytes,
        "max_batch": settings.max_batch,
    }

    @app.post(
        "/verify",
        tags=["verirl"],
        summary="Verdicts for (problem, output) pairs",
        response_class=JSONResponse,
    )
    async def verify(body: VerifyRequest) -> JSONResponse:
        if len(body.items) > settings.max_batch:
            raise UserInputError(
                f"{len(body.items)} items; the limit is {settings.max_batch} (serve.max_batch)"
            )
        if body.count is not None and len(body.count) != len(body.items):
            raise UserInputError(f"count has {len(body.count)} flags for {len(body.items)} items")
        items = [(Task(i.env, i.difficulty, i.seed), i.output) for i in body.items]
        verdicts = await run_in_threadpool(
            gym.verify, items, body.curriculum, body.count, body.request_id
        )
        # already plain JSON values: answered as they are, without FastAPI's re-encoding pass
        return JSONResponse({"verdicts": verdicts})

    @app.get("/curricula", tags=["verirl"], summary="Named curricula and their windows")
    async def list_curricula() -> dict[str, Any]:
        return {"curricula": gym.store.names()}

    @app.post("/curricula", tags=["verirl"], summary="Create a named curriculum")
    async def create_curriculum(body: CreateCurriculum) -> dict[str, Any]:
        return await run_in_threadpool(
            gym.store.create, body.name, body.config, body.seed, exist_ok=body.exist_ok
        )

    @app.get("/curricula/{name}", tags=["verirl"], summary="A curriculum's windows, counters")
    async def curriculum_state(name: str) -> dict[str, Any]:
        return gym.store.summary(name)

    @app.get("/curricula/{name}/export", tags=["verirl"], summary="Export a curriculum")
    async def export_curriculum(name: str) -> dict[str, Any]:
        return gym.store.export(name)

    @app.put("/curricula/{name}", tags=["verirl"], summary="Import (create or replace)")
    async def import_curriculum(name: str, body: dict[str, Any]) -> dict[str, Any]:
        return await run_in_threadpool(gym.store.import_, name, body)

    @app.post("/curricula/{name}/tasks", tags=["verirl"], summary="Draw problems")
    async def draw(name: str, body: TasksRequest) -> dict[str, Any]:
        tasks = await run_in_threadpool(gym.store.issue, name, body.n)
        problems = [gym.problem(t.env, t.difficulty, t.seed) for t in tasks]
        return {
            "problems": [
                {"env": p.env, "difficulty": p.difficulty, "seed": p.seed, "prompt": p.prompt}
                for p in problems
            ]
        }

    app.add_middleware(Guard, token=token, max_body=settings.max_body_bytes)
    return app
