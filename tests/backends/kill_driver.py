"""SIGKILL asynchronous training runs at random moments, resume each one every time, and
report what their ledgers say (``python -m tests.backends.kill_driver ...``).

One fresh interpreter imports torch, transformers and verirl once, loads the tokenizer once,
runs one synchronous step (so that lazy set-up is done), and then ``os.fork()``s every run
from that warm state, with no other thread running: a child runs ``verirl train`` (or
``train --resume``) as the CLI does — :func:`verirl.cli.train.train` — with one torch thread
and the producer as a thread of its own (``run.schedule.params.producer=thread``: a spawned producer
process would pay the imports again), and the driver kills it. A kill-and-resume cycle then
costs the run's own work (a tiny model: a fraction of a second to start, about half a second
a step here), not a Python start-up (5-10 s). ``--cli N`` adds N kills of ``python -m
verirl.cli train`` started afresh each time, with the producer process: the real path.
``--ray N`` adds N kills of such runs on the ``ray`` placement (a driver thread steering a
rollout replica, a verifier actor and a one-actor learner group), each run joining one Ray
cluster (``--ray-address``, else one this driver starts with 2 CPUs); after every kill the
driver waits until the cluster has all its CPUs free again — the killed driver's actors
reclaimed by Ray — before it resumes (none left after a minute: the sweep fails).

Where a kill lands: in 1 of 6 cases during start-up; otherwise the driver picks a ledger
record still to come (``issued``, ``trained``, ``checkpoint``, ``end``: the run's stages),
waits for it and kills after a random fraction of a step — inside sampling, an update, a
checkpoint write, the final export. A run resumed at its last step is killed there once at
most, then runs to its end (else most kills would land in the same final export, each
resume's). For each run: the kills, its ledger audit
(:func:`verirl.train.ledger.audit_run`) once it has been resumed to the end, and whether its
final weights equal an uninterrupted run's, bit for bit. Runs are started until ``--kills``
kills per staleness have landed. The report is JSON (``--json``, and the last stdout line)."""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

SMALL = (
    "rollout.prompts_per_step=2",
    "rollout.group_size=2",
    "rollout.max_new_tokens=4",
    "optim.minibatches=1",
    "optim.activation_checkpointing=false",
    "run.check_memory=false",
    "run.health.enabled=false",
    "run.log_samples=0",
    "run.keep_checkpoints=2",
)
RAY = (
    "run.placement.name=ray",
    "run.placement.params.verifiers.actors=1",
    "run.placement.params.verifiers.num_cpus=0.25",
    "run.placement.params.rollout.workers=1",
    "run.placement.params.rollout.num_cpus=0.25",
    "run.placement.params.learner.workers=1",
    "run.placement.params.learner.num_cpus=0.5",
)
"""The ray placement's overrides (one CPU of actors in all; ``tests/integrations/ray``'s)."""
COUNTS = (
    "issued",
    "trained",
    "reissued",
    "restored",
    "retrained",
    "resumes",
    "pending",
    "lost",
    "trained_twice",
    "changed",
    "unrecorded",
)


def overrides(
    model: Path, run_dir: Path, steps: int, k: int, producer: str, save_every: int = 1
) -> list[str]:
    """The tiny asynchronous run every kill targets (``tests/tiny_run.py``, made smaller)."""
    from tests.tiny_run import tiny_run

    return [
        *tiny_run(model, run_dir, steps, *SMALL),
        f"run.save_every={save_every}",
        "run.schedule.name=bounded_staleness",
        f"run.schedule.params={{max_staleness: {k}, producer: {producer}}}",
    ]


class Forked:
    """A run in a forked child of this (warm) process."""

    def __init__(self, args: list[str], resume: Path | None, log: Path) -> None:
        self.started = time.monotonic()
        self.code: int | None = None
        self.pid = os.fork()
        if self.pid:
            return
        code = 1
        try:  # the child: never returns
            fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            from verirl.cli.train import train

            code = train([] if resume else args, str(resume) if resume else None)
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)

    def poll(self) -> int | None:
        if self.code is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            self.code = os.waitstatus_to_exitcode(status) if pid else None
        return self.code


class Fresh:
    """A run of ``python -m verirl.cli train`` in a new interpreter."""

    def __init__(self, args: list[str], resume: Path | None, log: Path) -> None:
        from tests.tiny_run import ROOT

        self.started = time.monotonic()
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")]),
            "PYTHONWARNINGS": "ignore",
        }
        cmd = [sys.executable, "-m", "verirl.cli", "train"]
        with log.open("ab") as out:
            self.proc = subprocess.Popen(
                [*cmd, "--resume", str(resume)] if resume else [*cmd, *args],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=out,
            )
        self.pid = self.proc.pid

    def poll(self) -> int | None:
        return self.proc.poll()


LIMIT_S = 300.0  # a child that runs longer hangs: killed, and the sweep fails


def wait(child: Forked | Fresh, timeout: float | None = None) -> int | None:
    """The child's exit code (negative: the signal), or None if it still runs at ``timeout``."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        code = child.poll()
        if code is not None or (deadline is not None and time.monotonic() >= deadline):
            return code
        if time.monotonic() - child.started > LIMIT_S:
            os.kill(child.pid, signal.SIGKILL)
            raise SystemExit(f"a run hung (pid {child.pid}, over {LIMIT_S:.0f} s): see its log")
        time.sleep(0.002)


def ledger_lines(run_dir: Path) -> list[str]:
    path = run_dir / "ledger.jsonl"
    return path.read_text().splitlines() if path.exists() else []


def wait_for_line(run_dir: Path, n: int, child: Forked | Fresh) -> bool:
    """Wait until the run's ledger has ``n`` lines; False if the child ended first."""
    while len(ledger_lines(run_dir)) < n:
        if wait(child, timeout=0.002) is not None:
            return False
    return True


def wait_for_start(run_dir: Path, after: int, child: Forked | Fresh) -> tuple[int, int] | None:
    """Wait for the child's start record (after line ``after``: a killed run's producer
    process may still append a line or two); returns (its line number, its step), or None
    if the child ended first."""
    while True:
        for n, line in enumerate(ledger_lines(run_dir)[after:], after + 1):
            record = json.loads(line)
            if record["event"] == "start":
                return n, int(record["step"])
        if wait(child, timeout=0.002) is not None:
            return None


def weights(run_dir: Path) -> dict[str, Any]:
    from safetensors.torch import load_file

    return load_file(str(sorted(run_dir.glob("checkpoint-*"))[-1] / "trainable.safetensors"))


def _threads() -> int:
    """This process's threads (Linux; 1 elsewhere)."""
    return len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 1


@dataclass
class Reference:
    """An uninterrupted run: its final weights, its start-up (until the producer's first
    record), seconds per step after it, and the ledger lines it wrote."""

    weights: dict[str, Any]
    startup: float
    per_step: float
    lines: int


def uninterrupted(
    start: Callable[[list[str], Path | None, Path], Forked | Fresh],
    args_of: Callable[[Path], list[str]],
    root: Path,
    steps: int,
) -> Reference:
    root.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    straight = root / "straight"
    child = start(args_of(straight), None, root / "straight.log")
    wait_for_line(straight, 2, child)  # its start record and the producer's first
    startup = time.perf_counter() - t0
    if wait(child) != 0:
        raise SystemExit(f"the uninterrupted run failed: see {root / 'straight.log'}")
    per_step = (time.perf_counter() - t0 - startup) / steps
    return Reference(weights(straight), startup, per_step, len(ledger_lines(straight)))


def sweep(
    start: Callable[[list[str], Path | None, Path], Forked | Fresh],
    args_of: Callable[[Path], list[str]],
    root: Path,
    kills: int,
    steps: int,
    rng: random.Random,
    ref: Reference,
    startup_kills: Literal["all", "resumes", "none"],
    settle: Callable[[], float] | None = None,
) -> dict[str, Any]:
    """Kill runs ``kills`` times in all (see the module docstring); one staleness.
    ``startup_kills``: whether 1 in 6 kills lands during start-up — ``"all"``: of every
    start, ``"resumes"``: of a resume only (a fresh CLI run killed before it wrote its
    config.yaml could not be resumed), ``"none"``. ``settle``: called after every kill and
    after each run's end, before anything starts again; the seconds it waited."""
    import torch

    from verirl.train.ledger import audit_run

    root.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    startup, per_step, total_lines, reference = ref.startup, ref.per_step, ref.lines, ref.weights
    runs: list[dict[str, Any]] = []
    settled: list[float] = []
    landed = 0
    while landed < kills:
        run_dir, log = root / f"run{len(runs)}", root / f"run{len(runs)}.log"
        resume: Path | None = None
        where: list[str] = []
        finishing = False  # killed once after resuming at its last step
        while True:
            before = len(ledger_lines(run_dir))
            child = start(args_of(run_dir), resume, log)
            resume = run_dir
            if landed >= kills:  # the last resume runs to the end
                code = wait(child)
                break
            early = startup_kills == "all" or (startup_kills == "resumes" and bool(where))
            if early and rng.random() < 1 / 6:
                delay = rng.uniform(0.0, startup)
                what = "start-up"
            else:
                # a record still to come: this process's start record, then about as many
                # as an uninterrupted run writes after the step it resumes at
                started = wait_for_start(run_dir, before, child)
                if started is None:
                    code = wait(child)
                    break
                line, step = started
                if step >= steps and finishing:  # one kill in the final export is enough:
                    code = wait(child)  # the next kills go to a new run
                    break
                finishing = step >= steps
                left = max(1, round(total_lines * (steps - step) / steps))
                target = line + rng.randrange(left)
                if not wait_for_line(run_dir, target, child):
                    code = wait(child)
                    break
                record = json.loads(ledger_lines(run_dir)[target - 1])
                delay = rng.uniform(0.0, per_step / 2)
                what = f"after {record['event']} {record.get('step', record.get('batch'))}"
            code = wait(child, timeout=delay)
            if code is not None:  # it finished before the kill
                break
            os.kill(child.pid, signal.SIGKILL)
            wait(child)
            landed += 1
            where.append(f"{what} +{delay:.2f} s")
            if settle is not None:
                settled.append(settle())
        if code != 0:
            raise SystemExit(f"run {run_dir} failed ({code}): see {log}")
        if settle is not None:
            settled.append(settle())
        final = weights(run_dir)
        runs.append(
            {
                "run": run_dir.name,
                "kills": where,
                "audit": audit_run(run_dir).as_dict(),
                "weights_equal": final.keys() == reference.keys()
                and all(torch.equal(final[n], reference[n]) for n in reference),
            }
        )
    return {
        "kills": landed,
        "runs": runs,
        "totals": {key: sum(r["audit"][key] for r in runs) for key in COUNTS},
        "weights_equal": all(r["weights_equal"] for r in runs),
        "ended": all(r["audit"]["ended"] for r in runs),
        **({"settle_s_max": round(max(settled, default=0.0), 2)} if settle is not None else {}),
        "startup_s": round(startup, 2),
        "step_s": round(per_step, 3),
        "seconds": round(time.perf_counter() - t0, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--root", type=Path, required=True)
    ap.add_argument("--ks", type=int, nargs="+", default=[1, 2], help="max_staleness values")
    ap.add_argument("--kills", type=int, default=20, help="kills per staleness (forked runs)")
    ap.add_argument("--cli", type=int, default=0, help="kills per staleness of fresh CLI runs")
    ap.add_argument(
        "--ray", type=int, default=0, help="kills per staleness of fresh CLI runs on Ray"
    )
    ap.add_argument(
        "--ray-address", help="the Ray cluster they join (default: one started here, 2 CPUs)"
    )
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, help="also write the report here")
    opts = ap.parse_args()

    rng = random.Random(opts.seed)
    report: dict[str, Any] = {}
    refs = forked_sweeps(opts, rng, report) if opts.kills else {}
    for k in opts.ks if opts.cli else ():

        def fresh_args(d: Path, k: int = k) -> list[str]:
            return overrides(opts.model, d, opts.steps, k, "process", 1 + k % 2)

        # the forked runs' reference when there is one: the producer process samples what
        # the producer thread does, so the same final weights are expected
        root = opts.root / f"cli-k{k}"
        ref = refs.get(k) or uninterrupted(Fresh, fresh_args, root, opts.steps)
        report[f"cli-k{k}"] = sweep(Fresh, fresh_args, root, opts.cli, opts.steps, rng, ref, "none")
    if opts.ray:
        ray_sweeps(opts, rng, report)
    if opts.json:
        opts.json.write_text(json.dumps(report, indent=1))
    print(json.dumps(report))


def forked_sweeps(
    opts: argparse.Namespace, rng: random.Random, report: dict[str, Any]
) -> dict[int, Reference]:
    """``opts.kills`` kills per staleness of runs forked from this process, warmed up first;
    the uninterrupted runs' references by staleness."""
    # no thread may run in the driver when it forks: one torch thread, no tokenizers pool,
    # no tqdm monitor; and no lock shared across processes: tqdm's default write lock is
    # one (a child killed while drawing a progress bar would leave it held for every later
    # child), so every tqdm class gets a lock of its own process
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    import threading

    import torch
    import tqdm

    torch.set_num_threads(1)
    tqdm.tqdm.monitor_interval = 0
    tqdm.tqdm.set_lock(threading.RLock())
    baseline = _threads()  # importing torch starts one native thread, idle
    import verirl.models
    from verirl.cli.train import train  # imported once, before any fork

    # one tokenizer for every child (loading it costs ~1 s each time), and one synchronous
    # step here, so that the children fork from a warm process (lazy imports and first-call
    # set-up done); it leaves no thread behind
    tokenizer = verirl.models.load_tokenizer(str(opts.model))
    real_load_tokenizer = verirl.models.load_tokenizer
    verirl.models.load_tokenizer = lambda name: tokenizer  # type: ignore[assignment]
    warm = overrides(opts.model, opts.root / "warm-up", 1, 0, "thread")
    train([o for o in warm if not o.startswith("run.schedule")], None)
    deadline = time.monotonic() + 10  # a thread that is just ending may take a moment
    while _threads() > baseline and time.monotonic() < deadline:
        time.sleep(0.05)
    if _threads() > baseline:
        names = [t.name for t in threading.enumerate()]
        raise SystemExit(f"the warm-up left {_threads() - baseline} thread(s) running: {names}")

    refs: dict[int, Reference] = {}
    for k in opts.ks:
        save_every = 1 + k % 2  # k = 1: a checkpoint every other step; k = 2: every step

        def args_of(d: Path, k: int = k, s: int = save_every) -> list[str]:
            return overrides(opts.model, d, opts.steps, k, "thread", s)

        refs[k] = uninterrupted(Forked, args_of, opts.root / f"k{k}", opts.steps)
        report[f"k{k}"] = sweep(
            Forked, args_of, opts.root / f"k{k}", opts.kills, opts.steps, rng, refs[k], "all"
        )
    verirl.models.load_tokenizer = real_load_tokenizer  # type: ignore[assignment]
    return refs


SETTLE_S = 60.0  # the killed driver's actors still hold CPUs after this: the sweep fails


def ray_sweeps(opts: argparse.Namespace, rng: random.Random, report: dict[str, Any]) -> None:
    """``opts.ray`` kills per staleness of fresh CLI runs on the ray placement, every run
    joining one cluster (``opts.ray_address``, else a private one started here); each
    staleness against an uninterrupted Ray run of its own."""
    import ray

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # as verirl's own private Ray
    if opts.ray_address is None:
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    else:
        ray.init(address=opts.ray_address, log_to_driver=False)
    address = ray.get_runtime_context().gcs_address

    held: list[float] = []  # CPUs still held by actors when each settle began

    def settle() -> float:
        """Wait until no actor holds a CPU (the last run's driver is gone: Ray reclaims the
        actors of a driver that died, and a run that ended closed its own)."""
        t0 = time.monotonic()
        total = float(ray.cluster_resources().get("CPU", 0.0))
        held.append(total - float(ray.available_resources().get("CPU", 0.0)))
        while float(ray.available_resources().get("CPU", 0.0)) < total - 1e-9:
            if time.monotonic() - t0 > SETTLE_S:
                raise SystemExit(
                    f"actors of a killed or ended run still hold CPUs after {SETTLE_S:.0f} s: "
                    f"{ray.available_resources().get('CPU', 0.0)} of {total} free"
                )
            time.sleep(0.05)
        return time.monotonic() - t0

    try:
        for k in opts.ks:

            def ray_args(d: Path, k: int = k) -> list[str]:
                return [
                    *overrides(opts.model, d, opts.steps, k, "process", 1 + k % 2),
                    *RAY,
                    f"run.placement.params.address={address}",
                ]

            root = opts.root / f"ray-k{k}"
            ref = uninterrupted(Fresh, ray_args, root, opts.steps)
            settle()
            held.clear()
            report[f"ray-k{k}"] = sweep(
                Fresh, ray_args, root, opts.ray, opts.steps, rng, ref, "resumes", settle
            )
            report[f"ray-k{k}"]["held_cpus_max"] = max(held, default=0.0)
    finally:
        ray.shutdown()  # a cluster started here stops; one joined goes on


if __name__ == "__main__":
    main()
