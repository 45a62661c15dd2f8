"""Asynchronous training with bounded staleness: k = 0 is the synchronous loop bit for bit;
staleness never exceeds k; a stale engine stops the run; nothing is dropped uncounted."""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors.torch import load_file

from tests.tiny_run import tiny_run, train_cli, wait_for_step
from verirl.assembly import build
from verirl.backends import (
    Backend,
    BackendSettings,
    BoundedStaleness,
    LocalBackend,
    Schedule,
    TorchrunBackend,
    build_schedule,
    local_stream,
    placement_name,
)
from verirl.backends.schedules import WeightSyncError
from verirl.backends.staleness import WeightRing, model_checksum, version_for
from verirl.config import TrainConfig, dump_config, load_config
from verirl.device import resolve_placement
from verirl.errors import UserInputError
from verirl.models import PolicySpec
from verirl.registry import NoParams
from verirl.train.metrics import read_metrics
from verirl.train.producer import Produced, ProducerSettings, StepOutput
from verirl.trainer import Trainer

# engine/* (the sampling engine's own counters: continuous batching's joins, partial
# sequences) are compared: a producer's engine forwards them with its batch (Produced.engine)
VOLATILE = ("time/", "async/", "sync/", "memory/", "throughput/tokens_per_s")
SMALL = (
    "run.save_every=0",
    "rollout.prompts_per_step=2",
    "rollout.group_size=3",
    "rollout.max_new_tokens=8",
    "optim.minibatches=1",
)


def _overrides(model_dir: Path, run_dir: Path, steps: int = 3) -> list[str]:
    return tiny_run(model_dir, run_dir, steps, *SMALL)


def _settings(cfg: TrainConfig) -> BackendSettings:
    """A placement's settings (these tests build no learner)."""
    return BackendSettings(
        engine=cfg.rollout.engine,
        executor=cfg.verification.executor,
        plugins=(),
        seed=cfg.run.seed,
        steps=cfg.run.steps,
        threads=1,
        policy=PolicySpec.from_config(cfg),
        params=NoParams(),
    )


def _schedule(cfg: TrainConfig, backend: type[Backend] = LocalBackend) -> object:
    placement = resolve_placement("cpu", "fp32")
    producer = ProducerSettings.from_config(cfg)
    return build_schedule(cfg.run.schedule, backend(_settings(cfg), placement), producer)


def _run(model_dir: Path, run_dir: Path, *extra: str) -> list[dict[str, float]]:
    cfg = load_config(None, [*_overrides(model_dir, run_dir), *extra])
    with Trainer(build(cfg), run_dir) as t:
        t.fit()
    return read_metrics(run_dir)


def _stable(rows: list[dict[str, float]]) -> list[dict[str, float]]:
    return [
        {k: v for k, v in r.items() if k != "time" and not k.startswith(VOLATILE)} for r in rows
    ]


def _weights(run_dir: Path) -> dict[str, torch.Tensor]:
    ckpt = sorted(run_dir.glob("checkpoint-*"))[-1]
    return load_file(str(ckpt / "trainable.safetensors"))


def test_placement_and_schedule_names() -> None:
    assert placement_name("local", {}) == "local"
    assert placement_name("local", {"WORLD_SIZE": "2"}) == "torchrun"
    assert placement_name("ray", {"WORLD_SIZE": "2"}) == "ray"
    sync, k1 = (
        load_config(None, []),
        load_config(
            None, ["run.schedule.name=bounded_staleness", "run.schedule.params.max_staleness=1"]
        ),
    )
    assert type(_schedule(sync)) is Schedule
    with pytest.raises(UserInputError, match=r"does not run on placement 'torchrun'"):
        _schedule(k1, TorchrunBackend)
    assert isinstance(_schedule(k1), BoundedStaleness)
    assert "max_staleness: 1" in dump_config(k1)  # the run's config.yaml keeps the schedule


@pytest.mark.slow
def test_k0_in_a_producer_process_equals_the_synchronous_loop_bit_for_bit(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    sync = _run(tiny_model_dir, tmp_path / "sync")
    k0 = _run(
        tiny_model_dir,
        tmp_path / "k0",
        "run.schedule.name=bounded_staleness",
        "run.schedule.params.max_staleness=0",
    )
    a_rows, b_rows = _stable(k0), _stable(sync)
    diff = [
        (i, key, a.get(key), b.get(key))
        for i, (a, b) in enumerate(zip(a_rows, b_rows, strict=True))
        for key in sorted(a.keys() | b.keys())
        if a.get(key) != b.get(key)
    ]
    assert diff == []
    assert [r["async/staleness_max"] for r in k0] == [0.0, 0.0, 0.0]
    assert all("engine/joined_prompts" in r for r in k0)  # forwarded, so compared above
    a, b = _weights(tmp_path / "sync"), _weights(tmp_path / "k0")
    assert a.keys() == b.keys()
    assert all(torch.equal(a[n], b[n]) for n in a)
    # and the loop really trained (a run that changed nothing would also be "equal")
    assert any(r["train/grad_norm"] > 0 for r in sync)


def test_k1_is_one_version_stale_and_nothing_is_dropped(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    rows = _run(
        tiny_model_dir,
        tmp_path / "k1",
        "run.schedule.name=bounded_staleness",
        "run.schedule.params.max_staleness=1",
        "run.schedule.params.producer=thread",
    )
    assert [r["async/staleness_max"] for r in rows] == [0.0, 1.0, 1.0]
    assert all(r["async/dropped"] == 0 and r["sync/mismatch"] == 0 for r in rows)
    # batches arrive in order: none is ever read ahead of its step and left waiting
    assert [r["async/queue_depth"] for r in rows] == [0.0, 0.0, 0.0]
    # the wait for the producer is part of the step's rollout time
    assert all(0.0 <= r["async/learner_idle_s"] <= r["time/rollout_s"] for r in rows)


def test_a_stale_engine_is_detected_and_the_run_stops(
    tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine 'loads' version ≥ 1 without copying the weights (the weights never reached
    it): the checksum of what it holds differs from the learner's, the run stops."""
    real = local_stream.load_weights

    def stale(ring: WeightRing, model: torch.nn.Module, version: int) -> int:
        expected = real(ring, model, 0)  # keeps sampling from the initial policy
        return expected if version == 0 else int(ring.checksums[version % ring.size])

    monkeypatch.setattr(local_stream, "load_weights", stale)
    cfg = load_config(
        None,
        [
            *_overrides(tiny_model_dir, tmp_path / "stale"),
            "run.schedule.name=bounded_staleness",
            "run.schedule.params.max_staleness=1",
            "run.schedule.params.producer=thread",
        ],
    )
    with Trainer(build(cfg), tmp_path / "stale") as t, pytest.raises(WeightSyncError):
        t.fit()
    rows = read_metrics(tmp_path / "stale")
    assert rows == [] or rows[-1]["step"] < 3


def test_a_batch_staler_than_k_is_dropped_counted_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    schedule = _schedule(
        load_config(
            None, ["run.schedule.name=bounded_staleness", "run.schedule.params.max_staleness=1"]
        )
    )
    assert isinstance(schedule, BoundedStaleness)
    out = StepOutput([], [], 1)
    fresh = Produced(out, version=4)
    assert schedule._accept(5, fresh, 5) is fresh
    from verirl.types import Problem, Rollout

    problem = Problem("addition", 0, 0, "x", "1")
    rollouts = [Rollout(problem, g, (1,), (2,), (0.0,), "t", "stop") for g in (7, 7, 8)]
    old = Produced(StepOutput(rollouts, rollouts, 1), version=3)
    with caplog.at_level(logging.WARNING, logger="verirl.train"):
        assert schedule._accept(5, old, 5) is None
    assert schedule.dropped == 2  # two groups
    assert "dropped 1 produced batch(es), 2 group(s)" in caplog.text


@settings(max_examples=12, deadline=None)
@given(
    k=st.integers(min_value=0, max_value=3),
    start=st.integers(min_value=0, max_value=2),
    seed=st.integers(min_value=0, max_value=10_000),
)
def test_staleness_never_exceeds_k_under_random_timings(k: int, start: int, seed: int) -> None:
    """A producer thread and a learner with random durations through the real weight ring:
    every batch is sampled with version max(start, i − k), loaded intact, and trained at
    version i, so its staleness is min(k, i − start) ≤ k — whatever the timings."""
    rng = random.Random(seed)
    delays_p = [rng.uniform(0, 0.004) for _ in range(12)]
    delays_l = [rng.uniform(0, 0.004) for _ in range(12)]
    model = torch.nn.Linear(3, 2)
    ring = WeightRing(model, k)
    ring.publish(model, start)
    steps = start + 8
    out: queue.Queue[tuple[int, int, bool]] = queue.Queue()

    def producer() -> None:
        mine = torch.nn.Linear(3, 2)
        for i in range(start, steps):
            v = version_for(i, k, start)
            ring.wait_for(v)
            expected = ring.load(mine, v)
            time.sleep(delays_p[i - start])
            out.put((i, v, model_checksum(mine) == expected))

    worker = threading.Thread(target=producer, daemon=True)
    worker.start()
    for step in range(start, steps):
        i, v, intact = out.get(timeout=30)
        assert i == step and intact
        assert 0 <= step - v <= k
        assert step - v == min(k, step - start)
        time.sleep(delays_l[step - start])
        with torch.no_grad():
            model.weight.add_(1.0)  # an "update": version step + 1
        ring.publish(model, step + 1)
    worker.join(timeout=30)


@pytest.mark.slow
def test_a_producer_killed_mid_run_resumes_from_its_checkpoint(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    """kill -9 of the producer process (k = 1): the learner stops the step (the run exits
    non-zero), the newest checkpoint holds the learner's state, the batch produced ahead and
    the producer's state after it (nothing half-applied), and the resumed run ends where an
    uninterrupted one does, bit for bit, with nothing lost or trained twice."""
    import os
    import re
    import signal

    from verirl.train.ledger import audit_run

    extra = ["run.steps=4", "run.save_every=1", "run.keep_checkpoints=5"]
    extra += ["run.schedule.name=bounded_staleness", "run.schedule.params.max_staleness=1"]
    straight = tmp_path / "straight"
    _run(tiny_model_dir, straight, *extra)

    killed = tmp_path / "killed"
    proc = train_cli([*_overrides(tiny_model_dir, killed), *extra])
    wait_for_step(killed, 2, proc, limit=600)
    pid = int(
        re.findall(
            r"async producer started \(process, pid (\d+)\)", (killed / "run.log").read_text()
        )[0]
    )
    os.kill(pid, signal.SIGKILL)
    assert proc.wait(timeout=300) != 0
    assert "producer" in proc.stderr.read()
    done = [r["step"] for r in read_metrics(killed)]
    assert done[-1] < 4

    proc = train_cli(["--resume", str(killed)])
    assert proc.wait(timeout=600) == 0, proc.stderr.read()[-3000:]
    assert [r["step"] for r in read_metrics(killed)] == [1, 2, 3, 4]
    a, b = _weights(straight), _weights(killed)
    assert all(torch.equal(a[n], b[n]) for n in a)
    sa = torch.load(straight / "checkpoint-000004" / "state.pt", weights_only=False)
    sb = torch.load(killed / "checkpoint-000004" / "state.pt", weights_only=False)
    assert sa["curriculum"] == sb["curriculum"]
    assert sa["next_group"] == sb["next_group"] == 4 * 2
    audit = audit_run(killed)
    assert (audit.lost, audit.trained_twice, audit.changed, audit.issued) == (0, 0, 0, 4 * 2)
    assert audit.resumes == 1 and audit.ended


def test_merged_lora_weights_cover_what_the_parameters_do_not() -> None:
    """W + s·BA by hand for a PEFT LoRA layer; the scaling (not a parameter) and a disabled
    adapter change the merged checksum but not the parameters' checksum."""
    from peft import LoraConfig, get_peft_model

    from verirl.backends.staleness import engine_checksum, merged_lora_weights

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.proj = torch.nn.Linear(4, 3)

    torch.manual_seed(0)
    model = get_peft_model(Net(), LoraConfig(r=2, lora_alpha=4, target_modules=["proj"]))
    layer = model.base_model.model.proj
    with torch.no_grad():
        layer.lora_B["default"].weight.normal_()  # PEFT initialises B to zero
    merged = merged_lora_weights(model, rows=None)
    assert list(merged) == ["merged:base_model.model.proj"]
    a = layer.lora_A["default"].weight.double()
    b = layer.lora_B["default"].weight.double()
    by_hand = layer.base_layer.weight.double() + (4 / 2) * (b @ a)
    assert torch.allclose(merged["merged:base_model.model.proj"], by_hand, atol=1e-12)
    two_rows = merged_lora_weights(model, rows=2)["merged:base_model.model.proj"]
    assert torch.equal(two_rows, merged["merged:base_model.model.proj"][[0, 2]])  # first, last
    params, full = engine_checksum(model)
    assert full != 0
    layer.scaling["default"] *= 2  # adapter weights intact, merged weight wrong
    assert engine_checksum(model) == (params, engine_checksum(model)[1])
    assert engine_checksum(model)[1] != full
    layer.scaling["default"] /= 2
    assert engine_checksum(model) == (params, full)
    assert engine_checksum(torch.nn.Linear(2, 2))[1] == 0  # no LoRA: nothing merged


def test_a_wrong_merged_lora_weight_in_the_engine_is_detected_and_the_run_stops(
    tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The LoRA adapters reach the producer's engine intact, but from version 1 on it runs
    them with a wrong scaling (a merged weight the learner never had): every parameter's
    checksum agrees, the merged-weight checksum does not — sync/mismatch, the run stops."""
    real = local_stream.load_weights

    def wrong_merge(ring: WeightRing, model: torch.nn.Module, version: int) -> int:
        expected = real(ring, model, version)
        if version >= 1:
            layer = next(m for m in model.modules() if isinstance(getattr(m, "scaling", 0), dict))
            layer.scaling = {a: 2 * s for a, s in layer.scaling.items()}
        return expected

    monkeypatch.setattr(local_stream, "load_weights", wrong_merge)
    run_dir = tmp_path / "lora"
    cfg = load_config(
        None,
        [
            *_overrides(tiny_model_dir, run_dir),
            "model.lora={r: 4, alpha: 8}",
            "run.schedule.name=bounded_staleness",
            "run.schedule.params.max_staleness=1",
            "run.schedule.params.producer=thread",
        ],
    )
    with (
        Trainer(build(cfg), run_dir) as t,
        pytest.raises(WeightSyncError, match="merged LoRA weights"),
    ):
        t.fit()
    rows = read_metrics(run_dir)
    assert len(rows) < 3  # stopped at the first batch sampled from version 1
    assert all(r["sync/mismatch"] == 0 for r in rows)  # version 0 was intact


def test_a_producer_thread_with_vllm_is_refused() -> None:
    cfg = load_config(
        None,
        [
            "run.schedule.name=bounded_staleness",
            "run.schedule.params.max_staleness=1",
            "run.schedule.params.producer=thread",
            "rollout.engine.name=vllm",
        ],
    )
    with pytest.raises(UserInputError, match=r"run\.schedule\.params\.producer=process"):
        _schedule(cfg)


def test_the_learner_and_the_producer_get_disjoint_cores() -> None:
    from verirl.backends.local_stream import assign_cores

    two = (0, 1)
    a = assign_cores(None, None, None, True, two)  # 2 cores: 1 + 1, one core each
    assert (a.learner_threads, a.producer_threads, a.learner, a.producer) == (1, 1, (0,), (1,))
    a = assign_cores(None, 3, 1, True, (2, 3, 5, 7, 11))  # from the cores this process may use
    assert (a.learner, a.producer) == ((2, 3, 5), (7,))
    a = assign_cores(8, None, None, True, tuple(range(8)))
    assert (a.learner_threads, a.producer_threads, a.learner, a.producer) == (
        4,
        4,
        (0, 1, 2, 3),
        (4, 5, 6, 7),
    )
    a = assign_cores(4, None, None, True, two)  # 2 + 2 threads on 2 cores: shared
    assert (a.learner, a.producer) == (None, None) and "more than the 2 cores" in a.why
    assert assign_cores(None, None, None, False, two).why == "run.schedule.params.pin_cores is off"
    assert assign_cores(None, None, None, True, None).why == "this OS sets no CPU affinity"


def test_a_batch_pickled_before_the_engine_field_loads_with_it_empty() -> None:
    import pickle

    produced = Produced(StepOutput([], [], 1), version=3)
    del produced.__dict__["engine"]  # as a checkpoint written before the field existed holds it
    loaded = pickle.loads(pickle.dumps(produced))
    assert loaded.engine == {} and loaded.version == 3
