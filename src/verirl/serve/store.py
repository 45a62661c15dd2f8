"""Named curricula kept by the server, written through to SQLite.

Why SQLite: one file, atomic multi-row transactions, and a write-ahead log (WAL) whose commit
survives the writing process being killed at any instant (with ``synchronous=NORMAL`` a commit
is in the OS's page cache before ``COMMIT`` returns; ``synchronous=FULL`` adds an fsync, so it
also survives an OS crash). A JSON file rewritten with rename would be atomic too, but it
rewrites every curriculum on every verdict and keeps no index of the problems handed out.

The rule that makes a ``kill -9`` harmless: **nothing leaves the server before the state
that produced it is committed**.

- Handing out a problem advances the curriculum's seed counter and records the task in
  ``issued``, in one transaction, before the problem is returned: after a restart the
  counter is past every seed a client saw, so no problem is handed out twice.
- A verdict on a problem this curriculum issued updates its window and counters and is
  committed, in one transaction, before the verdict is returned: no verdict a client
  received is lost. A verdict the client never received may or may not be counted (the
  server died between the commit and the reply); the client sees a connection error.

Only verdicts on problems the curriculum itself issued count (same env, difficulty, seed):
a client cannot move a window with made-up problems. Each verdict counts once per call, so a
group of G sampled answers to one problem counts G times, as in RLVE.

**Retries count once.** A counted call may carry a request id (``POST /verify``'s
``request_id``; verirl's client sends one per logical request and reuses it on every retry).
The reply given to it is stored under (curriculum, request id) in the same transaction that
counts its verdicts; a call repeating the id gets that stored reply, and nothing is counted
again, even across a restart. The last ``keep_requests`` ids of each curriculum are kept
(``serve.request_ids``; older ones are deleted in the same transaction): a retry arrives
seconds after its first try, so only the newest ids of a curriculum matter. An id repeated
with other items is refused (:class:`RequestIdReused`), never answered with another call's
verdicts.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from verirl.curriculum import Curriculum, CurriculumConfig, Outcome, Task, build_curriculum
from verirl.errors import UserInputError

NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS curricula (
    name TEXT PRIMARY KEY,
    config TEXT NOT NULL,
    seed INTEGER NOT NULL,
    state TEXT NOT NULL,
    verdicts INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS issued (
    curriculum TEXT NOT NULL,
    seed INTEGER NOT NULL,
    env TEXT NOT NULL,
    difficulty INTEGER NOT NULL,
    PRIMARY KEY (curriculum, seed)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS requests (
    seq INTEGER PRIMARY KEY,
    curriculum TEXT NOT NULL,
    request_id TEXT NOT NULL,
    digest TEXT NOT NULL,
    reply TEXT NOT NULL,
    UNIQUE (curriculum, request_id)
);
CREATE INDEX IF NOT EXISTS requests_by_age ON requests (curriculum, seq);
"""


class CurriculumNotFound(UserInputError):
    """A curriculum name the server does not keep (the HTTP layer answers 404)."""


class RequestIdReused(UserInputError):
    """A request id sent again with other items (the HTTP layer answers 409)."""


def request_digest(payload: object) -> str:
    """What a request id stands for: a digest of the request's canonical JSON."""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def check_name(name: object) -> str:
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise UserInputError(
            "curriculum name must be 1-64 characters of letters, digits, '_', '.', '-' "
            f"(starting with a letter or digit), got {str(name)[:80]!r}"
        )
    return name


@dataclass
class _Entry:
    config: CurriculumConfig
    seed: int
    curriculum: Curriculum
    verdicts: int


class CurriculumStore:
    """Named curricula in memory, every change committed to the SQLite file ``path`` before
    it is reported. Thread-safe (one lock; the server's request threads share it)."""

    def __init__(
        self,
        path: str | Path,
        default: CurriculumConfig,
        *,
        durability: str = "process",
        max_curricula: int = 1024,
        keep_requests: int = 256,
    ) -> None:
        self.path = str(path)
        self.default = default
        self.max_curricula = max_curricula
        self.keep_requests = keep_requests
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(f"PRAGMA synchronous={'FULL' if durability == 'power' else 'NORMAL'}")
        self._db.executescript(_SCHEMA)
        self._entries: dict[str, _Entry] = {}
        for name, config, seed, state, verdicts in self._db.execute(
            "SELECT name, config, seed, state, verdicts FROM curricula"
        ):
            cfg = CurriculumConfig.model_validate_json(config)
            cur = build_curriculum(cfg, seed=seed)
            cur.load_state_dict(json.loads(state))
            self._entries[name] = _Entry(cfg, seed, cur, verdicts)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # ---- creating, listing, exporting --------------------------------------------------
    def names(self) -> list[str]:
        with self._lock:
            return sorted(self._entries)

    def create(
        self, name: str, config: dict[str, Any] | None = None, seed: int = 0, *, exist_ok: bool
    ) -> dict[str, Any]:
        """Create curriculum ``name`` from ``config`` (fields of ``curriculum:``; None: the
        server's default). An existing one is kept when ``exist_ok``, refused otherwise."""
        check_name(name)
        with self._lock:
            if name in self._entries:
                if exist_ok:
                    return self._summary(name)
                raise UserInputError(f"curriculum {name!r} exists already")
            cfg = self._config(config)
            self._insert(name, cfg, seed, build_curriculum(cfg, seed=seed), verdicts=0)
            return self._summary(name)

    def export(self, name: str) -> dict[str, Any]:
        """Everything needed to rebuild the curriculum elsewhere (:meth:`import_`)."""
        with self._lock:
            e = self._get(name)
            return {
                "name": name,
                "config": e.config.model_dump(mode="json"),
                "seed": e.seed,
                "verdicts": e.verdicts,
                "state": e.curriculum.state_dict(),
            }

    def import_(self, name: str, data: object) -> dict[str, Any]:
        """Create or replace ``name`` from an :meth:`export`. Problems issued before the
        export do not count towards the imported copy (their record stays with the source)."""
        check_name(name)
        if not isinstance(data, dict) or not isinstance(data.get("state"), dict):
            raise UserInputError("curriculum import needs an object with 'config' and 'state'")
        seed = data.get("seed", 0)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise UserInputError(f"curriculum import: seed must be an integer, got {seed!r}")
        cfg = self._config(data.get("config"))
        cur = build_curriculum(cfg, seed=seed)
        try:
            cur.load_state_dict(data["state"])
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise UserInputError(
                f"curriculum import: state does not fit the config: {exc}"
            ) from None
        verdicts = data.get("verdicts", 0)
        verdicts = verdicts if isinstance(verdicts, int) and verdicts >= 0 else 0
        with self._lock:
            replacing = name in self._entries
            self._insert(name, cfg, seed, cur, verdicts, replace=replacing)
            return self._summary(name)

    def require(self, name: str) -> None:
        """Raise :class:`CurriculumNotFound` unless ``name`` exists (cheap)."""
        with self._lock:
            self._get(name)

    def summary(self, name: str) -> dict[str, Any]:
        with self._lock:
            return self._summary(name)

    def window(self, name: str, env: str) -> tuple[int, int] | None:
        """Curriculum ``name``'s difficulty window of ``env`` (None: no such curriculum, or
        it does not hold ``env``)."""
        with self._lock:
            e = self._entries.get(name)
            if e is None or env not in e.curriculum.environments:
                return None
            low, high = e.curriculum.window(env)
            return (int(low), int(high))

    # ---- handing out problems and counting verdicts ------------------------------------
    def issue(self, name: str, n: int = 1) -> list[Task]:
        """``n`` new tasks of curriculum ``name`` (created with the default config when it
        does not exist), committed before they are returned."""
        check_name(name)
        with self._lock:
            if name not in self._entries:
                cfg = self._config(None)
                self._insert(name, cfg, 0, build_curriculum(cfg, seed=0), verdicts=0)
            e = self._entries[name]
            before = e.curriculum.state_dict()
            try:
                tasks = e.curriculum.next_tasks(n)
                with self._db:
                    self._db.execute("BEGIN IMMEDIATE")
                    self._db.executemany(
                        "INSERT INTO issued (curriculum, seed, env, difficulty) VALUES (?,?,?,?)",
                        [(name, t.seed, t.env, t.difficulty) for t in tasks],
                    )
                    self._save(name, e)
            except BaseException:
                e.curriculum.load_state_dict(before)  # memory never runs ahead of the file
                raise
            return tasks

    def record(self, name: str, outcomes: Sequence[tuple[Task, bool]]) -> list[bool]:
        """Count verdicts (task, fully correct) towards curriculum ``name``; committed before
        this returns. Returns, per outcome, whether it counted (the task was issued by this
        curriculum with that env and difficulty)."""
        with self._lock:
            return self._record(name, outcomes)

    def replay(self, name: str, request_id: str, digest: str) -> Any | None:
        """The reply stored for ``request_id`` of curriculum ``name`` (None: not seen, or no
        longer kept); :class:`RequestIdReused` when it was sent with another ``digest``."""
        with self._lock:
            self._get(name)
            return self._stored(name, request_id, digest)

    def record_request(
        self,
        name: str,
        request_id: str,
        digest: str,
        outcomes: Sequence[tuple[Task, bool]],
        reply: Callable[[list[bool]], Any],
    ) -> Any:
        """:meth:`record` once per ``request_id``: the reply ``reply(counted)`` builds is
        stored with the counts, in one transaction, and returned; a repeated id returns the
        stored reply and counts nothing (the module's docstring says for how long)."""
        with self._lock:
            self._get(name)
            stored = self._stored(name, request_id, digest)
            if stored is not None:
                return stored
            box: list[Any] = []

            def store(counted: list[bool]) -> None:
                box.append(reply(counted))
                self._db.execute(
                    "INSERT INTO requests (curriculum, request_id, digest, reply) VALUES (?,?,?,?)",
                    (name, request_id, digest, json.dumps(box[0])),
                )
                cut = self._db.execute(
                    "SELECT seq FROM requests WHERE curriculum = ? ORDER BY seq DESC "
                    "LIMIT 1 OFFSET ?",
                    (name, self.keep_requests),
                ).fetchone()
                if cut is not None:
                    self._db.execute(
                        "DELETE FROM requests WHERE curriculum = ? AND seq <= ?", (name, cut[0])
                    )

            self._record(name, outcomes, store)
            return box[0]

    # ---- internals (callers hold the lock) ---------------------------------------------
    def _record(
        self,
        name: str,
        outcomes: Sequence[tuple[Task, bool]],
        also: Callable[[list[bool]], None] | None = None,
    ) -> list[bool]:
        """Count ``outcomes``; ``also(counted)`` writes more in the same transaction."""
        e = self._get(name)
        counted = [self._was_issued(name, t) for t, _ in outcomes]
        results = [
            Outcome(t.env, t.difficulty, ok)
            for (t, ok), c in zip(outcomes, counted, strict=True)
            if c
        ]
        if not results and also is None:
            return counted
        before = e.curriculum.state_dict()
        try:
            if results:
                e.curriculum.update(results)
            e.verdicts += len(results)
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                if results:
                    self._save(name, e)
                if also is not None:
                    also(counted)
        except BaseException:
            e.curriculum.load_state_dict(before)
            e.verdicts -= len(results)
            raise
        return counted

    def _stored(self, name: str, request_id: str, digest: str) -> Any | None:
        row = self._db.execute(
            "SELECT digest, reply FROM requests WHERE curriculum = ? AND request_id = ?",
            (name, request_id),
        ).fetchone()
        if row is None:
            return None
        if row[0] != digest:
            raise RequestIdReused(
                f"request_id {request_id[:80]!r} was sent before with other items; a request "
                "id names one request (retries send the same body)"
            )
        return json.loads(row[1])

    def _config(self, config: object) -> CurriculumConfig:
        if config is None:
            return self.default
        if not isinstance(config, dict):
            raise UserInputError("curriculum config must be an object of curriculum: fields")
        try:
            return CurriculumConfig.model_validate(config)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(x) for x in err["loc"])
            msg = str(err["msg"]).removeprefix("Value error, ")
            raise UserInputError(f"curriculum config: {where}: {msg}"[:400]) from None

    def _get(self, name: str) -> _Entry:
        e = self._entries.get(name)
        if e is None:
            raise CurriculumNotFound(f"no curriculum named {str(name)[:80]!r}")
        return e

    def _was_issued(self, name: str, task: Task) -> bool:
        row = self._db.execute(
            "SELECT env, difficulty FROM issued WHERE curriculum = ? AND seed = ?",
            (name, task.seed),
        ).fetchone()
        return row is not None and row[0] == task.env and row[1] == task.difficulty

    def _insert(
        self,
        name: str,
        cfg: CurriculumConfig,
        seed: int,
        cur: Curriculum,
        verdicts: int,
        replace: bool = False,
    ) -> None:
        if not replace and len(self._entries) >= self.max_curricula:
            raise UserInputError(
                f"the server keeps at most {self.max_curricula} curricula (serve.max_curricula)"
            )
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            if replace:
                self._db.execute("DELETE FROM issued WHERE curriculum = ?", (name,))
                self._db.execute("DELETE FROM requests WHERE curriculum = ?", (name,))
            self._db.execute(
                "INSERT OR REPLACE INTO curricula (name, config, seed, state, verdicts) "
                "VALUES (?,?,?,?,?)",
                (name, cfg.model_dump_json(), seed, json.dumps(cur.state_dict()), verdicts),
            )
        self._entries[name] = _Entry(cfg, seed, cur, verdicts)

    def _save(self, name: str, e: _Entry) -> None:
        self._db.execute(
            "UPDATE curricula SET state = ?, verdicts = ? WHERE name = ?",
            (json.dumps(e.curriculum.state_dict()), e.verdicts, name),
        )

    def _summary(self, name: str) -> dict[str, Any]:
        e = self._get(name)
        cur = e.curriculum
        return {
            "name": name,
            "kind": e.config.kind,
            "environments": len(cur.environments),
            "seed_counter": cur.seed_counter,
            "verdicts": e.verdicts,
            "windows": {env: list(cur.window(env)) for env in cur.environments},
            "counters": {env: list(cur.counters(env)) for env in cur.environments},
        }
