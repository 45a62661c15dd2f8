"""Run health: each injected fault is detected within 3 steps, once, naming the setting to
change; healthy streams (a recorded real default job, noisy synthetic runs) raise nothing."""

from __future__ import annotations

import json
import logging
import math
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.tiny_run import tiny_run
from verirl.assembly import build, load_config
from verirl.config import ConfigError
from verirl.train.health import (
    DETECTORS,
    HealthMonitor,
    RunFacts,
    RunUnhealthy,
    checksum_mismatch,
    read_events,
    run_detectors,
    weights_checksum,
)
from verirl.trainer import Trainer

FAULT_AT = 8  # the first step of every injected fault in the stream tests


def _healthy(step: int, rng: random.Random) -> dict[str, Any]:
    """One step of a run that learns: values and noise of the default job's real metrics."""
    acc = min(0.9, 0.2 + 0.02 * step + rng.gauss(0, 0.06))
    fmt_fail = max(0.0, 0.45 - 0.02 * step + rng.gauss(0, 0.05))
    return {
        "step": step,
        "rollout/reward": acc - fmt_fail,
        "rollout/accuracy": acc,
        "rollout/truncated": max(0.0, 0.1 + rng.gauss(0, 0.05)),
        "rollout/effective_prompt_ratio": min(1.0, max(0.0, 0.6 + rng.gauss(0, 0.15))),
        "train/loss": rng.gauss(0, 0.05),
        "train/grad_norm": abs(rng.gauss(1.0, 0.3)),
        "train/engine_logp_diff_mean": abs(rng.gauss(0.005, 0.002)),
        "sync/mismatch": 0.0,
        "reward/verified": 48.0,
        "reward/verifier_timeouts": float(rng.random() < 0.05),
        "reward/verifier_errors": 0.0,
        "curriculum/addition/h": float(step // 6),
        "curriculum/addition/checks": float(step // 2),
        "curriculum/chain_sum/h": 0.0,
        "curriculum/chain_sum/checks": float(step // 3),
        # the allocator settling: the RSS climbs in stairs while what is held stays put
        "memory/peak_rss_mb": 2900.0 + 30.0 * min(step, 15) + rng.gauss(0, 40),
        "memory/rss_mb": 2880.0 + 30.0 * min(step, 15) + rng.gauss(0, 40),
        "memory/heap_in_use_mb": 1450.0 + rng.gauss(0, 4),
    }


def _set(**values: float) -> Callable[[dict[str, Any], int], None]:
    def fault(row: dict[str, Any], step: int) -> None:
        row.update(values)

    return fault


def _hacking(row: dict[str, Any], step: int) -> None:  # format reward up, correctness flat
    row["rollout/reward"], row["rollout/accuracy"] = 0.6, 0.3


def _before_hacking(row: dict[str, Any], step: int) -> None:
    row["rollout/reward"], row["rollout/accuracy"] = 0.1, 0.3


def _leak(row: dict[str, Any], step: int) -> None:  # 50 MB more kept after every step
    row["memory/heap_in_use_mb"] += 50.0 * (step - FAULT_AT + 1)


def _stall(row: dict[str, Any], step: int) -> None:  # many environments, none ever moves
    for e in range(12):
        row[f"curriculum/env{e}/h"] = 0.0
        row[f"curriculum/env{e}/checks"] = float(step)
    for e in ("addition", "chain_sum"):
        row[f"curriculum/{e}/h"] = 1.0


FAULTS: dict[str, tuple[Callable[[dict[str, Any], int], None], str]] = {
    "truncation": (_set(**{"rollout/truncated": 0.9}), "rollout.max_new_tokens"),
    "no_signal": (
        _set(
            **{
                "rollout/effective_prompt_ratio": 0.0,
                "rollout/reward": -1.0,
                "rollout/accuracy": 0.0,
            }
        ),
        "rollout.few_shot",
    ),
    "weight_mismatch": (_set(**{"sync/mismatch": 0.02}), "rollout.engine"),
    "logprob_drift": (_set(**{"train/engine_logp_diff_mean": 0.4}), "loss.off_policy"),
    "reward_hacking": (_hacking, "reward.name"),
    "verifier_failures": (
        _set(**{"reward/verifier_timeouts": 6.0, "reward/verifier_errors": 2.0}),
        "verification.timeout_s",
    ),
    "non_finite": (_set(**{"train/loss": math.nan}), "optim.lr"),
    "curriculum_stall": (_stall, "curriculum.tau_acc"),
    "memory_growth": (_leak, "verirl memory"),
}


def test_every_detector_has_an_injected_fault() -> None:
    assert sorted(FAULTS) == DETECTORS.names()


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_an_injected_fault_is_detected_within_3_steps_once(name: str) -> None:
    fault, setting = FAULTS[name]
    rng = random.Random(0)
    rows = []
    for step in range(1, 30):
        row = _healthy(step, rng)
        if name == "reward_hacking" and step < FAULT_AT:
            _before_hacking(row, step)
        if step >= FAULT_AT:
            fault(row, step)
        rows.append(row)
    events = run_detectors(rows)
    assert [e.detector for e in events if e.detector == name] == [name], events
    (event,) = [e for e in events if e.detector == name]
    assert FAULT_AT <= event.step <= FAULT_AT + 2
    assert setting in event.setting
    assert event.message and event.setting


@pytest.mark.parametrize("seed", range(20))
def test_noisy_healthy_runs_raise_nothing(seed: int) -> None:
    rng = random.Random(seed)
    assert run_detectors([_healthy(s, rng) for s in range(1, 60)]) == []


@pytest.mark.parametrize(
    ("copy", "mean", "kl", "fires"),
    [
        (None, 0.03, 0.004, True),  # at the learner's precision: SkyRL's 0.0104 on the mean
        ("w8a16", 0.03, 0.004, False),  # a copy: its rounding moves the mean, KL under 0.01
        ("w8a16", 0.03, 0.02, True),  # ... and past prime-rl's KL bound it is warned
        ("bf16", 0.03, None, True),  # no KL logged: the mean is all there is to hold
    ],
)
def test_logprob_drift_holds_a_sampling_copy_to_the_kl_bound(
    copy: str | None, mean: float, kl: float | None, fires: bool
) -> None:
    rows = [
        {"step": s, "train/engine_logp_diff_mean": mean}
        | ({} if kl is None else {"train/engine_logp_kl": kl})
        for s in range(1, 6)
    ]
    events = run_detectors(rows, facts=RunFacts(sampling_copy=copy))
    assert [(e.detector, e.step) for e in events] == ([("logprob_drift", 2)] if fires else [])
    if fires and copy and kl is not None:
        assert f"a {copy} sampling copy" in events[0].message and "KL 0.02" in events[0].message


def test_run_facts_name_the_sampling_copy() -> None:
    cfg = load_config(None, ["rollout.engine.params.precision=w8a16"])
    assert RunFacts.from_config(cfg).sampling_copy == "w8a16"
    assert RunFacts.from_config(load_config(None, [])).sampling_copy is None


# The default job's published curve (README, "The curve, in 5-step means": one real run of
# 25 steps of 8 prompts x 6 samples): reward, train accuracy, and h per environment per block.
DEFAULT_JOB_BLOCKS = [
    (-0.22, 0.22, (0, 0, 0)),
    (0.16, 0.42, (1, 0, 0)),
    (0.10, 0.36, (1, 0, 0)),
    (0.18, 0.39, (1, 0, 0)),
    (0.67, 0.68, (1, 1, 0)),
]


@pytest.mark.parametrize("seed", range(10))
def test_the_default_job_curve_raises_nothing(seed: int) -> None:
    """Steps drawn around the published block means with the sampling noise of 48 rollouts
    (accuracy binomial, format failures binomial), windows moving when the README says,
    a check per environment every ~3 steps (τ_num 48 of 16 rollouts per env and step), 8 %
    truncated (what step 1 of a real default-job run measured here)."""
    rng = random.Random(seed)
    rows = []
    for step in range(1, 26):
        reward, acc, highs = DEFAULT_JOB_BLOCKS[(step - 1) // 5]
        fail = max(0.0, acc - reward)  # reward = accuracy - share of format failures
        a = sum(rng.random() < acc for _ in range(48)) / 48
        f = sum(rng.random() < fail for _ in range(48)) / 48
        row: dict[str, Any] = {
            "step": step,
            "rollout/reward": a - f,
            "rollout/accuracy": a,
            "rollout/truncated": sum(rng.random() < 0.08 for _ in range(48)) / 48,
            "rollout/effective_prompt_ratio": sum(rng.random() < 0.6 for _ in range(8)) / 8,
            "train/loss": rng.gauss(0, 0.05),
            "train/grad_norm": abs(rng.gauss(1.0, 0.4)),
            "reward/verified": 48.0,
            "reward/verifier_timeouts": 0.0,
            "reward/verifier_errors": 0.0,
        }
        for env, h in zip(("addition", "multiplication", "chain_sum"), highs, strict=True):
            row[f"curriculum/{env}/h"] = float(h)
            row[f"curriculum/{env}/checks"] = float(step // 3)
        rows.append(row)
    assert run_detectors(rows) == []


DEFAULT_JOB_MEMORY = Path(__file__).with_name("default_job_memory.jsonl")


def test_the_recorded_default_job_memory_raises_nothing_and_a_leak_on_it_is_warned() -> None:
    """The memory metrics of a real default job (``./run.sh train``, 25 steps, recorded in
    ``default_job_memory.jsonl``: its RSS and peak climb while the allocator fills its pools
    and micro-batch sizes vary) raise no warning; the same trace with 50 MB more held after
    every step from step 5 is warned within 3 steps of the warm-up."""
    rows = [json.loads(line) for line in DEFAULT_JOB_MEMORY.read_text().splitlines()]
    assert len(rows) == 25 and all("memory/heap_in_use_mb" in r for r in rows)
    assert run_detectors(rows) == []
    leaky = [
        {**r, "memory/heap_in_use_mb": r["memory/heap_in_use_mb"] + 50.0 * max(0, r["step"] - 4)}
        for r in rows
    ]
    events = run_detectors(leaky)
    assert [e.detector for e in events] == ["memory_growth"]
    assert events[0].step <= 5 + 3


def test_missing_metrics_never_fire() -> None:
    assert run_detectors([{"step": s} for s in range(1, 50)]) == []


def test_thresholds_and_disable_come_from_the_config() -> None:
    rows = [{"step": s, "rollout/truncated": 0.7} for s in range(1, 6)]
    assert [e.detector for e in run_detectors(rows)] == ["truncation"]
    assert run_detectors(rows, params={"truncation": {"max_rate": 0.8}}) == []
    assert run_detectors(rows, disable=["truncation"]) == []
    cfg = load_config(None, ["run.health.stop_on=[all]"])
    assert cfg.run.health.stop_on == DETECTORS.names()
    for bad, words in [
        ("run.health.stop_on=[nan]", "unknown detector 'nan'"),
        ("run.health.params={truncation: {max_rat: 1}}", "params.truncation.max_rat"),
        ("run.health.params={no_signal: {steps: 0}}", "params.no_signal.steps"),
    ]:
        with pytest.raises(ConfigError, match=words):
            load_config(None, [bad])


def test_stop_on_raises_after_writing_the_event(tmp_path: Path) -> None:
    monitor = HealthMonitor(stop_on=["non_finite"], run_dir=tmp_path)
    assert monitor.observe(1, {"train/loss": 0.1}) == []
    with pytest.raises(RunUnhealthy, match="non_finite"):
        monitor.observe(2, {"train/loss": math.inf})
    (event,) = read_events(tmp_path)
    assert (event.step, event.detector) == (2, "non_finite")


def test_a_resumed_run_does_not_warn_twice(tmp_path: Path) -> None:
    HealthMonitor(run_dir=tmp_path).observe(3, {"train/loss": math.nan})
    again = HealthMonitor(run_dir=tmp_path)
    assert again.observe(4, {"train/loss": math.nan}) == []
    stopping = HealthMonitor(stop_on=["non_finite"], run_dir=tmp_path)
    with pytest.raises(RunUnhealthy):
        stopping.observe(4, {"train/loss": math.nan})


def test_weights_checksum_tells_synced_from_stale_weights() -> None:
    import torch

    torch.manual_seed(0)
    a = [torch.randn(300, 70), torch.randn(1000)]
    b = [t.clone() for t in a]
    assert checksum_mismatch(weights_checksum(a), weights_checksum(b)) == 0.0
    b[0].add_(1e-5 * torch.randn_like(b[0]))  # one small optimizer step
    assert checksum_mismatch(weights_checksum(b), weights_checksum(a)) > 1e-7
    c = [t.clone() for t in a]
    c[1].neg_()  # a sign error on load
    assert checksum_mismatch(weights_checksum(c), weights_checksum(a)) > 1e-3


# ---- real training runs on a tiny random model ---------------------------------------------------
def _overrides(model_dir: Path, run_dir: Path, steps: int, *extra: str) -> list[str]:
    """The shared tiny run with the health test plug-ins and the environments' reward."""
    return tiny_run(
        model_dir,
        run_dir,
        steps,
        "run.plugins=[tests.train.plugin_health,tests.train.plugin_rewards]",
        "reward.name=env",
        "run.save_every=0",
        "run.log_samples=0",
        "rollout.group_size=3",
        "rollout.max_new_tokens=6",
        *extra,
    )


def _train(model_dir: Path, run_dir: Path, steps: int, *extra: str) -> list[Any]:
    cfg = load_config(None, _overrides(model_dir, run_dir, steps, *extra))
    run_dir.mkdir(parents=True)
    with Trainer(build(cfg), run_dir) as trainer:
        try:
            trainer.fit()
        finally:
            events = list(trainer.health.events)
    assert events == read_events(run_dir)
    return events


def test_a_real_run_detects_truncation_and_no_signal(
    tiny_model_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """max_new_tokens=2: every answer is cut, the random model never boxes one, every group
    scores −1."""
    run_dir = tmp_path / "run"
    with caplog.at_level(logging.WARNING, logger="verirl.health"):
        events = _train(tiny_model_dir, run_dir, 3, "rollout.max_new_tokens=2")
    found = {e.detector: e.step for e in events}
    assert found == {"truncation": 2, "no_signal": 3}
    log = (run_dir / "run.log").read_text()
    assert "truncation" in log and "no_signal" in log and "rollout.max_new_tokens (2)" in log
    assert sum("run health" in r.getMessage() for r in caplog.records) == 2


def test_a_real_leak_is_warned_within_3_steps(tiny_model_dir: Path, tmp_path: Path) -> None:
    """A reward plug-in that keeps 50 MB at every step, from step 1: after the 2 warm-up
    steps, what the run holds grows at steps 4, 5 and 6, and ``memory_growth`` warns at 6
    (the recorded default job below, whose RSS climbs as its allocator settles, does not)."""
    events = _train(
        tiny_model_dir,
        tmp_path / "leak",
        6,
        "reward.name=test_leaky_reward",
        "run.health.disable=[truncation,no_signal]",
    )
    assert [(e.detector, e.step) for e in events] == [("memory_growth", 6)]
    assert "memory/heap_in_use_mb" in events[0].message


@pytest.mark.slow
def test_a_real_run_detects_weight_mismatch_and_logprob_drift(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    events = _train(
        tiny_model_dir,
        tmp_path / "stale",
        3,
        "rollout.engine.name=test_stale_copy",
        "reward.name=test_even_tokens",  # varied rewards: the update moves the weights
        "optim.lr=1e-3",
        "run.health.disable=[truncation,no_signal]",
    )
    assert [(e.detector, e.step) for e in events][:1] == [("weight_mismatch", 1)]
    events = _train(
        tiny_model_dir,
        tmp_path / "drift",
        2,
        "rollout.engine.name=test_drifting_hf",
        "reward.name=test_even_tokens",
        "run.health.disable=[truncation,no_signal]",
    )
    assert [(e.detector, e.step) for e in events] == [("logprob_drift", 2)]
    assert "0.5 nats" in events[0].message


def test_a_nan_loss_stops_the_run_from_the_command_line(
    tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from verirl.cli import main

    run_dir = tmp_path / "nan"
    args = _overrides(tiny_model_dir, run_dir, 3, "reward.name=test_nan_reward")
    code = main(["train", *args, "run.health.stop_on=[non_finite]"])
    assert code == 3
    err = capsys.readouterr().err
    assert "non_finite" in err and "optim.lr" in err
    rows = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1]  # stopped after the first step was logged
    assert [e.detector for e in read_events(run_dir)][-1] == "non_finite"


# ---- the example configs: a real short run each, no false alarm --------------------------------
EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*.yaml"))
_NEEDS = {"vllm.yaml": "vllm", "ray.yaml": "ray"}


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_configs_run_without_a_false_alarm(
    path: Path, tiny_model_dir: Path, tmp_path: Path
) -> None:
    """Two steps of each example on the tiny random model. Truncation and the missing
    learning signal are real on a random model (it never ends an answer nor boxes one), so
    those two detectors are off here; the default job's curve covers them above."""
    import importlib.util

    if path.name in _NEEDS and importlib.util.find_spec(_NEEDS[path.name]) is None:
        pytest.skip(f"{path.name} needs {_NEEDS[path.name]}, not installed here")
    if path.name == "vllm.yaml":
        pytest.skip("vllm.yaml needs a GPU engine; its drift is covered by tests/train/test_tis.py")
    if path.name == "ray.yaml":
        pytest.skip("ray.yaml starts a Ray cluster; its sync/mismatch is checked in ray tests")
    if path.name == "lean_process.yaml":
        from verirl.envs import get_env
        from verirl.errors import UserInputError

        env = get_env("lean_proofs")
        problem = env.generate(0, 0)
        try:
            env.verify(problem, env.answer_format.render(env.solve(problem)))
        except UserInputError as exc:
            pytest.skip(f"no Lean here: {str(exc)[:80]}")
    run_dir = tmp_path / "run"
    overrides = [
        f"model.name={tiny_model_dir}",
        f"run.dir={tmp_path}",
        "run.name=run",
        "run.steps=2",
        "run.save_every=0",
        "run.threads=1",
        "run.placement.name=local",
        "rollout.prompts_per_step=2",
        "rollout.group_size=2",
        "dynamic_sampling.max_rounds=1",
        "eval.before_and_after=false",
        "run.health.disable=[truncation,no_signal]",
        # in-process verification: a loaded test machine starves worker processes past
        # their deadline, which verifier_failures rightly reports (not a false alarm)
        "verification.executor.name=inline",
    ]
    buffer = load_config(path).reward.overlong.buffer  # DAPO's shaping needs room
    cfg = load_config(path, [*overrides, f"rollout.max_new_tokens={8 + buffer}"])
    run_dir.mkdir()
    with Trainer(build(cfg), run_dir) as trainer:
        trainer.fit()
        assert trainer.step == 2
        assert trainer.health.events == []
    assert read_events(run_dir) == []
