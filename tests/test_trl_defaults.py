"""The bundled ``trl_grpo`` example is TRL's GRPO defaults, each value read from the installed
trl's ``GRPOConfig`` (and its trainer, for the constant TRL does not expose), translated into
verirl's fields."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
import torch

from verirl.assembly import load_config
from verirl.train.optimizers import AdamSettings, build_optimizer

trl = pytest.importorskip("trl", reason="trl is not installed (pip install 'verirl[trl]')")

# TRL's loss types that are the clipped surrogate, by the aggregation they normalise with
AGGREGATION = {
    "dapo": "token-mean",
    "bnpo": "token-mean",
    "grpo": "seq-mean-token-mean",
    "dr_grpo": "seq-mean-token-sum-norm",
}
# TRL's reward scaling, by the credit estimator that computes it
CREDIT = {"group": "grpo", "none": "dr_grpo"}
# TRL's vLLM importance-sampling modes, by verirl's off-policy correction and its level
IS_MODE = {
    "sequence_mask": ("masked_is", "sequence"),
    "token_mask": ("masked_is", "token"),
    "token_truncate": ("truncated_is", None),
}


def test_the_trl_grpo_example_is_trls_grpo_defaults(tmp_path: Path) -> None:
    # use_cpu: TRL refuses bf16 (its default) on a CPU-only machine otherwise
    d = trl.GRPOConfig(output_dir=str(tmp_path / "trl"), use_cpu=True)
    cfg = load_config("trl_grpo")
    loss, optim, rollout = cfg.loss, cfg.optim, cfg.rollout
    # the loss: TRL's loss_type is the clipped surrogate with an aggregation
    assert loss.policy.name == "clipped_surrogate"
    assert loss.aggregation == AGGREGATION[d.loss_type]
    assert loss.policy.params["eps_low"] == d.epsilon
    assert loss.policy.params["eps_high"] == (d.epsilon_high or d.epsilon)
    assert d.delta is None and loss.policy.params.get("dual_clip") is None
    assert loss.terms.get("kl", {}).get("coef", 0.0) == d.beta
    assert "entropy" not in loss.terms and d.entropy_coef == 0 and not d.use_adaptive_entropy
    assert loss.token_mask.name == "none" and d.top_entropy_quantile == 1.0
    assert not d.mask_truncated_completions  # verirl trains truncated responses too
    # the IS correction of TRL's vLLM path
    assert d.vllm_importance_sampling_correction
    name, level = IS_MODE[d.vllm_importance_sampling_mode]
    assert not isinstance(loss.off_policy, list)
    assert (loss.off_policy.name, loss.off_policy.params.get("level")) == (name, level)
    assert loss.off_policy.params["cap"] == d.vllm_importance_sampling_clip_max
    assert d.vllm_importance_sampling_clip_min is None  # masked_is has no lower bound
    assert d.importance_sampling_level == "token"  # no GSPO sequence ratio
    # advantages: the group-scaled GRPO baseline, with the constant TRL's trainer adds
    assert cfg.credit.name == CREDIT[d.scale_rewards]
    assert d.multi_objective_aggregation == "sum_then_normalize"  # one reward, no GDPO
    source = inspect.getsource(inspect.getmodule(trl.GRPOTrainer))  # type: ignore[arg-type]
    assert "advantages / (std_rewards + 1e-4)" in source
    assert cfg.credit.params["eps"] == 1e-4
    assert not cfg.dynamic_sampling.enabled
    # sampling
    assert rollout.group_size == d.num_generations
    assert rollout.max_new_tokens == d.max_completion_length
    assert (rollout.temperature, rollout.top_p, d.top_k) == (d.temperature, d.top_p, 0)
    # optimisation: one optimizer step per generation batch, once
    assert optim.lr == d.learning_rate
    assert optim.epochs == d.num_iterations
    assert d.steps_per_generation == d.gradient_accumulation_steps and optim.minibatches == 1
    assert optim.optimizer.name == "adamw"
    assert tuple(optim.betas) == (d.adam_beta1, d.adam_beta2)
    assert optim.weight_decay == d.weight_decay
    adam = build_optimizer(
        "adamw",
        {},
        [torch.nn.Parameter(torch.zeros(1))],
        AdamSettings(optim.lr, optim.betas, optim.weight_decay),
        torch.device("cpu"),
    )
    assert adam.param_groups[0]["eps"] == d.adam_epsilon
    assert optim.schedule == str(getattr(d.lr_scheduler_type, "value", d.lr_scheduler_type))
    assert optim.warmup_steps == d.warmup_steps and not getattr(d, "warmup_ratio", 0)
    assert optim.grad_clip == d.max_grad_norm
    assert optim.activation_checkpointing is d.gradient_checkpointing
    # precision and seed
    assert d.bf16 and cfg.model.dtype == "bf16"
    assert cfg.run.seed == d.seed
