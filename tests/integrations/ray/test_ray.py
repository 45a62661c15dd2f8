"""The Ray backend on a local Ray started by the test (2 CPUs), shut down after.

- the ``ray`` executor: same verdicts as inline; a verifier actor killed mid-batch (or hung
  past its deadline) costs its calls timeout verdicts and is replaced; proofs are checked by
  the actors' own Coq pools;
- the ``ray`` placement (verifier actor, an ``hf`` replica, a 2-rank gloo learner group): the
  first step's loss, grad norm and rollouts equal the local backend's;
- a learner rank lost mid-step fails the step with WorkerLostError and the run resumes from
  its last checkpoint; so does a rollout replica killed mid-run on the ray-async backend, to
  the uninterrupted run's weights;
- the driver of an asynchronous run (k = 1, 2) SIGKILLed at random moments and resumed each
  time: its ledger says lost 0, trained twice 0, its final weights are the uninterrupted
  run's, and Ray reclaims every killed driver's actors;
- nothing is left running after ``ray.shutdown()``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

ray = pytest.importorskip(
    "ray", reason="the Ray backend needs ray==2.60.0 (pip install 'verirl[ray]')"
)
psutil = pytest.importorskip("psutil", reason="checking for leftover processes needs psutil")

from tests.backends.test_async_resume import _check, _drive  # noqa: E402
from tests.integrations.ray.helpers import fail, sleep_then_echo  # noqa: E402
from tests.provers.coq.marks import needs_coq  # noqa: E402
from tests.tiny_run import tiny_run  # noqa: E402
from verirl.config import load_config  # noqa: E402
from verirl.envs import get_env  # noqa: E402
from verirl.errors import WorkerLostError  # noqa: E402
from verirl.integrations.ray.settings import RayPoolParams  # noqa: E402
from verirl.provers.settings import Provers, ProversConfig  # noqa: E402
from verirl.train.metrics import read_metrics  # noqa: E402
from verirl.verification.batch import BatchVerifier  # noqa: E402
from verirl.verification.executors import EXECUTORS, InlineExecutor  # noqa: E402

pytestmark = pytest.mark.ray
ROOT = Path(__file__).resolve().parents[3]


def _descendants() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True)}


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    os.environ["RAY_AUTH_MODE"] = "disabled"
    before = _descendants()
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    started = _descendants() - before
    assert started, "ray.init should have started its processes"
    yield
    started |= _descendants() - before  # workers and actors started since
    ray.shutdown()
    deadline = time.time() + 30
    alive = started
    while time.time() < deadline:
        alive = {p for p in started if psutil.pid_exists(p) and _running(p)}
        if not alive:
            break
        time.sleep(0.5)
    assert not alive, f"left running after ray.shutdown(): {sorted(alive)}"


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _pool(**kw: object) -> object:
    return EXECUTORS.get("ray").build(RayPoolParams(**kw))  # type: ignore[arg-type]


# ---- importing verirl never imports Ray ---------------------------------------------------
def test_importing_verirl_and_configuring_the_ray_placement_do_not_import_ray() -> None:
    """The ray placement and executor are found by their entry point and checked against
    their params without Ray itself."""
    code = (
        "import sys, verirl, verirl.cli, verirl.trainer, verirl.verification.executors\n"
        "from verirl.assembly import load_config\n"
        "cfg = load_config(None, ['run.placement.name=ray', "
        "'run.placement.params.learner.workers=2'])\n"
        "assert 'ray' in verirl.verification.executors.EXECUTORS.names()\n"
        "print('ray' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'src'}"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"


@pytest.mark.slow
def test_a_local_training_step_does_not_import_ray(tiny_model_dir: Path, tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from verirl.assembly import build, load_config\n"
        "from verirl.trainer import Trainer\n"
        f"cfg = load_config(None, {_overrides(tiny_model_dir, tmp_path / 'r', 1)!r})\n"
        f"with Trainer(build(cfg), Path({str(tmp_path / 'r')!r})) as t:\n"
        "    t.train_step()\n"
        "print('ray' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'src'}"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "False"


# ---- the executor -------------------------------------------------------------------------
@pytest.mark.slow
def test_ray_executor_gives_the_inline_verdicts_and_reports_errors(local_ray: None) -> None:
    env = get_env("addition")
    problems = [env.generate(1, s) for s in range(6)]
    texts = [f"\\boxed{{{p.answer}}}" if i % 2 else "no answer" for i, p in enumerate(problems)]
    with _pool(actors=2, num_cpus=0.5) as ex:  # type: ignore[attr-defined]
        got = BatchVerifier(ex, None, 10.0).verify(problems, texts)
        want = BatchVerifier(InlineExecutor(), None, 10.0).verify(problems, texts)
        assert [v.reward for v in got] == [v.reward for v in want]  # type: ignore[union-attr]
        assert [v.correct for v in got] == [i % 2 == 1 for i in range(6)]  # type: ignore[union-attr]
        errors = ex.map(fail, ["a", "b"], 5.0)
        assert [o.error for o in errors] == ["ValueError: bad item a", "ValueError: bad item b"]
        assert not any(o.timed_out for o in errors)


@pytest.mark.slow
def test_an_actor_killed_mid_batch_costs_timeouts_and_is_replaced(local_ray: None) -> None:
    with _pool(actors=2, num_cpus=0.5, grace_s=30.0) as ex:  # type: ignore[attr-defined]
        pids = ex.actor_pids()
        victim = pids[0]
        items = [(4.0, f"x{i}") for i in range(4)]  # 2 actors × 2 rounds of 4 s each

        def kill_soon() -> None:
            time.sleep(1.5)
            os.kill(victim, signal.SIGKILL)

        killer = threading.Thread(target=kill_soon)
        killer.start()
        t0 = time.monotonic()
        outcomes = ex.map(sleep_then_echo, items, timeout_s=60.0)
        killer.join()
        # the dead actor was noticed, not waited out: before its call's 60 s deadline
        assert time.monotonic() - t0 < 60.0
        lost = [o for o in outcomes if o.timed_out]
        done = [o for o in outcomes if o.ok]
        assert len(lost) == 1 and "died" in (lost[0].error or "")
        assert len(done) == 3
        assert all(o.value[1] != victim for o in done)  # type: ignore[index]
        assert {o.value[0] for o in done} == {f"x{i}" for i in range(4)} - {  # type: ignore[index]
            f"x{i}" for i, o in enumerate(outcomes) if o.timed_out
        }
        assert ex.restarts == 1
        new_pids = ex.actor_pids()
        assert victim not in new_pids and pids[1] in new_pids
        again = ex.map(sleep_then_echo, [(0.0, "y")] * 3, timeout_s=30.0)
        assert [o.value[0] for o in again] == ["y"] * 3  # type: ignore[index]


@pytest.mark.slow
def test_a_hung_actor_is_killed_after_its_deadline_and_grace(local_ray: None) -> None:
    # A wide grace (4 s) against a 1.5 s late call: on a loaded machine Ray's own overhead
    # took the late call past a 1 s grace and counted it as hung.
    with _pool(actors=1, num_cpus=0.5, grace_s=4.0) as ex:  # type: ignore[attr-defined]
        first = ex.actor_pids()[0]
        t0 = time.monotonic()
        outcomes = ex.map(sleep_then_echo, [(60.0, "stuck"), (0.0, "next")], timeout_s=1.0)
        elapsed = time.monotonic() - t0
        # stopped, not waited for: before the stuck call's own 60 s were up
        assert elapsed < 60.0, elapsed
        assert outcomes[0].timed_out and "hung" in (outcomes[0].error or "")
        assert outcomes[1].ok and outcomes[1].value[0] == "next"  # type: ignore[index]
        assert ex.restarts == 1 and ex.actor_pids()[0] != first
        late = ex.map(sleep_then_echo, [(1.5, "late")], timeout_s=1.0)  # back before grace
        assert late[0].timed_out and ex.restarts == 1


@pytest.mark.slow
@needs_coq
def test_proofs_are_checked_by_the_actors_coq_pools(local_ray: None) -> None:
    env = get_env("coq_proofs")
    problems = [env.generate(0, s) for s in range(4)]
    texts = [
        p.answer if i % 2 == 0 else "```coq\nProof. idtac. Qed.\n```"
        for i, p in enumerate(problems)
    ]
    cfg = ProversConfig.model_validate({"coq": {"workers": 1}})
    with _pool(actors=2, num_cpus=0.5) as ex, Provers(cfg) as here:  # type: ignore[attr-defined]
        got = BatchVerifier(ex, here, 10.0).verify(problems, texts)
        assert here._checkers == {}  # nothing was checked in this process
        assert [v.correct for v in got] == [True, False, True, False]  # type: ignore[union-attr]
        want = BatchVerifier(InlineExecutor(), here, 10.0).verify(problems, texts)
        assert [v.reward for v in got] == [v.reward for v in want]  # type: ignore[union-attr]


# ---- the loop on Ray ----------------------------------------------------------------------
def _overrides(model_dir: Path, run_dir: Path, steps: int) -> list[str]:
    return tiny_run(model_dir, run_dir, steps)


RAY = [
    "run.placement.name=ray",
    "run.placement.params.verifiers.actors=1",
    "run.placement.params.verifiers.num_cpus=0.25",
    "run.placement.params.rollout.workers=1",
    "run.placement.params.rollout.num_cpus=0.25",
    "run.placement.params.learner.workers=2",
    "run.placement.params.learner.num_cpus=0.5",
]


def test_a_replica_whose_engine_copy_did_not_load_reports_a_mismatch(
    tiny_model_dir: Path,
) -> None:
    """The replica's check reads an engine's own copy back (vLLM's worker, through its
    ``weights_mismatch``): weights that reached the policy but not the engine are a
    ``sync/mismatch`` of 1.0, caught before the replica samples with them."""
    from verirl.integrations.ray.learner import trainable_state
    from verirl.integrations.ray.rollout import RolloutReplica
    from verirl.models import load_policy

    class Engine:
        def __init__(self) -> None:
            self.stale: list[str] = []

        def sync_weights(self) -> None: ...

        def weights_mismatch(self, model: torch.nn.Module) -> list[str]:
            return self.stale

    replica = RolloutReplica.__new__(RolloutReplica)  # without Ray: the check alone
    replica.model = load_policy(str(tiny_model_dir))[0]
    replica.engine = engine = Engine()  # type: ignore[assignment]
    weights = trainable_state(replica.model)
    assert replica.load_weights(weights) == 0.0
    engine.stale = ["model.embed_tokens.weight"]
    assert replica.load_weights(weights) == 1.0


@pytest.mark.slow
def test_the_loop_on_ray_reproduces_the_local_first_step(
    local_ray: None, tiny_model_dir: Path, tmp_path: Path
) -> None:
    from verirl.assembly import build
    from verirl.trainer import Trainer

    steps = {}
    for backend in ("local", "ray"):
        extra = RAY if backend == "ray" else []
        cfg = load_config(None, _overrides(tiny_model_dir, tmp_path / backend, 1) + extra)
        with Trainer(build(cfg), tmp_path / backend) as t:
            m = t.train_step()
            steps[backend] = (m, [r.response_ids for r in t.last_rollouts])
    (local, local_ids), (on_ray, ray_ids) = steps["local"], steps["ray"]
    assert ray_ids == local_ids  # the replica sampled what the local engine sampled
    assert local["train/grad_norm"] > 0
    for k in ("train/loss", "train/grad_norm", "rollout/reward"):
        assert on_ray[k] == pytest.approx(local[k], rel=1e-4, abs=1e-6), k
    assert on_ray["ray/weight_sync_mb"] > 0
    assert 0 < on_ray["ray/weight_sync_s"] <= on_ray["time/train_s"]  # a part of the update
    assert "ray/weight_sync_s" not in local


@pytest.mark.slow
def test_a_lost_learner_fails_the_step_and_the_run_resumes(
    local_ray: None, tiny_model_dir: Path, tmp_path: Path
) -> None:
    from verirl.assembly import build
    from verirl.trainer import Trainer

    run = tmp_path / "run"
    cfg = load_config(None, _overrides(tiny_model_dir, run, 1) + RAY)
    with Trainer(build(cfg), run) as t:
        t.fit()  # step 1, checkpoint-000001
        os.kill(t.parts.learner.pids()[1], signal.SIGKILL)  # type: ignore[attr-defined]
        with pytest.raises(WorkerLostError, match="resume"):
            t.train_step()
    assert [r["step"] for r in read_metrics(run)] == [1]
    cfg2 = load_config(None, _overrides(tiny_model_dir, run, 2) + RAY)
    with Trainer(build(cfg2), run) as t2:
        assert t2.resume() and t2.step == 1
        restored = dict(t2.parts.model.named_parameters())
        for replica in t2.parts.engine.replica_weights():  # type: ignore[attr-defined]
            assert all(torch.equal(w, restored[n].detach()) for n, w in replica.items())
        t2.fit()
        assert t2.step == 2
    assert [r["step"] for r in read_metrics(run)] == [1, 2]


@pytest.mark.slow
@pytest.mark.coq
@needs_coq
def test_async_on_ray_replicas_run_one_version_ahead_of_the_learner_group(
    local_ray: None, tiny_model_dir: Path, tmp_path: Path
) -> None:
    """The ray placement with max_staleness=1 and process-verified (Coq) collection:
    the replica samples batch i with version max(0, i − 1) while the learner group trains,
    every sync is checked, nothing is dropped, the verifier actors' Coq pools check every
    proof (the driver starts no checker), and after the run the replica holds the final
    weights."""
    from verirl.assembly import build
    from verirl.trainer import Trainer

    run_dir = tmp_path / "ray-async"
    cfg = load_config(
        None,
        [
            *[o for o in _overrides(tiny_model_dir, run_dir, 3) if "plugin_rewards" not in o],
            *[o for o in RAY if not o.startswith("run.placement.params.learner.workers")],
            "run.placement.params.learner.workers=1",
            "run.schedule.name=bounded_staleness",
            "run.schedule.params.max_staleness=1",
            # a proof Coq accepts and one it rejects (a random model writes neither)
            "run.plugins=[tests.train.plugin_engines]",
            "rollout.engine.name=test_fixed_text",
            "rollout.engine.params={texts: ['```coq\nProof. reflexivity. Qed.\n```', "
            "'```coq\nProof. idtac. Qed.\n```']}",
            "curriculum.environments=[coq_proofs]",
            "reward.name=env",
            "credit.name=process",
            "optim.old_logprobs=recompute",
            "provers.coq.workers=1",
        ],
    )
    with Trainer(build(cfg), run_dir) as t:
        t.fit()
        assert (t.parts.backend.name, t.parts.schedule.name) == ("ray", "bounded_staleness")
        assert t.parts.verifiers.provers.started == []  # every proof was checked by the actors
        rollouts = t.last_rollouts
        replica = t.parts.engine.replica_weights()[0]  # type: ignore[attr-defined]
        final = {n: p.detach() for n, p in t.parts.model.named_parameters() if p.requires_grad}
    rows = read_metrics(run_dir)
    assert [r["async/staleness_max"] for r in rows] == [0.0, 1.0, 1.0]
    assert all(r["async/dropped"] == 0 and r["sync/mismatch"] == 0 for r in rows)
    assert all(r["reward/verified"] == 12 for r in rows)  # 3 prompts × 4
    assert {r.verdict.correct for r in rollouts if r.verdict} == {True, False}
    assert any(r["train/grad_norm"] > 0 for r in rows)
    assert all(torch.equal(replica[n], final[n]) for n in final)


@pytest.mark.slow
def test_async_k0_on_ray_equals_the_synchronous_ray_loop(
    local_ray: None, tiny_model_dir: Path, tmp_path: Path
) -> None:
    """max_staleness=0 on Ray: the producer thread waits for every update, so the replica
    samples from the same weights in the same order — the same rollouts, metrics and final
    weights as the synchronous Ray loop."""
    from verirl.assembly import build
    from verirl.trainer import Trainer

    runs = {}
    for name, extra in (
        ("sync", []),
        ("k0", ["run.schedule.name=bounded_staleness", "run.schedule.params.max_staleness=0"]),
    ):
        run_dir = tmp_path / name
        cfg = load_config(
            None,
            [
                *_overrides(tiny_model_dir, run_dir, 2),
                *[o for o in RAY if not o.startswith("run.placement.params.learner.workers")],
                "run.placement.params.learner.workers=1",
                *extra,
            ],
        )
        with Trainer(build(cfg), run_dir) as t:
            t.fit()
            weights = {n: p.detach().clone() for n, p in t.parts.model.named_parameters()}
        volatile = ("time/", "async/", "sync/", "ray/", "throughput/tokens_per_s", "memory/")
        rows = [
            {k: v for k, v in r.items() if k != "time" and not k.startswith(volatile)}
            for r in read_metrics(run_dir)
        ]
        runs[name] = (rows, weights)
    (sync_rows, sync_w), (k0_rows, k0_w) = runs["sync"], runs["k0"]
    assert len(sync_rows) == 2 and any(r["train/grad_norm"] > 0 for r in sync_rows)
    assert k0_rows == sync_rows
    assert all(torch.equal(sync_w[n], k0_w[n]) for n in sync_w)


@pytest.mark.slow
def test_async_on_ray_a_replica_killed_mid_run_resumes_from_its_checkpoint(
    local_ray: None, tiny_model_dir: Path, tmp_path: Path
) -> None:
    """kill -9 of the rollout replica mid-run on the ray-async backend: the run stops with
    WorkerLostError (no hang, nothing half-saved), and resuming from the newest checkpoint ends
    where an uninterrupted run does: the same steps, metrics and weights. (k = 0 here; k = 1
    and 2, the driver killed instead: the kill sweeps below.)"""
    from verirl.assembly import build
    from verirl.trainer import Trainer

    def cfg(run_dir: Path) -> object:
        return load_config(
            None,
            [
                *_overrides(tiny_model_dir, run_dir, 3),
                *[o for o in RAY if not o.startswith("run.placement.params.learner.workers")],
                "run.placement.params.learner.workers=1",
                "run.schedule.name=bounded_staleness",
                "run.schedule.params.max_staleness=0",
                "run.keep_checkpoints=5",
            ],
        )

    def weights(t: Trainer) -> dict[str, torch.Tensor]:
        return {n: p.detach().clone() for n, p in t.parts.model.named_parameters()}

    straight = tmp_path / "straight"
    with Trainer(build(cfg(straight)), straight) as t:  # type: ignore[arg-type]
        t.fit()
        want = weights(t)

    run = tmp_path / "killed"

    def kill_at_step_2(step: int, metrics: object) -> None:
        if step == 2:
            os.kill(t.parts.engine.pids()[0], signal.SIGKILL)  # type: ignore[attr-defined]

    with Trainer(build(cfg(run)), run) as t, pytest.raises(WorkerLostError):  # type: ignore[arg-type]
        t.fit(progress=kill_at_step_2)
    saved = sorted(p.name for p in run.glob("checkpoint-*"))
    assert saved and saved[-1] in ("checkpoint-000001", "checkpoint-000002"), saved
    with Trainer(build(cfg(run)), run) as t:  # type: ignore[arg-type]
        assert t.resume() and t.step == int(saved[-1][-6:])
        t.fit()
        assert t.step == 3
        got = weights(t)
    assert all(torch.equal(want[n], got[n]) for n in want)
    volatile = ("time/", "async/", "sync/", "ray/", "throughput/tokens_per_s", "memory/")

    def rows(run_dir: Path) -> dict[int, dict[str, object]]:
        out = {}
        for r in read_metrics(run_dir):  # a resumed step's row replaces the lost one's
            out[r["step"]] = {
                k: v for k, v in r.items() if k != "time" and not k.startswith(volatile)
            }
        return out

    assert rows(run) == rows(straight)


def _kill_sweep(
    model_dir: Path, root: Path, ks: list[int], kills: int, *args: str, timeout: float = 1500
) -> dict[str, Any]:
    """``tests/backends/kill_driver.py --ray KILLS`` at each staleness of ``ks``, every run a
    fresh `python -m verirl.cli train` on the ray placement joining this test's Ray."""
    address = ray.get_runtime_context().gcs_address
    report = _drive(
        model_dir, root, "--ks", *map(str, ks), "--kills", "0", "--ray", str(kills), *args,
        "--ray-address", address, timeout=timeout,
    )  # fmt: skip
    _check(report, {f"ray-k{k}": kills for k in ks})
    return report


@pytest.mark.slow
@pytest.mark.test_all  # ./run.sh test-all: a Ray start costs 15-18 s, the suite's budget is 25 min
def test_async_on_ray_a_driver_killed_at_a_random_moment_resumes_losing_nothing(
    local_ray: None, tiny_model_dir: Path, tmp_path: Path
) -> None:
    """The driver of an asynchronous run on the ray placement (k = 2: a producer thread
    steering a rollout replica and a verifier actor, a one-actor learner group, a checkpoint
    every step holding the two batches produced ahead) SIGKILLed at a random moment and
    resumed: its ledger says lost 0, trained twice 0 and it ends with the uninterrupted Ray
    run's weights, bit for bit; Ray reclaims the dead driver's actors (every CPU free again)
    before the resume. One kill (each Ray run starts in ~15 s here), in test_all beside the
    twenty-kill sweep at k = 1 and 2 below; the suite's stand-in is the local kill test."""
    _kill_sweep(tiny_model_dir, tmp_path, [2], 1, "--steps", "3")


@pytest.mark.slow
@pytest.mark.test_all  # ./run.sh test-all; the local kill test is its stand-in in ./run.sh test
def test_async_on_ray_twenty_driver_kills_per_staleness_lose_nothing(
    local_ray: None, tiny_model_dir: Path, tmp_path: Path
) -> None:
    """Twenty SIGKILLs per staleness of the Ray run's driver, k = 1 (a checkpoint every other
    step) and k = 2 (one every step), as above."""
    _kill_sweep(tiny_model_dir, tmp_path, [1, 2], 20, timeout=3600)


@pytest.mark.slow
@pytest.mark.vllm
@pytest.mark.parametrize("k", [None, 1], ids=["sync", "async-k1"])
def test_vllm_replicas_on_ray_sample_and_hold_every_synced_version(
    local_ray: None, tmp_path: Path, k: int | None
) -> None:
    """``rollout.engine.name=vllm`` in the Ray rollout replica, synchronous and with
    ``max_staleness=1``: the replica's vLLM samples, loads every published version
    (``sync/mismatch`` 0: vLLM's own copy is read back at every load), and after the run
    holds the learner's final weights."""
    from tests.vllm_support import VLLM_TRAINING, peaked_model_dir, require_vllm
    from verirl.assembly import build
    from verirl.trainer import Trainer

    require_vllm()
    model_dir = peaked_model_dir(tmp_path / "model")
    run_dir = tmp_path / "run"
    cfg = load_config(
        None,
        [
            f"model.name={model_dir}",
            f"run.dir={run_dir.parent}",
            f"run.name={run_dir.name}",
            "run.steps=3",
            "run.save_every=0",
            "run.threads=1",
            "run.plugins=[tests.train.plugin_vllm]",
            *VLLM_TRAINING,
            *[o for o in RAY if not o.startswith("run.placement.params.learner.workers")],
            "run.placement.params.learner.workers=1",
            *(
                []
                if k is None
                else [
                    "run.schedule.name=bounded_staleness",
                    f"run.schedule.params.max_staleness={k}",
                ]
            ),
        ],
    )
    with Trainer(build(cfg), run_dir) as t:
        t.fit()
        assert t.parts.backend.name == "ray"
        assert t.parts.schedule.name == ("synchronous" if k is None else "bounded_staleness")
        replica = t.parts.engine.replica_weights()[0]  # type: ignore[attr-defined]
        final = {n: p.detach() for n, p in t.parts.model.named_parameters() if p.requires_grad}
        samples = [len(r.response_ids) for r in t.last_rollouts]
        t.parts.engine.sync_weights()  # the final weights again: vLLM's copy is read back
        assert t.parts.engine.metrics()["sync/mismatch"] == 0.0  # type: ignore[attr-defined]
    rows = read_metrics(run_dir)
    assert [r["step"] for r in rows] == [1, 2, 3]
    assert all(r["train/grad_norm"] > 0 for r in rows)
    assert all(r.get("sync/mismatch", 0.0) == 0.0 for r in rows)
    if k is not None:
        assert [r["async/staleness_max"] for r in rows] == [0.0, 1.0, 1.0]
        assert all(r["async/dropped"] == 0 for r in rows)
    assert samples and all(n > 0 for n in samples)
    assert all(torch.equal(replica[n], final[n]) for n in final)
