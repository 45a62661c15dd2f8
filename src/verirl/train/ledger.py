"""The run's ledger: every problem the curriculum issued, and what became of it.

``ledger.jsonl`` in the run directory is appended to by the learner and by the rollout
producer (this process, the asynchronous producer's process, or the Ray driver's producer
thread), one JSON object per line, each line one ``write(2)`` on a file opened with
``O_APPEND``: a SIGKILL lands before or after a line, never inside one (a torn last line from
a full disk is skipped by the reader). The records:

- ``start`` ``{step, restored}`` (learner): the run starts — fresh at step 0, or resumed from
  the checkpoint of ``step``; ``restored``: the batches produced before that checkpoint, not
  yet trained on, that it holds (:mod:`verirl.backends.schedules`) and that are trained from
  it, not produced again;
- ``issued`` ``{batch, groups}`` (producer): the curriculum handed out problems for batch
  ``batch``, as ``[group id, "env:difficulty:seed"]`` pairs; written before generation
  starts, once per sampling round (DAPO refills issue more);
- ``trained`` ``{step, version, groups, filtered}`` (learner): the update of step ``step``
  trained on ``groups``, sampled by policy ``version``; ``filtered``: the batch's other
  groups, which dynamic sampling left out on purpose;
- ``checkpoint`` ``{step, buffered}`` (learner): checkpoint ``step`` is on disk and holds the
  batches ``buffered``;
- ``dropped`` ``{batch, groups, why}`` (learner): a produced batch the schedule could not
  train on (counted in ``async/dropped``);
- ``end`` ``{step}`` (learner): the run finished its steps.

A resume undoes what the killed process did after its checkpoint: :func:`audit` replays the
records and takes, from each start, only the updates before the next start's step — the
*lineage* the final weights descend from. Group ids are the producer's issue counter
(``next_group``, restored with the checkpoint), so a problem issued again after a resume
carries the same id; the audit checks that every issued group is, in the lineage, trained
exactly once or filtered once, and that an id issued twice named the same problem both times.
"""

from __future__ import annotations

import json
import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from verirl.types import Problem, Rollout

LEDGER = "ledger.jsonl"


def problem_key(problem: Problem) -> str:
    """A problem's identity in the ledger: ``env:difficulty:seed`` (its generator's inputs)."""
    return f"{problem.env}:{problem.difficulty}:{problem.seed}"


class Ledger:
    """Appends records to ``path`` (see the module docstring); ``Ledger(None)`` records
    nothing. Picklable: it holds the path only, so it travels to a producer process."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    def append(self, event: str, **fields: Any) -> None:
        if self.path is None:
            return
        line = json.dumps({"event": event, **fields}, separators=(",", ":")) + "\n"
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
        try:
            fd = os.open(self.path, flags, 0o644)
        except FileNotFoundError:  # the run directory is made by the first writer
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, flags, 0o644)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)

    # ---- the records ---------------------------------------------------------------------
    def start(self, step: int, restored: Sequence[int]) -> None:
        self.append("start", step=step, restored=list(restored))

    def issued(self, batch: int, first_group: int, problems: Sequence[Problem]) -> None:
        groups = [[first_group + j, problem_key(p)] for j, p in enumerate(problems)]
        self.append("issued", batch=batch, groups=groups)

    def trained(
        self, step: int, version: int, trained: Iterable[Rollout], generated: Iterable[Rollout]
    ) -> None:
        kept = sorted({r.group for r in trained})
        filtered = sorted({r.group for r in generated} - set(kept))
        self.append("trained", step=step, version=version, groups=kept, filtered=filtered)

    def checkpoint(self, step: int, buffered: Sequence[int]) -> None:
        self.append("checkpoint", step=step, buffered=list(buffered))

    def dropped(self, batch: int, rollouts: Iterable[Rollout], why: str) -> None:
        groups = sorted({r.group for r in rollouts})
        self.append("dropped", batch=batch, groups=groups, why=why)

    def end(self, step: int) -> None:
        self.append("end", step=step)


def read_ledger(path: Path) -> Iterator[dict[str, Any]]:
    """The records of ``path`` in order; a torn last line (no newline, or not JSON) is
    skipped. A damaged line elsewhere raises ValueError naming its number."""
    if not path.exists():
        return
    lines = path.read_bytes().split(b"\n")
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except ValueError:
            if number == len(lines):  # the last line, without its newline: a torn write
                return
            raise ValueError(f"{path}: line {number} is not a ledger record") from None
        if not isinstance(record, dict) or "event" not in record:
            raise ValueError(f"{path}: line {number} is not a ledger record")
        yield record


@dataclass(frozen=True)
class LedgerAudit:
    """What became of every problem a run issued (:func:`audit`).

    - ``issued``: distinct group ids the curriculum handed out (each one problem);
    - ``trained`` / ``filtered``: of those, trained once / left out by dynamic sampling once,
      in the lineage;
    - ``reissued``: group ids handed out more than once — after a resume rolled their first
      issue back — each time naming the same problem;
    - ``restored``: batches a resume took from its checkpoint instead of producing again;
    - ``retrained``: updates undone by a resume (the killed process trained past its last
      checkpoint) and done again;
    - ``pending``: issued, not yet trained, in a run that has not ended (0 once it ended);
    - ``lost``: issued but neither trained nor filtered (nor pending);
    - ``trained_twice``: trained (or filtered) in two updates of the lineage;
    - ``changed``: one group id issued as two different problems;
    - ``unrecorded``: trained but never recorded as issued;
    - ``dropped``: groups the schedule produced and could not train on;
    - ``resumes``: how many times the run started again; ``ended``: whether it finished.
    """

    issued: int
    trained: int
    filtered: int
    reissued: int
    restored: int
    retrained: int
    pending: int
    lost: int
    trained_twice: int
    changed: int
    unrecorded: int
    dropped: int
    resumes: int
    ended: bool

    @property
    def clean(self) -> bool:
        """Nothing lost, nothing trained twice, no id naming two problems, nothing unrecorded."""
        return not (self.lost or self.trained_twice or self.changed or self.unrecorded)

    def line(self) -> str:
        """One line for run.log: ``ledger: issued 24, trained 24, … lost 0, trained twice 0``."""
        return (
            f"ledger: issued {self.issued}, trained {self.trained}, filtered {self.filtered}, "
            f"re-issued {self.reissued} (after {self.resumes} resume(s); {self.restored} "
            f"batch(es) restored from checkpoints, {self.retrained} update(s) redone), "
            f"pending {self.pending}, dropped {self.dropped}, lost {self.lost}, "
            f"trained twice {self.trained_twice}, changed {self.changed}, "
            f"unrecorded {self.unrecorded}"
        )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def audit(records: Iterable[dict[str, Any]]) -> LedgerAudit:
    """Replay a ledger's records (see the module docstring and :class:`LedgerAudit`)."""
    problems: dict[int, set[str]] = defaultdict(set)  # group id → the problems it named
    issues: Counter[int] = Counter()  # group id → how many times it was issued
    issued_in: dict[int, int] = {}  # group id → the batch it was (last) issued for
    segments: list[tuple[int, list[dict[str, Any]]]] = []  # (start step, trained records)
    restored = dropped = 0
    ended_at: int | None = None
    for r in records:
        event = r["event"]
        if event == "start":
            segments.append((int(r["step"]), []))
            restored += len(r.get("restored", ()))
            ended_at = None
        elif event == "issued":
            for group, key in r["groups"]:
                problems[int(group)].add(str(key))
                issues[int(group)] += 1
                issued_in[int(group)] = int(r["batch"])
        elif event == "trained":
            if not segments:  # a ledger without its start record: count from step 0
                segments.append((0, []))
            segments[-1][1].append(r)
        elif event == "dropped":
            dropped += len(r["groups"])
        elif event == "end":
            ended_at = int(r["step"])
    # the lineage: from each segment, the updates before any later segment's start
    lineage: list[dict[str, Any]] = []
    retrained = 0
    for j, (_, trained) in enumerate(segments):
        limit = min((s for s, _ in segments[j + 1 :]), default=None)
        for t in trained:
            if limit is None or int(t["step"]) < limit:
                lineage.append(t)
            else:
                retrained += 1
    outcomes: Counter[int] = Counter()
    trained_ids: set[int] = set()
    filtered_ids: set[int] = set()
    for t in lineage:
        for g in t["groups"]:
            outcomes[int(g)] += 1
            trained_ids.add(int(g))
        for g in t.get("filtered", ()):
            outcomes[int(g)] += 1
            filtered_ids.add(int(g))
    done = 1 + max((int(t["step"]) for t in lineage), default=-1)  # updates in the lineage
    ended = ended_at is not None
    pending = lost = 0
    for g in issues:
        if outcomes[g]:
            continue
        if not ended and issued_in[g] >= done:
            pending += 1
        else:
            lost += 1
    return LedgerAudit(
        issued=len(issues),
        trained=len(trained_ids & issues.keys()),
        filtered=len(filtered_ids - trained_ids),
        reissued=sum(1 for n in issues.values() if n > 1),
        restored=restored,
        retrained=retrained,
        pending=pending,
        lost=lost,
        trained_twice=sum(1 for n in outcomes.values() if n > 1),
        changed=sum(1 for keys in problems.values() if len(keys) > 1),
        unrecorded=sum(1 for g in outcomes if g not in issues),
        dropped=dropped,
        resumes=max(0, len(segments) - 1),
        ended=ended,
    )


def audit_run(run_dir: Path) -> LedgerAudit:
    """:func:`audit` of ``run_dir``'s ledger."""
    return audit(read_ledger(run_dir / LEDGER))


__all__ = [
    "LEDGER",
    "Ledger",
    "LedgerAudit",
    "audit",
    "audit_run",
    "problem_key",
    "read_ledger",
]
