"""What the server does, without the web layer: problems, verdicts, curricula.

A :class:`Gym` owns the verifier resources built from the config (the verification
executor with its deadline, the proof checkers, the code sandbox) and the
:class:`~verirl.serve.store.CurriculumStore`. Problems are named by ``(env, difficulty,
seed)`` and regenerated on demand (environments are pure), so a verdict needs no session:
the same answer gets the same verdict here as in the training loop, because both go through
:class:`~verirl.verification.batch.BatchVerifier`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from verirl.curriculum import CurriculumConfig, Task
from verirl.envs import ENVIRONMENTS, get_env, load_all
from verirl.envs.base import WRONG_FORMAT
from verirl.errors import UnknownNameError, UserInputError
from verirl.provers.settings import Provers
from verirl.serve.settings import GymConfig, ServeConfig
from verirl.serve.store import CurriculumStore, request_digest
from verirl.types import Problem, Verdict
from verirl.verification.batch import BatchVerifier
from verirl.verification.executors import Executor
from verirl.verification.resources import build_verifier_resources

MAX_SEED = 2**63 - 1
UNREADABLE = ("too_long", "not_text")
"""Statuses of outputs the verifiers are not given (see :meth:`Problems.unreadable`)."""


class UnknownEnvironment(UnknownNameError):
    """An environment name the server does not have (the HTTP layer answers 404)."""


def env_info(name: str) -> dict[str, Any]:
    """What a client needs to know about an environment before asking for problems."""
    env = get_env(name)
    return {
        "name": name,
        "family": env.family,
        "difficulty_scales": env.difficulty_scales,
        "max_difficulty": int(env.max_difficulty),
        "answer_format": env.answer_format.style,
        "answer_language": env.answer_format.language or None,
        "answer_instruction": env.answer_instruction,
        "tags": list(env.tags),
        "prover": env.prover,
        "stateful": bool(env.stateful),
    }


def verdict_json(v: Verdict) -> dict[str, Any]:
    """A verdict as the wire carries it (``status``: ``timeout`` when the verifier ran past
    its deadline, ``verifier_error`` when it failed, ``too_long`` / ``not_text`` for an output
    the verifiers were not given (:meth:`Problems.unreadable`), else ``ok``)."""
    extra = dict(v.extra)
    if "verifier_error" in extra:
        status = "verifier_error"
    elif extra.get("status") in ("timeout", *UNREADABLE):
        status = str(extra["status"])
    else:
        status = "ok"
    return {
        "reward": float(v.reward),
        "correct": bool(v.correct),
        "detail": v.detail,
        "status": status,
        "first_failed_step": v.first_failed_step,
        "steps": [[span.start, span.end] for span in v.steps],
        "extra": extra,
    }


class Problems:
    """Problems, answer checks and feedback, shared by the server's :class:`Gym` and the
    in-process :class:`~verirl.episodes.local.LocalGym` (each sets ``settings`` and calls
    :meth:`_init_problems`)."""

    settings: ServeConfig

    def _init_problems(self) -> None:
        self._cache: OrderedDict[tuple[str, int, int], Problem] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._envs = [env_info(n) for n in sorted(ENVIRONMENTS.names())]

    # ---- environments and problems -----------------------------------------------------
    def environments(self) -> list[dict[str, Any]]:
        return self._envs

    def problem(self, env: object, difficulty: object, seed: object) -> Problem:
        """The problem ``(env, difficulty, seed)`` names; bad names and values are refused
        with one line naming what is wrong."""
        if not isinstance(env, str) or env not in ENVIRONMENTS:
            raise UnknownEnvironment(
                f"unknown environment {ascii(env)[:80]} (GET /envs lists the {len(self._envs)}"
                " environments)"
            )
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise UserInputError(f"seed must be an integer in [0, 2^63), got {ascii(seed)[:40]}")
        if isinstance(difficulty, bool) or not isinstance(difficulty, int):
            raise UserInputError(f"difficulty must be an integer, got {ascii(difficulty)[:40]}")
        key = (env, difficulty, seed)
        with self._cache_lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
        problem = get_env(env).generate(difficulty, seed)  # UserInputError past max_difficulty
        if self.settings.problem_cache:
            with self._cache_lock:
                self._cache[key] = problem
                while len(self._cache) > self.settings.problem_cache:
                    self._cache.popitem(last=False)
        return problem

    def unreadable(self, output: str) -> Verdict | None:
        """The verdict of an output the verifiers are not given, or None when it is given.

        An output longer than ``serve.max_answer_chars`` (``status: too_long``) or that is not
        Unicode text (a lone surrogate; ``status: not_text``) is an answer in no readable
        format: reward -1 (RLVE's wrong-format reward), not correct, in ``POST /verify`` and
        in an episode's step alike (model output is never a reason to refuse a request). It
        is decided by the output alone, never by a cut of it, so no part of a long output can
        make it pass; a client may send any ``max_answer_chars + 1`` characters of a longer
        output and gets the same verdict."""
        limit = self.settings.max_answer_chars
        if len(output) > limit:
            status = "too_long"
            detail = (
                f"not verified: the answer is longer than {limit} characters "
                "(serve.max_answer_chars)"
            )
        else:
            try:
                output.encode("utf-8")
                return None
            except UnicodeEncodeError:
                status = "not_text"
                detail = "not verified: the answer is not Unicode text (a lone surrogate)"
        return Verdict(WRONG_FORMAT, False, detail, extra={"status": status})

    def feedback(self, problem: Problem, text: str, verdict: Verdict) -> str:
        if verdict.extra.get("status") in UNREADABLE:
            return verdict.detail
        try:
            return get_env(problem.env).feedback(problem, text, verdict)
        except Exception:  # feedback is a courtesy; the verdict stands
            return verdict.detail


class Gym(Problems):
    """The server's state and verifier resources (thread-safe)."""

    def __init__(
        self,
        serve: ServeConfig,
        curriculum: CurriculumConfig,
        *,
        executor: Executor,
        provers: Provers,
        timeout_s: float,
        state_path: str | None = None,
    ) -> None:
        load_all()
        self.settings = serve
        self.executor = executor
        self.provers = provers
        self.verifier = BatchVerifier(executor, provers, timeout_s)
        self.store = CurriculumStore(
            state_path or serve.state_path,
            curriculum,
            durability=serve.durability,
            max_curricula=serve.max_curricula,
            keep_requests=serve.request_ids,
        )
        self._init_problems()

    @classmethod
    def from_config(cls, gym: GymConfig, state_path: str | None = None) -> Gym:
        """The gym ``gym`` describes, its verifier resources built as a training run builds
        them (:func:`~verirl.verification.resources.build_verifier_resources`)."""
        resources = build_verifier_resources(
            gym.verification, gym.provers, gym.sandbox, gym.run.plugins
        )
        try:
            return cls(
                gym.serve,
                gym.curriculum,
                executor=resources.executor,
                provers=resources.provers,
                timeout_s=gym.verification.timeout_s,
                state_path=state_path,
            )
        except BaseException:
            resources.close()
            raise

    def close(self) -> None:
        self.store.close()
        self.executor.close()
        self.provers.close()

    # ---- verdicts ----------------------------------------------------------------------
    def verify(
        self,
        items: Sequence[tuple[Task, str]],
        curriculum: str | None = None,
        count: Sequence[bool] | None = None,
        request_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """Verdicts for ``(task, output)`` pairs. With ``curriculum``, each verdict on a
        problem that curriculum issued (and, with ``count``, marked True) updates it,
        committed before this returns; ``counted`` says which did. With ``request_id`` too,
        the reply is stored with the counts and a repeated id is answered with it, counting
        nothing again (:mod:`verirl.serve.store`).

        A bad problem (unknown environment, seed, difficulty) refuses the whole call; an
        output never does: one the verifiers are not given gets :meth:`unreadable`'s
        verdict, and the other items are verified as usual."""
        digest = ""
        if curriculum is not None:
            self.store.require(curriculum)  # 404 before any work when it does not exist
            if request_id is not None:
                digest = request_digest(
                    [[[t.env, t.difficulty, t.seed, o] for t, o in items], count]
                )
                stored = self.store.replay(curriculum, request_id, digest)
                if stored is not None:
                    return list(stored)
        problems = [self.problem(t.env, t.difficulty, t.seed) for t, _ in items]
        out: list[dict[str, Any] | None] = []
        for _, output in items:
            unreadable = self.unreadable(output)
            out.append(None if unreadable is None else verdict_json(unreadable))
        todo = [i for i, o in enumerate(out) if o is None]
        texts = [items[i][1] for i in todo]
        verdicts = self.verifier.verify([problems[i] for i in todo], texts) if todo else []
        for i, v in zip(todo, verdicts, strict=True):
            assert v is not None  # every problem is from a registered environment
            out[i] = verdict_json(v)
        rows = [o for o in out if o is not None]
        assert len(rows) == len(items)
        idx = (
            []
            if curriculum is None
            else [i for i in range(len(items)) if count is None or count[i]]
        )
        outcomes = [(items[i][0], bool(rows[i]["correct"])) for i in idx]

        def reply(flags: list[bool]) -> list[dict[str, Any]]:
            counted = [False] * len(items)
            for i, c in zip(idx, flags, strict=True):
                counted[i] = c
            return [r | {"counted": c} for r, c in zip(rows, counted, strict=True)]

        if curriculum is None:
            return reply([])
        if request_id is not None:
            return list(self.store.record_request(curriculum, request_id, digest, outcomes, reply))
        return reply(self.store.record(curriculum, outcomes) if outcomes else [])

    # ---- the episode backend (verirl.serve.episode.EpisodeBackend) ---------------------
    def draw(self, curriculum: str) -> Task:
        return self.store.issue(curriculum, 1)[0]

    def require(self, curriculum: str) -> None:
        self.store.require(curriculum)

    def record_episode(self, curriculum: str, task: Task, correct: bool) -> bool:
        return self.store.record(curriculum, [(task, correct)])[0]

    def window(self, curriculum: str, env: str) -> list[int] | None:
        window = self.store.window(curriculum, env)
        return None if window is None else list(window)

    def verdict(self, problem: Problem, text: str) -> Verdict:
        """One verdict, uncounted (multi-turn episodes count their last turn themselves)."""
        unreadable = self.unreadable(text)
        if unreadable is not None:
            return unreadable
        v = self.verifier.verify([problem], [text])[0]
        assert v is not None
        return v
