"""A stateful tool-using world: simulated apps (files, calendar, contacts, shop) behind a
typed API, called one JSON tool call per turn (the agent setting of TCPO, Liao et al. 2026,
arXiv:2608.01667, whose third domain is AppWorld).

A task is a generated initial world plus goals ("save Ann's email in notes/ann.txt", "cancel
the dentist appointment on day 3", "buy 2 lamps"). Each model turn holds one tool call in a
```` ```json ```` block, ``{"tool": "contacts.find", "args": {"name": "ann"}}``; the
observation (the call's result, or its error) is the next message. The verifier is pure: it
replays the episode's calls from the initial world (the multi-turn collector passes a
:attr:`~verirl.envs.base.Environment.stateful` environment the whole transcript, turns joined
by :data:`TURN_SEPARATOR`) and checks the final state:

- reward = share of goal conditions met (the per-turn score TCPO's credit reads), but 0 when
  anything the task did not ask to change was changed (a file, an event, a contact, an extra
  purchase); −1 when no tool call can be read at all;
- ``correct`` when every goal holds and nothing else changed.

Difficulty: goals = 1 + difficulty // 2 (more steps; several need a lookup first), apps used
grow with the goals, and distractor records (files, events, contacts, catalogue items) grow
with difficulty.
"""

from __future__ import annotations

import copy
import json
import random
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

from verirl.envs.base import (
    TURN_SEPARATOR,
    WRONG_FORMAT,
    Environment,
    Instance,
    graded,
    register_env,
)
from verirl.envs.reading.formats import AnswerFormat, code_block
from verirl.types import Problem, Verdict

MAX_CALLS = 200

TOOLS: dict[str, dict[str, type]] = {
    "files.list": {},
    "files.read": {"path": str},
    "files.write": {"path": str, "content": str},
    "files.delete": {"path": str},
    "calendar.list": {"day": int},
    "calendar.add": {"title": str, "day": int, "hour": int},
    "calendar.remove": {"id": int},
    "contacts.find": {"name": str},
    "contacts.update": {"name": str, "field": str, "value": str},
    "shop.search": {"query": str},
    "shop.add_to_cart": {"item": str, "qty": int},
    "shop.checkout": {},
}
"""The typed API: tool name → argument names and types."""

_NAMES = ["ann", "bob", "cyd", "dee", "eli", "fay", "gus", "hal", "ivy", "jon", "kim", "lou"]
_ITEMS = ["lamp", "mug", "pen", "desk", "chair", "book", "cable", "plant", "clock", "fan"]
_TITLES = ["dentist", "standup", "lunch", "gym", "review", "call", "yoga", "dinner", "demo"]
_WORDS = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "zeta"]


# ---- the world -------------------------------------------------------------------------------
def apply_call(world: dict[str, Any], tool: str, args: dict[str, Any]) -> Any:
    """Run one tool call on ``world`` (mutated in place) and return its observation. Bad
    calls return ``{"error": ...}`` and change nothing."""
    spec = TOOLS.get(tool)
    if spec is None:
        return {"error": f"unknown tool {tool!r}; tools: {', '.join(TOOLS)}"}
    if set(args) != set(spec):
        return {"error": f"{tool} takes arguments {sorted(spec)}, got {sorted(args)}"}
    for key, typ in spec.items():
        if not isinstance(args[key], typ) or isinstance(args[key], bool):
            return {"error": f"{tool}: argument {key} must be {typ.__name__}"}
    files, cal, contacts, shop = world["files"], world["calendar"], world["contacts"], world["shop"]
    if tool == "files.list":
        return sorted(files)
    if tool == "files.read":
        return files.get(args["path"], {"error": "no such file"})
    if tool == "files.write":
        if len(args["content"]) > 1000:
            return {"error": "content longer than 1000 characters"}
        files[args["path"]] = args["content"]
        return "ok"
    if tool == "files.delete":
        return "ok" if files.pop(args["path"], None) is not None else {"error": "no such file"}
    if tool == "calendar.list":
        return [e for e in cal["events"] if e["day"] == args["day"]]
    if tool == "calendar.add":
        if not (0 <= args["hour"] < 24 and 1 <= args["day"] <= 31):
            return {"error": "day must be 1..31 and hour 0..23"}
        cal["next_id"] += 1
        cal["events"].append(
            {"id": cal["next_id"], "title": args["title"], "day": args["day"], "hour": args["hour"]}
        )
        return {"id": cal["next_id"]}
    if tool == "calendar.remove":
        before = len(cal["events"])
        cal["events"] = [e for e in cal["events"] if e["id"] != args["id"]]
        return "ok" if len(cal["events"]) < before else {"error": "no such event"}
    if tool == "contacts.find":
        rec = contacts.get(args["name"])
        return rec if rec is not None else {"error": "no such contact"}
    if tool == "contacts.update":
        rec = contacts.get(args["name"])
        if rec is None or args["field"] not in ("email", "phone"):
            return {"error": "no such contact or field (email, phone)"}
        rec[args["field"]] = args["value"]
        return "ok"
    if tool == "shop.search":
        return {k: v for k, v in shop["catalog"].items() if args["query"] in k}
    if tool == "shop.add_to_cart":
        if args["item"] not in shop["catalog"] or not 1 <= args["qty"] <= 99:
            return {"error": "no such item, or qty outside 1..99"}
        shop["cart"][args["item"]] = shop["cart"].get(args["item"], 0) + args["qty"]
        return dict(shop["cart"])
    # shop.checkout
    if not shop["cart"]:
        return {"error": "the cart is empty"}
    total = sum(shop["catalog"][k] * q for k, q in shop["cart"].items())
    if total > shop["balance"]:
        return {"error": "not enough balance"}
    shop["balance"] -= total
    shop["orders"].append(dict(sorted(shop["cart"].items())))
    shop["cart"] = {}
    return {"paid": total}


def read_calls(transcript: str) -> list[tuple[str, dict[str, Any]] | str]:
    """The tool call of each turn of ``transcript`` (the last ```` ```json ```` block, or a
    bare JSON object, of each turn), or an error string for a turn without a readable call."""
    out: list[tuple[str, dict[str, Any]] | str] = []
    for turn in transcript.split(TURN_SEPARATOR)[:MAX_CALLS]:
        body = _last_json_block(turn)
        if body is None:
            out.append("no tool call found: write one ```json block with tool and args")
            continue
        try:
            obj = json.loads(body)
        except ValueError:
            out.append("the tool call is not valid JSON")
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("tool"), str):
            out.append('a tool call is an object {"tool": NAME, "args": {...}}')
            continue
        args = obj.get("args", {})
        if not isinstance(args, dict):
            out.append("args must be an object")
            continue
        out.append((obj["tool"], args))
    return out


def _last_json_block(turn: str) -> str | None:
    end = turn.rfind("```")
    while end >= 0:
        start = turn.rfind("```", 0, end)
        if start < 0:
            break
        head, _, body = turn[start + 3 : end].partition("\n")
        if head.strip().lower() in ("json", ""):
            return body
        end = start
    stripped = turn.strip()
    return stripped if stripped.startswith("{") and stripped.endswith("}") else None


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

    @staticmethod
    def draw(i: int, rng: random.Random, free: _Free) -> dict[str, Any]:
        path = f"notes/task{i}.txt"
        goal = {
            "kind": "write",
            "path": path,
            "content": f"{rng.choice(_WORDS)}-{rng.randint(0, 99)}",
        }
        free.used_paths.add(path)
        return goal

    @staticmethod
    def describe(g: dict[str, Any]) -> str:
        return f"Create the file {g['path']} containing exactly {g['content']!r}."

    @staticmethod
    def plan(g: dict[str, Any], world: dict[str, Any]) -> list[Call]:
        return [("files.write", {"path": g["path"], "content": g["content"]})]

    @staticmethod
    def met(g: dict[str, Any], world: dict[str, Any], start: dict[str, Any]) -> bool:
        return bool(world["files"].get(g["path"]) == g["content"])


class _Schedule(Goal):
    kind = "schedule"

    @staticmethod
    def draw(i: int, rng: random.Random, free: _Free) -> dict[str, Any]:
        return {
            "kind": "schedule",
            "title": f"{rng.choice(_TITLES)}-{i}",
            "day": rng.randint(8, 28),
            "hour": rng.randint(8, 18),
        }

    @staticmethod
    def describe(g: dict[str, Any]) -> str:
        return f"Schedule an event titled {g['title']!r} on day {g['day']} at hour {g['hour']}."

    @staticmethod
    def plan(g: dict[str, Any], world: dict[str, Any]) -> list[Call]:
        return [("calendar.add", {"title": g["title"], "day": g["day"], "hour": g["hour"]})]

    @staticmethod
    def met(g: dict[str, Any], world: dict[str, Any], start: dict[str, Any]) -> bool:
        return any(
            e["title"] == g["title"] and e["day"] == g["day"] and e["hour"] == g["hour"]
            for e in world["calendar"]["events"]
        )


class _Phone(Goal):
    kind = "phone"

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
        return [("contacts.update", {"name": g["name"], "field": "phone", "value": g["phone"]})]

    @staticmethod
    def met(g: dict[str, Any], world: dict[str, Any], start: dict[str, Any]) -> bool:
        return bool(world["contacts"].get(g["name"], {}).get("phone") == g["phone"])


class _SaveEmail(Goal):
    kind = "save_email"

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
            ("contacts.find", {"name": g["name"]}),
            ("files.write", {"path": g["path"], "content": email}),
        ]

    @staticmethod
    def met(g: dict[str, Any], world: dict[str, Any], start: dict[str, Any]) -> bool:
        return bool(world["files"].get(g["path"]) == start["contacts"][g["name"]]["email"])


class _Buy(Goal):
    kind = "buy"

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
        return [("shop.add_to_cart", {"item": g["item"], "qty": g["qty"]}), ("shop.checkout", {})]

    @staticmethod
    def met(g: dict[str, Any], world: dict[str, Any], start: dict[str, Any]) -> bool:
        return {g["item"]: g["qty"]} in world["shop"]["orders"]


class _Cancel(Goal):
    kind = "cancel"

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
        return [("calendar.list", {"day": g["day"]}), ("calendar.remove", {"id": ev["id"]})]

    @staticmethod
    def met(g: dict[str, Any], world: dict[str, Any], start: dict[str, Any]) -> bool:
        return not any(e["id"] == g["id"] for e in world["calendar"]["events"])


class _Copy(Goal):
    kind = "copy"

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
            ("files.read", {"path": g["src"]}),
            ("files.write", {"path": g["dst"], "content": world["files"][g["src"]]}),
        ]

    @staticmethod
    def met(g: dict[str, Any], world: dict[str, Any], start: dict[str, Any]) -> bool:
        return bool(world["files"].get(g["dst"]) == start["files"][g["src"]])


class _Delete(Goal):
    kind = "delete"

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
        return [("files.delete", {"path": g["path"]})]

    @staticmethod
    def met(g: dict[str, Any], world: dict[str, Any], start: dict[str, Any]) -> bool:
        return g["path"] not in world["files"]


GOALS: dict[str, type[Goal]] = {
    g.kind: g for g in (_Write, _Schedule, _Phone, _Buy, _SaveEmail, _Cancel, _Copy, _Delete)
}
"""The goal kinds, in the order the first goals of a problem cycle through them."""


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
@register_env
class ToolWorld(Environment):
    name = "tool_world"
    difficulty_scales = "goals: 1 + difficulty // 2 (more apps and lookups); distractor records"
    tags: ClassVar[tuple[str, ...]] = ("agent", "multi_turn")
    stateful: ClassVar[bool] = True
    answer_format: ClassVar[AnswerFormat] = code_block("json")
    answer_instruction: ClassVar[str] = (
        "Each reply makes exactly one tool call, as a ```json block "
        '{"tool": NAME, "args": {...}}; the result comes back as the next message.'
    )
    clean_answers: ClassVar[bool] = False
    size_measure: ClassVar[str | None] = "tool calls of the reference solution"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        world = self._world(difficulty, rng)
        goals = self._goals(difficulty, rng, world)
        lines = [f"{i + 1}. {self._describe(g)}" for i, g in enumerate(goals)]
        api = "\n".join(
            f"- {name}({', '.join(f'{k}: {t.__name__}' for k, t in spec.items())})"
            for name, spec in TOOLS.items()
        )
        prompt = (
            "You operate a computer through tools, one call per reply. Tools:\n"
            f"{api}\n\nTasks:\n" + "\n".join(lines) + "\n\nChange nothing else."
        )
        data = {"world": world, "goals": goals}
        answer = TURN_SEPARATOR.join(self._render(c) for c in self._plan(world, goals))
        return Instance(prompt=prompt, answer=answer, data=data)

    def _world(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        extra = 2 + difficulty
        files = {
            f"docs/{rng.choice(_WORDS)}{i}.txt": f"{rng.choice(_WORDS)} {rng.randint(0, 999)}"
            for i in range(extra)
        }
        events = [
            {
                "id": i + 1,
                "title": rng.choice(_TITLES),
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
            for name in rng.sample(_NAMES, min(len(_NAMES), 3 + difficulty // 2))
        }
        catalog = {
            item: rng.randint(2, 60)
            for item in rng.sample(_ITEMS, min(len(_ITEMS), 3 + difficulty // 3))
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

    @staticmethod
    def _render(call: tuple[str, dict[str, Any]]) -> str:
        return "```json\n" + json.dumps({"tool": call[0], "args": call[1]}) + "\n```"

    # ---- the verifier ------------------------------------------------------------------------
    def replay(self, problem: Problem, transcript: str) -> tuple[dict[str, Any], Any, int]:
        """The world after the transcript's calls, the last observation and the number of
        readable calls."""
        start = problem.data["world"]
        world = copy.deepcopy(start)
        last: Any = None
        readable = 0
        for call in read_calls(transcript):
            if isinstance(call, str):
                last = {"error": call}
                continue
            readable += 1
            try:
                last = apply_call(world, call[0], call[1])
            except Exception as exc:  # a world bug must not crash the trainer
                last = {"error": f"{type(exc).__name__}"}
        return world, last, readable

    def verify(self, problem: Problem, output: str) -> Verdict:
        if not isinstance(output, str):
            return Verdict(WRONG_FORMAT, False, "no tool call found")
        world, last, readable = self.replay(problem, output)
        observation = json.dumps(last)[:1500]
        if readable == 0:
            return Verdict(WRONG_FORMAT, False, f"Observation: {observation}")
        return self.check_world(problem, world, observation)

    def check_world(self, problem: Problem, world: dict[str, Any], observation: str) -> Verdict:
        goals = problem.data["goals"]
        start = problem.data["world"]
        met = sum(_goal_met(g, world, start) for g in goals)
        damage = _collateral(goals, world, start)
        status = f"{met} of {len(goals)} tasks done"
        if damage:
            return graded(0.0, False, f"Observation: {observation}\n({status}; but {damage})")
        return graded(
            met / len(goals), met == len(goals), f"Observation: {observation}\n({status})"
        )

    def check(self, problem: Problem, answer: str) -> Verdict:
        return self.verify(problem, answer)

    def solve(self, problem: Problem) -> str:
        calls = self._plan(problem.data["world"], problem.data["goals"])
        return TURN_SEPARATOR.join(self._render(c) for c in calls)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        """The solution without its last call (the last goal stays undone)."""
        turns = answer.split(TURN_SEPARATOR)
        return (
            TURN_SEPARATOR.join(turns[:-1])
            if len(turns) > 1
            else '```json\n{"tool": "files.list", "args": {}}\n```'
        )

    def surface_forms(self, problem: Problem) -> list[str]:
        calls = self._plan(problem.data["world"], problem.data["goals"])
        spaced = TURN_SEPARATOR.join(
            "```json\n"
            + json.dumps({"args": a, "tool": t}, indent=2)
            + "\n```\nwaiting for the result"
            for t, a in calls
        )
        unlabelled = TURN_SEPARATOR.join(
            "```\n" + json.dumps({"tool": t, "args": a}, separators=(",", ":")) + "\n```"
            for t, a in calls
        )
        return [self.solve(problem), spaced, unlabelled]

    def near_misses(self, problem: Problem) -> list[str]:
        calls = self._plan(problem.data["world"], problem.data["goals"])
        extra = [*calls, ("files.write", {"path": "notes/extra.txt", "content": "x"})]
        victim = sorted(problem.data["world"]["files"])[-1]
        touched = [*calls, ("files.write", {"path": victim, "content": "overwritten"})]
        out = [self.corrupt(problem, self.solve(problem), random.Random(0))]
        out += [TURN_SEPARATOR.join(self._render(c) for c in v) for v in (extra, touched)]
        return out

    def size(self, problem: Problem) -> float:
        return float(len(self._plan(problem.data["world"], problem.data["goals"])))

    def feedback(self, problem: Problem, output: str, verdict: Verdict) -> str:
        return verdict.detail


__all__ = ["GOALS", "TOOLS", "TURN_SEPARATOR", "Goal", "ToolWorld", "apply_call", "read_calls"]
