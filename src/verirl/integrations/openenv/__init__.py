"""verirl's gym over OpenEnv (``openenv-core`` 0.3.0); install with ``pip install verirl[openenv]``.

The OpenEnv server is ``verirl serve`` (:mod:`verirl.serve`): openenv-core's own app around
:class:`VerirlEnvironment`, with the curricula kept server-side. This module is the client
side, built on openenv-core's own classes, plus the schema re-exported from
:mod:`verirl.serve.episode` (the one schema and episode layer):

- :class:`VerirlAction`, :class:`VerirlObservation`, :class:`VerirlState`: the schema
  (subclasses of openenv's ``Action`` / ``Observation`` / ``State``; ``GET /schema`` serves it
  as JSON Schema; docs/serving.md documents the fields);
- :class:`VerirlEnvironment`: the openenv ``Environment`` (``reset`` / ``step`` / ``state``)
  over an :class:`~verirl.serve.episode.EpisodeBackend`: the server's
  :class:`~verirl.serve.gym.Gym`, or in-process a :class:`~verirl.episodes.local.LocalGym`;
- :class:`VerirlEnvClient`: openenv's ``EnvClient`` (WebSocket session) typed for the schema;
- :class:`OpenEnvEpisodes`: a :class:`~verirl.episodes.Episodes` over that
  client, for the TRL and verifiers adapters
  (``OpenEnvEpisodes("http://127.0.0.1:8000", curriculum="run-1")``).
"""

from __future__ import annotations

import threading
import urllib.parse
from typing import Any

from verirl.episodes import EpisodeSession

try:
    from openenv.core.client_types import StepResult
    from openenv.core.env_client import EnvClient

    from verirl.serve.episode import (
        VerirlAction,
        VerirlEnvironment,
        VerirlObservation,
        VerirlState,
    )
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "verirl.integrations.openenv needs openenv-core 0.3: pip install 'verirl[openenv]'"
    ) from exc

TESTED_OPENENV_VERSION = "0.3.0"


class VerirlEnvClient(EnvClient[VerirlAction, VerirlObservation, VerirlState]):
    """openenv's WebSocket client typed for verirl's schema; ``await client.reset()`` /
    ``step(VerirlAction(answer=...))``, or ``client.sync()`` for blocking calls.

    ``token``: a server that requires one (any non-loopback ``verirl serve``) takes it on the
    ``/ws`` URL's query (``?token=``), since openenv's client sends no headers; a refused
    connection's message names the server without the token."""

    def __init__(self, base_url: str, *, token: str | None = None, **kwargs: Any) -> None:
        super().__init__(base_url, **kwargs)
        self._token = token
        if token:
            # openenv-core 0.3.0 keeps the session URL here and connects to it as it is
            url: str = self._ws_url  # type: ignore[has-type]
            self._ws_url = f"{url}?{urllib.parse.urlencode({'token': token})}"

    async def connect(self) -> VerirlEnvClient:
        try:
            await super().connect()
        except ConnectionError as exc:
            text = str(exc)
            if self._token:
                text = text.replace(urllib.parse.quote_plus(self._token), "***").replace(
                    self._token, "***"
                )
            hint = "" if self._token else " (a server that requires a token refuses without)"
            raise ConnectionError(text + hint) from None
        return self

    def _step_payload(self, action: VerirlAction) -> dict[str, Any]:
        return action.model_dump(exclude={"metadata"}, exclude_none=True)

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[VerirlObservation]:
        obs = dict(payload.get("observation", {}))
        obs["reward"] = payload.get("reward")
        obs["done"] = bool(payload.get("done", False))
        return StepResult(
            observation=VerirlObservation.model_validate(obs),
            reward=payload.get("reward"),
            done=bool(payload.get("done", False)),
        )

    def _parse_state(self, payload: dict[str, Any]) -> VerirlState:
        return VerirlState.model_validate(payload)


class RemoteSession(EpisodeSession):
    """A :class:`~verirl.episodes.GymSession` over one ``/ws`` session of
    ``verirl serve`` (the server keeps the episode and counts it towards ``curriculum``)."""

    def __init__(
        self,
        base_url: str,
        *,
        curriculum: str = "default",
        message_timeout_s: float = 120.0,
        token: str | None = None,
    ) -> None:
        super().__init__()
        self.curriculum = curriculum
        self.client = VerirlEnvClient(
            base_url, token=token, message_timeout_s=message_timeout_s
        ).sync()
        self.client.connect()

    def _reset(self, **kwargs: Any) -> VerirlObservation:
        return self.client.reset(**kwargs).observation

    def _send(self, action: VerirlAction) -> VerirlObservation:
        return self.client.step(action).observation

    def close(self) -> None:
        self.client.close()


class OpenEnvEpisodes:
    """A :class:`~verirl.episodes.Episodes` whose episodes come from a
    ``verirl serve`` at ``base_url`` (one ``/ws`` session each), drawn from and counted
    towards the server's curriculum named ``curriculum`` (created with the server's
    curriculum config, ``POST /curricula``, when the first session opens, so explicit resets
    count from the start). ``token``: the server's access token, when it requires one (its
    HTTP routes get it as ``Authorization: Bearer``, the ``/ws`` sessions on their URL)."""

    def __init__(
        self,
        base_url: str,
        *,
        curriculum: str = "default",
        message_timeout_s: float = 120.0,
        token: str | None = None,
    ) -> None:
        self.base_url = base_url
        self.curriculum = curriculum
        self.message_timeout_s = message_timeout_s
        self.token = token
        self._created = False
        self._lock = threading.Lock()

    def session(self) -> RemoteSession:
        with self._lock:
            if not self._created:
                from verirl.sources.server import GymClient

                client = GymClient(self.base_url, self.token, timeout_s=self.message_timeout_s)
                try:
                    client.post("/curricula", {"name": self.curriculum, "exist_ok": True})
                finally:
                    client.close()
                self._created = True
        return RemoteSession(
            self.base_url,
            curriculum=self.curriculum,
            message_timeout_s=self.message_timeout_s,
            token=self.token,
        )


__all__ = [
    "TESTED_OPENENV_VERSION",
    "OpenEnvEpisodes",
    "RemoteSession",
    "VerirlAction",
    "VerirlEnvClient",
    "VerirlEnvironment",
    "VerirlObservation",
    "VerirlState",
]
