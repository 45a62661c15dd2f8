"""The bounded_staleness schedule (k = 1) with the vLLM engine: staleness ≤ k,
nothing dropped uncounted, and after every sync the weights read back from vLLM's own
worker are the learner's published version — a weight load that never reached vLLM stops
the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.vllm_support import VLLM_TRAINING, needs_vllm, peaked_model_dir, require_vllm
from verirl.assembly import build
from verirl.backends.schedules import WeightSyncError
from verirl.config import load_config
from verirl.rollout import vllm_engine
from verirl.train.metrics import read_metrics
from verirl.trainer import Trainer

pytestmark = [needs_vllm]

STEPS = 3


def _config(model_dir: Path, run_dir: Path, *plugins: str) -> list[str]:
    return [
        f"model.name={model_dir}",
        f"run.dir={run_dir.parent}",
        f"run.name={run_dir.name}",
        f"run.steps={STEPS}",
        "run.save_every=0",
        "run.threads=2",
        f"run.plugins=[{','.join(['tests.train.plugin_vllm', *plugins])}]",
        "run.schedule.name=bounded_staleness",
        "run.schedule.params.max_staleness=1",
        "run.schedule.params.producer=process",  # its own vLLM, as a real run has it
        *VLLM_TRAINING,
        "model.device=cpu",
    ]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_vllm()
    return peaked_model_dir(tmp_path_factory.mktemp("model"))


def test_k1_with_vllm_stays_within_k_and_vllm_holds_every_published_version(
    model_dir: Path, tmp_path: Path
) -> None:
    run_dir = tmp_path / "k1"
    with Trainer(build(load_config(None, _config(model_dir, run_dir))), run_dir) as t:
        t.fit()
    rows = read_metrics(run_dir)
    assert [r["step"] for r in rows] == [1, 2, 3]
    assert [r["async/staleness_max"] for r in rows] == [0.0, 1.0, 1.0]
    assert all(r["async/staleness_max"] <= 1 for r in rows)
    assert all(r["async/dropped"] == 0 for r in rows)
    assert all(r["sync/mismatch"] == 0 for r in rows)
    # the check read vLLM's worker back (not only the producer's module) at every sync,
    # and the learner really moved the weights it compared
    assert all(r["sync/engine_checked"] == 1 for r in rows)
    assert all(r["train/grad_norm"] > 0 for r in rows)


def test_k1_with_vllm_and_lora_syncs_the_adapter(model_dir: Path, tmp_path: Path) -> None:
    """With a LoRA adapter and ``lora_sync: adapter``, vLLM serves the base and the adapter:
    read back after every sync — the base weights and the adapter in vLLM's LoRA slot — they
    equal the learner's published version, and the updates really moved it. (The merged
    sync of a LoRA policy runs end to end in bench/bench_lora_sync.py's smoke test.)"""
    run_dir = tmp_path / "lora"
    lora = "model.lora={r: 4, alpha: 8, target_modules: [q_proj, down_proj]}"
    adapter = "rollout.engine.params={kv_cache_gib: 0.5, max_model_len: 256, lora_sync: adapter}"
    cfg = load_config(None, [*_config(model_dir, run_dir), lora, adapter])
    with Trainer(build(cfg), run_dir) as t:
        t.fit()
        named = t.parts.model.named_parameters()
        merged_b = [float(p.detach().abs().sum()) for n, p in named if "lora_B" in n]
    rows = read_metrics(run_dir)
    assert [r["step"] for r in rows] == [1, 2, 3]
    assert all(r["async/staleness_max"] <= 1 and r["async/dropped"] == 0 for r in rows)
    assert all(r["sync/mismatch"] == 0 and r["sync/engine_checked"] == 1 for r in rows)
    assert merged_b and any(b > 0 for b in merged_b)  # B starts at 0: the updates reached it


def test_a_weight_load_that_never_reached_vllm_stops_the_run(
    model_dir: Path, tmp_path: Path
) -> None:
    """The producer's module gets every version (its checksum matches the learner's), but
    the copy into vLLM's worker is skipped (a plugin, imported by the producer process too):
    only reading vLLM back can see it."""
    run_dir = tmp_path / "skipped"
    cfg = load_config(None, _config(model_dir, run_dir, "tests.backends.plugin_skip_vllm_load"))
    load = vllm_engine._load_weights_cpu
    with Trainer(build(cfg), run_dir) as t, pytest.raises(WeightSyncError, match="VLLMEngine"):
        t.fit()
    # the plugin patched only the producer's process: this one's later engines still load
    assert vllm_engine._load_weights_cpu is load
    rows = read_metrics(run_dir)
    assert len(rows) < STEPS
