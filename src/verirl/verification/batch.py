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

It never raises for a model output: a call past its deadline scores as an invalid answer
(RLVE's −0.5; ``extra["status"] = "timeout"``), a verifier that raised scores −1 with
``extra["verifier_error"]``. Both are counted (``metrics()``: ``verifier_timeouts``,
``verifier_errors``) and logged with the environment, difficulty and seed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

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

    def verify(self, problems: Sequence[Problem], texts: Sequence[str]) -> list[Verdict | None]:
        """One verdict per (problem, text); ``None`` where ``problem.env`` is not a registered
        environment (free-form data, judged by the reward source's own rule)."""
        if len(problems) != len(texts):
            raise ValueError(f"{len(problems)} problems but {len(texts)} texts")
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
        self._counts["verified"] += 1
        where = f"{problem.env} (difficulty {problem.difficulty}, seed {problem.seed})"
        if "verifier_error" in v.extra:
            self._counts["verifier_errors"] += 1
            log.warning("verifier error in %s: %s", where, v.extra["verifier_error"])
        elif v.extra.get("status") == "timeout" and "backend" not in v.extra:
            self._counts["verifier_timeouts"] += 1
            log.warning("verification timed out in %s", where)

    def metrics(self, reset: bool = True) -> dict[str, float]:
        """Counts since the last reset, and the seconds spent verifying."""
        out = {k: float(v) for k, v in self._counts.items()}
        out["verify_seconds"] = self._seconds
        if reset:
            self._counts = dict.fromkeys(self._counts, 0)
            self._seconds = 0.0
        return out


def _error_verdict(what: str) -> Verdict:
    return Verdict(
        WRONG_FORMAT,
        False,
        "the verifier failed on this output",
        extra={"verifier_error": what[:300]},
    )
