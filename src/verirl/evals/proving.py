"""Running a formal benchmark: a policy writes proofs, the live Coq pool checks them.

A **policy** answers each theorem with ``samples`` proof attempts: a model through its rollout
engine (the prompt is the theorem's context and statement, in the coq environments' format,
with the run config's system prompt and Coq-format demonstrations), or a classical baseline
(:mod:`verirl.provers.coq.baselines`: one fixed script, with its tactic's library imported
before the header). Every attempt goes through the same checker — the ``coqidetop`` pool, the
lexical safety filter, ``Print Assumptions`` — with the same seconds per check.

Theorems are checked in the order of their shared context (one header, one library file), one
thread per worker, so a worker keeps its context and rewinds to it between attempts.

The numbers: avg@n and the unbiased pass@k over the benchmark's theorems (those the exclusion
rule keeps), each with its 95% interval (:mod:`verirl.evals.stats`), and the **budget**
beside each: samples per theorem, new tokens per sample, seconds per check.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from verirl.errors import UserInputError
from verirl.evals.benchmarks import BenchmarkResult, BenchmarkSettings, ProblemRecord, share_of
from verirl.evals.formal import FormalItem, by_locality
from verirl.evals.stats import summarize
from verirl.progress import phase
from verirl.provers.base import FormalProblem, ProofCheck, ProverMessage
from verirl.provers.coq.attempt import CoqProblemError
from verirl.provers.coq.baselines import BASELINES, CoqBaseline

Progress = Callable[[int], None]


@dataclass(frozen=True)
class Attempt:
    """One proof attempt as the policy wrote it: the text checked (``None``: the output held
    no proof), and why generation stopped."""

    proof: str | None
    finish: str = "stop"
    output: str = ""


class ProofPolicy(Protocol):
    """What a formal benchmark runs: a model or a classical prover."""

    name: str
    deterministic: bool

    def attempts(
        self, items: Sequence[FormalItem], settings: BenchmarkSettings
    ) -> list[list[Attempt]]: ...

    def problem(self, item: FormalItem, timeout_s: float) -> FormalProblem: ...


@dataclass
class BaselinePolicy:
    """A registered classical prover (:data:`verirl.provers.coq.baselines.BASELINES`)."""

    baseline: CoqBaseline
    deterministic: bool = True

    @property
    def name(self) -> str:
        return self.baseline.name

    def attempts(
        self, items: Sequence[FormalItem], settings: BenchmarkSettings
    ) -> list[list[Attempt]]:
        return [[Attempt(self.baseline.proof)] for _ in items]

    def problem(self, item: FormalItem, timeout_s: float) -> FormalProblem:
        return self.baseline.problem(item.problem(), timeout_s)


@dataclass
class ModelPolicy:
    """A model behind a rollout engine. ``formatter``: a
    :class:`~verirl.rollout.prompts.PromptFormatter` (the run config's system prompt and
    demonstrations); ``env``: the environment whose prompt format the theorems take."""

    name: str
    engine: Any
    tokenizer: Any
    formatter: Any
    env: str = "coq_proofs"
    deterministic: bool = False

    def conversation(self, item: FormalItem) -> list[dict[str, str]]:
        from verirl.envs import get_env
        from verirl.types import Problem

        env = get_env(self.env)
        prompt = f"{item.prompt_text()}\n\n{env.answer_instruction}"
        problem = Problem(self.env, 0, 0, prompt, "", {})
        return list(self.formatter.messages(problem))

    def attempts(
        self, items: Sequence[FormalItem], settings: BenchmarkSettings
    ) -> list[list[Attempt]]:
        from verirl.envs.proofs.coq import extract_coq_proof
        from verirl.evals.benchmarks import generate

        conversations = [self.conversation(it) for it in items]
        groups = generate(self.engine, self.tokenizer, conversations, settings)
        out = []
        for item, group in zip(items, groups, strict=True):
            row = []
            for g in group:
                found = extract_coq_proof(g.text, item.statement, item.context)
                row.append(Attempt(found[0] if found else None, str(g.finish_reason), g.text))
            out.append(row)
        return out

    def problem(self, item: FormalItem, timeout_s: float) -> FormalProblem:
        return item.problem()


def baseline_policies(names: Sequence[str]) -> list[BaselinePolicy]:
    """Policies for baseline names (``scripts``: every script baseline; ``all``: every one)."""
    from verirl.provers.coq.baselines import script_baselines

    out: list[str] = []
    for name in names:
        if name == "all":
            out.extend(BASELINES)
        elif name == "scripts":
            out.extend(script_baselines())
        else:
            BASELINES.get(name)  # an unknown name lists the known ones
            out.append(name)
    return [BaselinePolicy(BASELINES.get(n).part) for n in dict.fromkeys(out)]


@dataclass(frozen=True)
class ProofBudget:
    """What each theorem gets: ``samples`` attempts of at most ``max_new_tokens`` new tokens
    (None: a fixed script), ``timeout_s`` seconds per check."""

    samples: int
    max_new_tokens: int | None
    timeout_s: float

    def describe(self) -> str:
        what = (
            f"{self.samples} × {self.max_new_tokens} tok"
            if self.max_new_tokens is not None
            else f"{self.samples} script"
        )
        return f"{what}, {self.timeout_s:g} s/check"

    def as_dict(self) -> dict[str, Any]:
        return {
            "samples": self.samples,
            "max_new_tokens": self.max_new_tokens,
            "seconds_per_check": self.timeout_s,
        }


def check_attempts(
    items: Sequence[FormalItem],
    attempts: Sequence[Sequence[Attempt]],
    policy: ProofPolicy,
    checker: Any,
    timeout_s: float,
    progress: Progress | None = None,
) -> list[list[ProofCheck | None]]:
    """The checker's answer for every attempt (``None`` where there was no proof), items
    checked by locality on ``checker.workers`` threads."""
    index = {id(it): i for i, it in enumerate(items)}
    ordered = by_locality(items)
    workers = max(1, int(getattr(checker, "workers", 1)))
    chunks: list[list[FormalItem]] = [[] for _ in range(workers)]
    # contiguous runs of one locality stay on one thread; spread localities over threads
    groups: dict[str, list[FormalItem]] = collections.OrderedDict()
    for it in ordered:
        groups.setdefault(it.locality, []).append(it)
    for group in sorted(groups.values(), key=len, reverse=True):
        min(chunks, key=len).extend(group)
    out: list[list[ProofCheck | None]] = [[] for _ in items]
    lock = threading.Lock()

    def run(chunk: list[FormalItem]) -> None:
        for it in chunk:
            i = index[id(it)]
            problem = policy.problem(it, timeout_s)
            row: list[ProofCheck | None] = []
            for att in attempts[i]:
                if att.proof is None:
                    row.append(None)
                    continue
                try:
                    row.append(checker.check(problem, att.proof, timeout_s=timeout_s))
                except CoqProblemError as exc:  # the context itself fails (a prover's import)
                    row.append(_context_failure(str(exc)))
            out[i] = row
            if progress is not None:
                with lock:
                    progress(1)

    with ThreadPoolExecutor(workers) as pool:
        for future in [pool.submit(run, c) for c in chunks if c]:
            future.result()
    return out


def _context_failure(message: str) -> ProofCheck:
    return ProofCheck(
        passed=False,
        status="crash",
        messages=(ProverMessage("error", message),),
        raw={"context": message[:500]},
    )


def run_proofs(
    bench: str,
    split: str,
    items: Sequence[FormalItem],
    policy: ProofPolicy,
    checker: Any,
    settings: BenchmarkSettings,
    timeout_s: float,
    *,
    excluded: dict[str, str] | None = None,
    rule: str = "",
    published: int | None = None,
    data_source: str = "",
) -> BenchmarkResult:
    """Sample (or script) proofs for ``items``, check them, and summarize; each half a phase
    that reports its progress (:mod:`verirl.progress`)."""
    settings.check()
    if policy.deterministic and settings.samples != 1:
        raise UserInputError(
            f"the baseline prover {policy.name!r} is deterministic: use --samples 1"
        )
    if not items:
        raise UserInputError(f"{bench} {split}: no theorem left to evaluate")
    started = time.perf_counter()
    label = f"{bench}/{split} [{policy.name}]"
    with phase(f"{label}: sampling", len(items) * settings.samples, "samples"):
        attempts = policy.attempts(items, settings)
    with phase(f"{label}: checking", len(items), "theorems") as checking:
        checks = check_attempts(items, attempts, policy, checker, timeout_s, checking.advance)
    records = []
    statuses: collections.Counter[str] = collections.Counter()
    for item, row, answers in zip(items, checks, attempts, strict=True):
        status = tuple(
            "format" if c is None else ("context" if "context" in c.raw else c.status) for c in row
        )
        statuses.update(status)
        correct = tuple(c is not None and c.passed for c in row)
        records.append(
            ProblemRecord(
                item.id,
                None,
                len(row),
                sum(correct),
                correct,
                finish=tuple(a.finish for a in answers),
                statuses=status,
            )
        )
    counts = [(r.n, r.c) for r in records]
    budget = ProofBudget(
        settings.samples, None if policy.deterministic else settings.max_new_tokens, timeout_s
    )
    excluded = excluded or {}
    proved = sum(r.c > 0 for r in records)
    extra = {
        "label": f"{bench}/{split} [{policy.name}]",
        "split": split,
        "prover": policy.name,
        "budget": budget.as_dict(),
        "budget_text": budget.describe(),
        "theorems": published if published is not None else len(items) + len(excluded),
        "proved": proved,
        "excluded": {"rule": rule, "count": len(excluded), "items": dict(sorted(excluded.items()))},
        "statuses": dict(statuses.most_common()),
    }
    format_rate = (
        None if policy.deterministic else share_of([[c is not None for c in r] for r in checks], 0)
    )
    truncated = (
        None
        if policy.deterministic
        else share_of([[f == "length" for f in r.finish] for r in records], settings.seed)
    )
    return BenchmarkResult(
        bench,
        data_source,
        settings,
        tuple(records),
        summarize(counts, settings.ks, settings.seed),
        format_rate,
        truncated,
        time.perf_counter() - started,
        "the coq environments' prompt: context and statement, proof in a ```coq block"
        if not policy.deterministic
        else f"baseline script: {policy.name}",
        extra,
    )


def baseline_table(results: Sequence[BenchmarkResult]) -> Any:
    """A rich table: prover → theorems proved of the benchmark's count, share with its 95%
    interval, wall seconds, budget."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="classical provers: theorems proved (one script each)")
    for col in ("benchmark", "prover", "proved", "of", "share", "95% CI", "seconds", "budget"):
        table.add_column(col, no_wrap=True)
    for res in results:
        est = res.metrics["pass@1"]
        table.add_row(
            f"{res.name}/{res.extra.get('split', '')}",
            escape(str(res.extra.get("prover", ""))),
            str(res.extra.get("proved", "")),
            str(res.extra.get("theorems", "")),
            f"{est.value:.3f}",
            f"{est.low:.3f}-{est.high:.3f}",
            f"{res.seconds:.0f}",
            str(res.extra.get("budget_text", "")),
        )
    return table


__all__ = [
    "Attempt",
    "BaselinePolicy",
    "ModelPolicy",
    "ProofBudget",
    "ProofPolicy",
    "baseline_policies",
    "baseline_table",
    "check_attempts",
    "run_proofs",
]
