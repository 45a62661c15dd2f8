"""A stateful tool-using world: simulated apps (files, calendar, contacts, shop) behind typed
tools, called in the model's own tool-call format (the agent setting of TCPO, Liao et al.
2026, arXiv:2608.01667, whose third domain is AppWorld).

A task is a generated initial world plus goals ("save Ann's email in notes/ann.txt", "cancel
the dentist appointment on day 3", "buy 2 lamps"). The apps are the ``tool_world`` toolset
(:class:`ToolWorldApps`): typed Python methods (``files_read(path: str)``,
``calendar_remove(event_id: int)``, ``shop_add_to_cart(item: str, qty: int)``, ...) whose
schemas reach the model through its chat template (``tools=``); the model calls them in its
family's format and each result comes back as a ``tool`` message
(:mod:`verirl.tools.session`). A reply without a call ends the episode.

The verifier is pure: it replays the episode's calls — the canonical transcript of
:mod:`verirl.tools.calls`, one JSON object per model turn, turns joined by
:data:`TURN_SEPARATOR` — through the same typed tools from the initial world, and checks the
final state:

- reward = share of goal conditions met (the per-turn score TCPO's credit reads), but 0 when
  anything the task did not ask to change was changed (a file, an event, a contact, an extra
  purchase); −1 when no call can be read at all;
- ``correct`` when every goal holds and nothing else changed.

Difficulty: goals = 1 + difficulty // 2 (more steps; several need a lookup first); the tools
offered are, at difficulties 0–1, only those the task needs, and from 2 on every tool of the
apps the goals need (so they grow with the goals); distractor records (files, events,
contacts, catalogue items) grow with difficulty.
"""

from __future__ import annotations

import json
import random
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

from verirl.envs.agents.world_apps import (
    APPS,
    ITEMS,
    NAMES,
    TITLES,
    TOOL_NAMES,
    WORDS,
    ToolWorldApps,
    replay,
    transcript_of,
)
from verirl.envs.base import (
    ENVIRONMENTS,
    TURN_SEPARATOR,
    WRONG_FORMAT,
    Environment,
    Instance,
    graded,
)
from verirl.envs.reading.formats import TOOLS, AnswerFormat
from verirl.types import Problem, Verdict

# ---- goal kinds ---------------------------------------------------------------------------
Call = tuple[str, dict[str, Any]]


@dataclass
class _Free:
    """What a new goal may still use (records no earlier goal took)."""

    files: list[str]
    events: list[dict[str, Any]]
    names: list[str]
    items: list[str]
    used_paths: set[str]
    used_events: set[int]
    used_names: set[str]
    used_items: set[str]


class Goal(ABC):
    """One kind of task in the world: when it can be drawn, how it is drawn, worded, solved and
    checked. A goal is stored in the problem data as a dict whose ``kind`` names its class in
    :data:`GOALS`; adding a kind means adding one class here."""

    kind: ClassVar[str]
    apps: ClassVar[tuple[str, ...]]
    """The apps the goal needs (their tools are offered to the episode)."""

    @staticmethod
    def possible(free: _Free) -> bool:
        """Whether this kind can be drawn now (else the task becomes a ``write``)."""
        return True

    @staticmethod
    @abstractmethod
    def draw(i: int, rng: random.Random, free: _Free) -> dict[str, Any]:
        """The ``i``-th goal, recording what it uses in ``free``."""

    @staticmethod
    @abstractmethod
    def describe(g: dict[str, Any]) -> str:
        """The task in words, for the prompt."""

    @staticmethod
    @abstractmethod
    def plan(g: dict[str, Any], world: dict[str, Any]) -> list[Call]:
        """The reference calls for the goal (lookups included)."""

    @staticmethod
    @abstractmethod
    def met(g: dict[str, Any], world: dict[str, Any], start: dict[str, Any]) -> bool:
        """Whether ``world`` (reached from ``start``) fulfils the goal."""


class _Write(Goal):
    kind = "write"
    apps = ("files",)

    @staticmethod
    def draw(i: int, rng: random.Random, free: _Free) -> dict[str, Any]:
        path = f"notes/task{i}.txt"
        goal = {
            "kind": "write",
            "path": path,
            "content": f"{rng.choice(WORDS)}-{rng.randint(0, 99)}",
        }
        free.used_paths.add(path)
        return goal

    @staticmethod
    def describe(g: dict[str, Any]) -> str:
        return f"Create the file {g['path']} containing exactly {g['content']!r}."

    @staticmethod
    def plan(g: dict[str, Any], world: dict[str, Any]) -> list[Call]:
        return [("files_write", {"path": g["path"], "content": g["content"]})]

    @staticmethod
    def met(g: dict[str, Any], world: dict[str, Any], start: dict[str, Any]) -> bool:
        return bool(world["files"].get(g["path"]) == g["content"])


class _Schedule(Goal):
    kind = "schedule"
    apps = ("calendar",)

    @staticmethod
    def draw(i: int, rng: random.Random, free: _Free) -> dict[str, Any]:
        return {
            "kind": "schedule",
            "title": f"{rng.choice(TITLES)}-{i}",
            "day": rng.randint(8, 28),
            "hour": rng.randint(8, 18),
        }

    @staticmethod
    def describe(g: dict[str, Any]) -> str:
        return f"Schedule an event titled {g['title']!r} on day {g['day']} at hour {g['hour']}."

    @staticmethod
    def plan(g: dict[str, Any], world: dict[str, Any]) -> list[Call]:
        return [("calendar_add", {"title": g["title"], "day": g["day"], "hour": g["hour"]})]

    @staticmethod
    def met(g: dict[str, Any], world: dict[str, Any], start: dict[str, Any]) -> bool:
        return any(
            e["title"] == g["title"] and e["day"] == g["day"] and e["hour"] == g["hour"]
            for e in world["calendar"]["events"]
        )


class _Phone(Goal):
    kind = "phone"
    apps = ("contacts",)

    @staticmethod
    def possible(free: _Free) -> bool:
        return bool(free.names)

    @staticmethod
    def draw(i: int, rng: random.Random, free: _Free) -> dict[str, Any]:
        name = rng.choice(free.names)
        free.used_names.add(name)
        return {"kind": "phone", "name": name, "phone": f"555-{rng.randint(1000, 9999)}"}

    @staticmethod
    def describe(g: dict[str, Any]) -> str:
        return f"Change {g['name']}'s phone number to {g['phone']}."

    @staticmethod
    def plan(g: dict[str, Any], world: dict[str, Any]) -> list[Call]:
        return [("contacts_update", {"name": g["name"], "field": "phone", "value": g["phone"]})]

    @staticmethod
    def met(g: dict[str, Any], world: dict[str, Any], start: dict[str, Any]) -> bool:
        return bool(world["contacts"].get(g["name"], {}).get("phone") == g["phone"])


class _SaveEmail(Goal):
    kind = "save_email"
    apps = ("contacts", "files")

    @staticmethod
    def possible(free: _Free) -> bool:
        return bool(free.names)

    @staticmethod
    def draw(i: int, rng: random.Random, free: _Free) -> dict[str, Any]:
        name = rng.choice(free.names)
        free.used_names.add(name)
        path = f"notes/task{i}.txt"
        free.used_paths.add(path)
        return {"kind": "save_email", "name": name, "path": path}

    @staticmethod
    def describe(g: dict[str, Any]) -> str:
        return (
            f"Write {g['name']}'s email address (exactly, nothing else) into the file {g['path']}."
        )

    @staticmethod
    def plan(g: dict[str, Any], world: dict[str, Any]) -> list[Call]:
        email = world["contacts"][g["name"]]["email"]
        return [
            ("contacts_find", {"name": g["name"]}),
            ("files_write", {"path": g["path"], "content": email}),
        ]

    @staticmethod
    def met(g: dict[str, Any], world: dict[str, Any], start: dict[str, Any]) -> bool:
        return bool(world["files"].get(g["path"]) == start["contacts"][g["name"]]["email"])


class _Buy(Goal):
    kind = "buy"
    apps = ("shop",)

    @staticmethod
    def possible(free: _Free) -> bool:
        return bool(free.items)

    @staticmethod
    def draw(i: int, rng: random.Random, free: _Free) -> dict[str, Any]:
        item = rng.choice(free.items)
        free.used_items.add(item)
        return {"kind": "buy", "item": item, "qty": rng.randint(1, 4)}

    @staticmethod
    def describe(g: dict[str, Any]) -> str:
        return f"Buy {g['qty']} x {g['item']} in one order (add to the cart, then check out)."

    @staticmethod
    def plan(g: dict[str, Any], world: dict[str, Any]) -> list[Call]:
        return [("shop_add_to_cart", {"item": g["item"], "qty": g["qty"]}), ("shop_checkout", {})]

    @staticmethod
    def met(g: dict[str, Any], world: dict[str, Any], start: dict[str, Any]) -> bool:
        return {g["item"]: g["qty"]} in world["shop"]["orders"]


class _Cancel(Goal):
    kind = "cancel"
    apps = ("calendar",)

    @staticmethod
    def possible(free: _Free) -> bool:
        return bool(free.events)

    @staticmethod
    def draw(i: int, rng: random.Random, free: _Free) -> dict[str, Any]:
        ev = rng.choice(free.events)
        free.used_events.add(ev["id"])
        return {
            "kind": "cancel",
            "id": ev["id"],
            "title": ev["title"],
            "day": ev["day"],
            "hour": ev["hour"],
        }

    @staticmethod
    def describe(g: dict[str, Any]) -> str:
        return f"Cancel the {g['title']!r} event on day {g['day']} at hour {g['hour']}."

    @staticmethod
    def plan(g: dict[str, Any], world: dict[str, Any]) -> list[Call]:
        ev = next(
            e
            for e in world["calendar"]["events"]
            if e["title"] == g["title"] and e["day"] == g["day"] and e["hour"] == g["hour"]
        )
        return [("calendar_list", {"day": g["day"]}), ("calendar_remove", {"event_id": ev["id"]})]

    @staticmethod
    def met(g: dict[str, Any], world: dict[str, Any], start: dict[str, Any]) -> bool:
        return not any(e["id"] == g["id"] for e in world["calendar"]["events"])


class _Copy(Goal):
    kind = "copy"
    apps = ("files",)

    @staticmethod
    def possible(free: _Free) -> bool:
        return len(free.files) >= 2

    @staticmethod
    def draw(i: int, rng: random.Random, free: _Free) -> dict[str, Any]:
        src, dst = free.files[0], f"backup/{free.files[0].split('/')[-1]}"
        free.used_paths.update({src, dst})
        return {"kind": "copy", "src": src, "dst": dst}

    @staticmethod
    def describe(g: dict[str, Any]) -> str:
        return f"Copy the content of {g['src']} into a new file {g['dst']}."

    @staticmethod
    def plan(g: dict[str, Any], world: dict[str, Any]) -> list[Call]:
        return [
            ("files_read", {"path": g["src"]}),
            ("files_write", {"path": g["dst"], "content": world["files"][g["src"]]}),
        ]

    @staticmethod
    def met(g: dict[str, Any], world: dict[str, Any], start: dict[str, Any]) -> bool:
        return bool(world["files"].get(g["dst"]) == start["files"][g["src"]])


class _Delete(Goal):
    kind = "delete"
    apps = ("files",)

    @staticmethod
    def possible(free: _Free) -> bool:
        return len(free.files) >= 2

    @staticmethod
    def draw(i: int, rng: random.Random, free: _Free) -> dict[str, Any]:
        path = rng.choice(free.files)
        free.used_paths.add(path)
        return {"kind": "delete", "path": path}

    @staticmethod
    def describe(g: dict[str, Any]) -> str:
        return f"Delete the file {g['path']}."

    @staticmethod
    def plan(g: dict[str, Any], world: dict[str, Any]) -> list[Call]:
        return [("files_delete", {"path": g["path"]})]

    @staticmethod
    def met(g: dict[str, Any], world: dict[str, Any], start: dict[str, Any]) -> bool:
        return g["path"] not in world["files"]


GOALS: dict[str, type[Goal]] = {
    g.kind: g for g in (_Write, _Schedule, _Phone, _Buy, _SaveEmail, _Cancel, _Copy, _Delete)
}
"""The goal kinds, in the order the first goals of a problem cycle through them."""


def offered_apps(goals: list[dict[str, Any]]) -> list[str]:
    """The apps an episode offers: those its goals need, in :data:`APPS` order."""
    need = {app for g in goals if g.get("kind") in GOALS for app in GOALS[g["kind"]].apps}
    return [a for a in APPS if a in need]


def _goal_met(goal: dict[str, Any], world: dict[str, Any], start: dict[str, Any]) -> bool:
    kind = GOALS.get(goal.get("kind", ""))
    return kind is not None and kind.met(goal, world, start)


def _collateral(goals: list[dict[str, Any]], world: dict[str, Any], start: dict[str, Any]) -> str:
    """What changed that no goal asked for ('' when nothing)."""
    paths = {g.get("path") for g in goals} | {g.get("dst") for g in goals}
    for path, content in start["files"].items():
        if path not in paths and world["files"].get(path) != content:
            return f"file {path} was changed"
    for path in world["files"]:
        if path not in start["files"] and path not in paths:
            return f"file {path} was created"
    cancelled = {g["id"] for g in goals if g["kind"] == "cancel"}
    kept = {e["id"]: e for e in world["calendar"]["events"]}
    for e in start["calendar"]["events"]:
        if e["id"] not in cancelled and kept.get(e["id"]) != e:
            return f"event {e['id']} was changed"
    wanted = {(g["title"], g["day"], g["hour"]) for g in goals if g["kind"] == "schedule"}
    start_ids = {e["id"] for e in start["calendar"]["events"]}
    for e in world["calendar"]["events"]:
        if e["id"] not in start_ids and (e["title"], e["day"], e["hour"]) not in wanted:
            return f"event {e['title']!r} was added"
    phones = {g["name"] for g in goals if g["kind"] == "phone"}
    for name, rec in start["contacts"].items():
        new = world["contacts"].get(name, {})
        if new.get("email") != rec["email"] or (
            name not in phones and new.get("phone") != rec["phone"]
        ):
            return f"contact {name} was changed"
    orders = [{g["item"]: g["qty"]} for g in goals if g["kind"] == "buy"]
    for order in world["shop"]["orders"]:
        if order not in orders:
            return f"an order nobody asked for was placed: {order}"
    return ""


# ---- the environment -----------------------------------------------------------------------
@ENVIRONMENTS.register("tool_world")
class ToolWorld(Environment):
    difficulty_scales = "goals: 1 + difficulty // 2 (more apps and lookups); distractor records"
    tags: ClassVar[tuple[str, ...]] = ("agent", "multi_turn", "tools")
    stateful: ClassVar[bool] = True
    toolset: ClassVar[str | None] = "tool_world"
    answer_format: ClassVar[AnswerFormat] = TOOLS
    answer_instruction: ClassVar[str] = (
        "Use the tools, one or more calls per reply; each result comes back as the next "
        "message. Reply without a tool call once every task is done."
    )
    clean_answers: ClassVar[bool] = False
    size_measure: ClassVar[str | None] = "tool calls of the reference solution"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        world = self._world(difficulty, rng)
        goals = self._goals(difficulty, rng, world)
        lines = [f"{i + 1}. {self._describe(g)}" for i, g in enumerate(goals)]
        prompt = "Tasks:\n" + "\n".join(lines) + "\n\nChange nothing else."
        data = {"world": world, "goals": goals}
        return Instance(prompt=prompt, answer=transcript_of(self._plan(world, goals)), data=data)

    def toolset_params(self, problem: Problem) -> dict[str, Any]:
        """The world and the tools offered (:meth:`offered_tools`)."""
        return {"world": problem.data["world"], "tools": self.offered_tools(problem)}

    def offered_tools(self, problem: Problem) -> list[str]:
        """The tools an episode offers: at difficulty 0–1 only those the reference solution
        calls; from 2 on every tool of the apps the goals need (more apps with more goals)."""
        goals = problem.data["goals"]
        if problem.difficulty < 2:
            used = {name for name, _ in self._plan(problem.data["world"], goals)}
            return [n for n in TOOL_NAMES if n in used]
        apps = offered_apps(goals)
        return [n for n in TOOL_NAMES if n.split("_", 1)[0] in apps]

    def _world(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        extra = 2 + difficulty
        files = {
            f"docs/{rng.choice(WORDS)}{i}.txt": f"{rng.choice(WORDS)} {rng.randint(0, 999)}"
            for i in range(extra)
        }
        events = [
            {
                "id": i + 1,
                "title": rng.choice(TITLES),
                "day": rng.randint(1, 7),
                "hour": rng.randint(8, 18),
            }
            for i in range(extra)
        ]
        contacts = {
            name: {
                "email": f"{name}{rng.randint(1, 99)}@mail.test",
                "phone": f"555-{rng.randint(1000, 9999)}",
            }
            for name in rng.sample(NAMES, min(len(NAMES), 3 + difficulty // 2))
        }
        catalog = {
            item: rng.randint(2, 60)
            for item in rng.sample(ITEMS, min(len(ITEMS), 3 + difficulty // 3))
        }
        shop = {"catalog": catalog, "cart": {}, "orders": [], "balance": 10_000}
        return {
            "files": files,
            "calendar": {"events": events, "next_id": len(events)},
            "contacts": contacts,
            "shop": shop,
        }

    def _goals(
        self, difficulty: int, rng: random.Random, world: dict[str, Any]
    ) -> list[dict[str, Any]]:
        kinds = list(GOALS)
        goals: list[dict[str, Any]] = []
        free = _Free([], [], [], [], set(), set(), set(), set())
        for i in range(1 + difficulty // 2):
            kind = kinds[i % len(kinds)] if i < len(kinds) else rng.choice(kinds)
            free.files = sorted(set(world["files"]) - free.used_paths)
            keys = [(e["title"], e["day"], e["hour"]) for e in world["calendar"]["events"]]
            free.events = [
                e
                for e, key in zip(world["calendar"]["events"], keys, strict=True)
                if e["id"] not in free.used_events and keys.count(key) == 1
            ]
            free.names = sorted(set(world["contacts"]) - free.used_names)
            free.items = sorted(set(world["shop"]["catalog"]) - free.used_items)
            goal = GOALS[kind] if GOALS[kind].possible(free) else _Write
            goals.append(goal.draw(i, rng, free))
        return goals

    @staticmethod
    def _describe(g: dict[str, Any]) -> str:
        return GOALS[g["kind"]].describe(g)

    def _plan(self, world: dict[str, Any], goals: list[dict[str, Any]]) -> list[Call]:
        """The reference calls, built from the world (lookups included)."""
        return [call for g in goals for call in GOALS[g["kind"]].plan(g, world)]

    # ---- the verifier ------------------------------------------------------------------------
    def verify(self, problem: Problem, output: str) -> Verdict:
        if not isinstance(output, str):
            return Verdict(WRONG_FORMAT, False, "no tool call found")
        apps, readable = replay(problem.data["world"], output, self.offered_tools(problem))
        if readable == 0:
            return Verdict(WRONG_FORMAT, False, "no tool call could be read")
        return self.check_world(problem, apps.world)

    def check_world(self, problem: Problem, world: dict[str, Any]) -> Verdict:
        goals = problem.data["goals"]
        start = problem.data["world"]
        met = sum(_goal_met(g, world, start) for g in goals)
        damage = _collateral(goals, world, start)
        status = f"{met} of {len(goals)} tasks done"
        if damage:
            return graded(0.0, False, f"{status}; but {damage}")
        return graded(met / len(goals), met == len(goals), status)

    def check(self, problem: Problem, answer: str) -> Verdict:
        return self.verify(problem, answer)

    def solve(self, problem: Problem) -> str:
        return transcript_of(self._plan(problem.data["world"], problem.data["goals"]))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        """The solution without its last call (the last goal stays undone)."""
        turns = answer.split(TURN_SEPARATOR)
        return (
            TURN_SEPARATOR.join(turns[:-1])
            if len(turns) > 1
            else transcript_of([("files_list", {})])
        )

    def surface_forms(self, problem: Problem) -> list[str]:
        """The reference calls one per turn, all in one turn, and one per turn with some
        text, other key order and other JSON spacing."""
        calls = self._plan(problem.data["world"], problem.data["goals"])
        chatty = TURN_SEPARATOR.join(
            json.dumps({"calls": [{"arguments": a, "name": t}], "content": "Next step."}, indent=2)
            for t, a in calls
        )
        return [self.solve(problem), transcript_of(calls, per_turn=len(calls)), chatty]

    def near_misses(self, problem: Problem) -> list[str]:
        calls = self._plan(problem.data["world"], problem.data["goals"])
        extra = [*calls, ("files_write", {"path": "notes/extra.txt", "content": "x"})]
        victim = sorted(problem.data["world"]["files"])[-1]
        touched = [*calls, ("files_write", {"path": victim, "content": "overwritten"})]
        out = [self.corrupt(problem, self.solve(problem), random.Random(0))]
        out += [transcript_of(v) for v in (extra, touched)]
        return out

    def size(self, problem: Problem) -> float:
        return float(len(self._plan(problem.data["world"], problem.data["goals"])))

    def feedback(self, problem: Problem, output: str, verdict: Verdict) -> str:
        return verdict.detail


__all__ = [
    "GOALS",
    "TOOL_NAMES",
    "TURN_SEPARATOR",
    "Goal",
    "ToolWorld",
    "ToolWorldApps",
    "replay",
    "transcript_of",
]
