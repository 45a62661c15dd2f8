"""The batched verification stage: environment verifiers over a whole batch at once.

Every reward source reaches the environments' verifiers through one :class:`BatchVerifier`
(``RewardContext.verifier``), for the step's rollouts and for each turn of a multi-turn
episode alike. It sends

- problems of a proof environment (``Environment.prover`` set) to that environment's
  :meth:`~verirl.envs.base.Environment.verify_batch` with the run's
  :class:`~verirl.provers.settings.Provers`, so the checker's worker pool checks the batch's
  proofs in parallel under the prover's own time limit;
- every other problem to the configured :class:`~verirl.verification.executors.Executor` (inline,
  threads, processes, ray), each call with the stage's deadline ``timeout_s``.

An executor that hosts its own proof checkers (``hosts_provers``: the ``ray`` executor's
actors) receives the proof problems too, one call per proof, each checked by the worker's
own long-lived checkers built from the run's prover settings; a call lost with its worker
scores as a failed proof with ``extra["status"] = "timeout"``.

**Streaming** (:meth:`BatchVerifier.submit`): a rollout that finished while the rest of its
batch still decodes is verified at once, on one background thread that takes whatever was
submitted since its last batch as one batch; :meth:`BatchVerifier.verify` then picks those
verdicts up (matched by the problem object and the text) and sends the rest through the same
thread. A slow verifier (a proof checker, the sandbox, a judge) so overlaps generation; the
verdicts are the ones :meth:`verify` alone would give. While nothing was submitted,
:meth:`verify` runs in the caller's thread as before.

It never raises for a model output: a call past its deadline scores as an invalid answer
(RLVE's −0.5; ``extra["status"] = "timeout"``), a verifier that raised scores −1 with
``extra["verifier_error"]``. Both are counted (``metrics()``: ``verifier_timeouts``,
``verifier_errors``) and logged with the environment, difficulty and seed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from verirl.envs import get_env, is_env, load_all
from verirl.envs.base import INVALID, WRONG_FORMAT
from verirl.provers.settings import Provers
from verirl.types import Problem, Verdict
from verirl.verification.executors import Executor, InlineExecutor

log = logging.getLogger("verirl.verification")


def verify_one(item: tuple[Problem, str]) -> Verdict:
    """One environment verification (module-level, so worker processes can run it)."""
    problem, text = item
    return get_env(problem.env).verify(problem, text)


def verify_proof_one(item: tuple[Problem, str], provers: Provers) -> Verdict:
    """One proof verification on a worker's own checkers (``Executor.map_with_provers``)."""
    problem, text = item
    return get_env(problem.env).verify_batch([problem], [text], provers)[0]


# A proof call's worker deadline: the prover's own limit (it answers "timeout" itself) plus
# room for the prelude and the reply; past it the worker counts as stuck.
PROOF_CALL_MARGIN_S = 5.0


@dataclass(eq=False)
class _Streamed:
    """One submitted verification: its verdict once the background thread has it."""

    problem: Problem
    text: str
    verdict: Verdict | None = None
    done: threading.Event = field(default_factory=threading.Event)


class BatchVerifier:
    """Environment verification for batches; see the module docstring.

    ``timeout_s`` is the deadline of one pure-Python verification (proof checks use the
    prover's ``timeout_s`` instead). The verifier does not own ``executor`` or ``provers``:
    whoever built them closes them.
    """

    def __init__(
        self,
        executor: Executor | None = None,
        provers: Provers | None = None,
        timeout_s: float = 10.0,
    ) -> None:
        self.executor = executor or InlineExecutor()
        self.provers = provers or Provers()
        self.timeout_s = timeout_s
        self._counts = {"verifier_errors": 0, "verifier_timeouts": 0, "verified": 0}
        self._seconds = 0.0
        self._waited = 0.0  # seconds verify() spent waiting for streamed verdicts
        self._lock = threading.Lock()  # the counts
        self._cv = threading.Condition()  # the streaming queue below
        self._todo: list[_Streamed] = []  # submitted, not yet taken by the thread
        self._streamed: dict[tuple[int, str], deque[_Streamed]] = {}  # not yet picked up
        self._thread: threading.Thread | None = None

    # ---- streaming ---------------------------------------------------------------------------
    def submit(self, problems: Sequence[Problem], texts: Sequence[str]) -> None:
        """Start verifying (problem, text) pairs now, on the background thread; a later
        :meth:`verify` of the same pair (the same problem object, the same text) takes the
        verdict instead of verifying again."""
        if len(problems) != len(texts):
            raise ValueError(f"{len(problems)} problems but {len(texts)} texts")
        with self._cv:
            for problem, text in zip(problems, texts, strict=True):
                item = _Streamed(problem, text)
                self._todo.append(item)
                self._streamed.setdefault((id(problem), text), deque()).append(item)
            self._ensure_thread()
            self._cv.notify()

    def discard_streamed(self) -> int:
        """Forget submitted verifications nobody picked up (their verdicts are dropped when
        they arrive); returns how many."""
        with self._cv:
            count = sum(len(q) for q in self._streamed.values())
            self._streamed.clear()
        return count

    def _ensure_thread(self) -> None:  # under self._cv
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._serve, name="verirl-verify", daemon=True)
            self._thread.start()

    def _serve(self) -> None:
        """The background thread: verify what was submitted, in batches; exit when idle."""
        while True:
            with self._cv:
                if not self._todo:
                    self._cv.wait(timeout=0.5)
                if not self._todo:
                    self._thread = None
                    return
                batch, self._todo = self._todo, []
            try:
                verdicts = self._verify_now([i.problem for i in batch], [i.text for i in batch])
            except Exception as exc:  # the stage never loses an item: each is an error
                verdicts = [_error_verdict(str(exc)) for _ in batch]
            for item, verdict in zip(batch, verdicts, strict=True):
                item.verdict = verdict
                item.done.set()

    def _picked_up(self, problems: Sequence[Problem], texts: Sequence[str]) -> list[Verdict | None]:
        """:meth:`verify` while verdicts stream: each pair's submitted verification, the
        others submitted now; then wait for all of them."""
        items = []
        with self._cv:
            for problem, text in zip(problems, texts, strict=True):
                queue = self._streamed.get((id(problem), text))
                if queue and queue[0].problem is problem:
                    item = queue.popleft()
                    if not queue:
                        del self._streamed[(id(problem), text)]
                else:
                    item = _Streamed(problem, text)
                    self._todo.append(item)
                items.append(item)
            self._ensure_thread()
            self._cv.notify()
        t0 = time.perf_counter()
        for item in items:
            item.done.wait()
        self._waited += time.perf_counter() - t0
        return [item.verdict for item in items]

    # ---- verification ------------------------------------------------------------------------
    def verify(self, problems: Sequence[Problem], texts: Sequence[str]) -> list[Verdict | None]:
        """One verdict per (problem, text); ``None`` where ``problem.env`` is not a registered
        environment (free-form data, judged by the reward source's own rule)."""
        if len(problems) != len(texts):
            raise ValueError(f"{len(problems)} problems but {len(texts)} texts")
        with self._cv:
            streaming = bool(self._streamed or self._todo or self._thread is not None)
        if streaming:
            return self._picked_up(problems, texts)
        t0 = time.perf_counter()
        out = self._verify_now(problems, texts)
        self._waited += time.perf_counter() - t0
        return out

    def _verify_now(
        self, problems: Sequence[Problem], texts: Sequence[str]
    ) -> list[Verdict | None]:
        t0 = time.perf_counter()
        load_all()
        out: list[Verdict | None] = [None] * len(problems)
        plain: list[int] = []
        by_prover: dict[str, list[int]] = {}
        for i, problem in enumerate(problems):
            if not is_env(problem.env):
                continue
            env = get_env(problem.env)
            if env.prover is not None:
                by_prover.setdefault(problem.env, []).append(i)
            else:
                plain.append(i)
        for name, idx in by_prover.items():
            env = get_env(name)
            if self.executor.hosts_provers:
                self._verify_proofs_on_workers(env.prover or "", idx, problems, texts, out)
                continue
            try:
                verdicts = env.verify_batch(
                    [problems[i] for i in idx], [texts[i] for i in idx], self.provers
                )
            except Exception as exc:  # the checker failed as a whole: each item is an error
                verdicts = [_error_verdict(str(exc)) for _ in idx]
            for i, v in zip(idx, verdicts, strict=True):
                out[i] = v
        outcomes = self.executor.map(
            verify_one, [(problems[i], texts[i]) for i in plain], self.timeout_s
        )
        for i, o in zip(plain, outcomes, strict=True):
            if o.timed_out:
                out[i] = Verdict(
                    INVALID,
                    False,
                    f"verification took longer than {self.timeout_s:g} s",
                    extra={"status": "timeout"},
                )
            elif o.value is None:
                out[i] = _error_verdict(o.error or "no verdict")
            else:
                out[i] = o.value
        for i, verdict in enumerate(out):
            if verdict is not None:
                self._count(problems[i], verdict)
        with self._lock:
            self._seconds += time.perf_counter() - t0
        return out

    def _verify_proofs_on_workers(
        self,
        system: str,
        idx: list[int],
        problems: Sequence[Problem],
        texts: Sequence[str],
        out: list[Verdict | None],
    ) -> None:
        outcomes = self.executor.map_with_provers(
            verify_proof_one,
            [(problems[i], texts[i]) for i in idx],
            self.provers.config,
            self.provers.timeout_s(system) + PROOF_CALL_MARGIN_S,
        )
        for i, o in zip(idx, outcomes, strict=True):
            if o.timed_out:
                out[i] = Verdict(
                    0.0,
                    False,
                    f"the proof check was lost ({o.error}); a timeout is a failure",
                    extra={"status": "timeout"},
                )
            elif o.value is None:
                out[i] = _error_verdict(o.error or "no verdict")
            else:
                out[i] = o.value

    def _count(self, problem: Problem, v: Verdict) -> None:
        with self._lock:
            self._count_locked(problem, v)

    def _count_locked(self, problem: Problem, v: Verdict) -> None:
        self._counts["verified"] += 1
        where = f"{problem.env} (difficulty {problem.difficulty}, seed {problem.seed})"
        if "verifier_error" in v.extra:
            self._counts["verifier_errors"] += 1
            log.warning("verifier error in %s: %s", where, v.extra["verifier_error"])
        elif v.extra.get("status") == "timeout" and "backend" not in v.extra:
            self._counts["verifier_timeouts"] += 1
            log.warning("verification timed out in %s", where)

    def metrics(self, reset: bool = True) -> dict[str, float]:
        """Counts since the last reset, the seconds spent verifying (``verify_seconds``;
        streamed verifications included, though they overlapped generation) and the seconds
        callers of :meth:`verify` waited for verdicts (``verify_wait_seconds``: what
        verification added to the step)."""
        with self._lock:
            out = {k: float(v) for k, v in self._counts.items()}
            out["verify_seconds"] = self._seconds
            out["verify_wait_seconds"] = self._waited
            if reset:
                self._counts = dict.fromkeys(self._counts, 0)
                self._seconds = 0.0
                self._waited = 0.0
        return out


def _error_verdict(what: str) -> Verdict:
    return Verdict(
        WRONG_FORMAT,
        False,
        "the verifier failed on this output",
        extra={"verifier_error": what[:300]},
    )
