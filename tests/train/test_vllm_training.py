"""A tiny-model training run with the vLLM engine: its first step matches the transformers
engine's, and after each weight sync the engine agrees with the learner again."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tiny_run import tiny_run
from tests.vllm_support import needs_vllm, peaked_model_dir, require_vllm
from verirl.assembly import build
from verirl.config import load_config
from verirl.trainer import Trainer

pytestmark = [needs_vllm, pytest.mark.slow]


def _overrides(model_dir: Path, run_dir: Path, steps: int) -> list[str]:
    """The shared tiny run in ``run_dir/run``: greedy, scripted rewards, no baseline."""
    return tiny_run(
        model_dir,
        run_dir / "run",
        steps,
        "run.save_every=0",
        "run.plugins=[tests.train.plugin_vllm]",
        "rollout.prompts_per_step=2",
        "rollout.group_size=2",
        "rollout.max_new_tokens=8",
        "rollout.temperature=0",  # greedy: both engines decode the same tokens
        "rollout.few_shot=[]",
        "rollout.prompt_variants=false",
        "rollout.zero_shot_rate=0",
        "reward.name=test_alternating",  # rewards 1, 0, 1, 0 whatever the text
        "credit.name=test_raw_reward",  # no baseline: identical samples still train
        "optim.lr=1e-3",
        "model.device=cpu",
    )


def test_first_step_matches_the_hf_engine_and_sync_keeps_the_engine_on_policy(
    tmp_path: Path,
) -> None:
    require_vllm()
    model_dir = peaked_model_dir(tmp_path / "model")
    with Trainer(
        build(load_config(None, _overrides(model_dir, tmp_path / "hf", 1))), tmp_path
    ) as hf:
        hf_step = hf.train_step()
        hf_tokens = [r.response_ids for r in hf.last_rollouts]
    cfg = load_config(
        None,
        [
            *_overrides(model_dir, tmp_path / "vllm", 2),
            "rollout.engine.name=vllm",
            "rollout.engine.params={kv_cache_gib: 0.5, max_model_len: 512}",
        ],
    )
    with Trainer(build(cfg), tmp_path) as run:
        first = run.train_step()
        assert [r.response_ids for r in run.last_rollouts] == hf_tokens
        assert first["train/loss"] != 0.0
        assert first["train/loss"] == pytest.approx(hf_step["train/loss"], rel=1e-3, abs=1e-5)
        assert first["train/grad_norm"] == pytest.approx(hf_step["train/grad_norm"], rel=1e-3)
        # π_old recomputed by the learner (auto), the drift logged: small on equal weights
        assert first["train/engine_logp_diff_max"] < 1e-3
        assert first["engine/weight_sync_tensors"] > 0
        assert 0 < first["time/weight_sync_s"] <= first["time/train_s"]  # a part of the update
        second = run.train_step()  # sampled from the synced weights: still on-policy
        assert second["train/engine_logp_diff_max"] < 1e-3
        assert second["engine/weight_sync_layers"] > 0
