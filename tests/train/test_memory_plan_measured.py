"""The memory plan against the measured peak of real runs: four CPU configurations of a model
of SmolLM2's width and vocabulary at 12 of its 30 layers (random weights, so every response
runs to ``max_new_tokens`` — the plan's assumption), each trained for two steps in its own
process while the parent samples the process tree's RSS (verifier workers included). The plan
must be within ±20%. Twelve layers keep every term of the plan — weights, gradients, optimizer
state, per-layer activations with and without checkpointing, the chunked head over the whole
vocabulary, LoRA — at sizes the measurement resolves, in 40% of the full model's time.

Two steps: the optimizer's state is allocated at the end of step 1, so step 2 holds
everything a step holds from then on."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from verirl.assembly import plan as plan_of
from verirl.cli.common import run_config
from verirl.train.memory import wait_and_measure

pytestmark = pytest.mark.slow

SMOLLM2_WIDTH = {
    "hidden_size": 576,
    "intermediate_size": 1536,
    "num_hidden_layers": 12,
    "num_attention_heads": 9,
    "num_key_value_heads": 3,
    "vocab_size": 49152,
    "tie_word_embeddings": True,
}

COMMON = [
    "run.steps=2",
    "run.save_every=0",
    "run.log_samples=0",
    "run.check_memory=false",
    "eval.before_and_after=false",
    # the plan is of a step that trains every row; a random model's equal rewards would
    # otherwise leave every row without signal, and nothing to train
    "optim.skip_zero_advantage_rows=false",
    # the library's defaults where the default job differs: AdamW, two verifier processes
    "optim.optimizer.name=adamw",
    "verification.executor.name=processes",
]

CONFIGS = {
    "full, no checkpointing, 4x4x48": [
        "rollout.prompts_per_step=4",
        "rollout.group_size=4",
        "rollout.max_new_tokens=48",
        "optim.activation_checkpointing=false",
    ],
    "full, checkpointing, 4x4x128": [
        "rollout.prompts_per_step=4",
        "rollout.group_size=4",
        "rollout.max_new_tokens=128",
        "optim.activation_checkpointing=true",
    ],
    "LoRA r16, 4x4x64": [
        "rollout.prompts_per_step=4",
        "rollout.group_size=4",
        "rollout.max_new_tokens=64",
        "model.lora.r=16",
        "optim.activation_checkpointing=false",
    ],
    "full, checkpointing, 1x4x384": [
        "rollout.prompts_per_step=1",
        "rollout.group_size=4",
        "rollout.max_new_tokens=384",
        "optim.activation_checkpointing=true",
    ],
}


@pytest.fixture(scope="module")
def smollm2_width(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from verirl.models import DEFAULT_MODEL, load_tokenizer

    target = tmp_path_factory.mktemp("smollm2_width")
    tok = load_tokenizer(DEFAULT_MODEL)
    config = LlamaConfig(max_position_embeddings=2048, **SMOLLM2_WIDTH)
    config.bos_token_id, config.eos_token_id = tok.bos_token_id, tok.eos_token_id
    config.pad_token_id = tok.pad_token_id
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(target)
    tok.save_pretrained(target)
    return target


@pytest.mark.parametrize("name", list(CONFIGS))
def test_plan_within_20_percent_of_the_measured_peak(
    name: str, smollm2_width: Path, tmp_path: Path
) -> None:
    overrides = [*COMMON, f"model.name={smollm2_width}", *CONFIGS[name]]
    cmd = [sys.executable, "-m", "verirl.cli", "train", *overrides]
    cmd += [f"run.dir={tmp_path}", "run.name=r"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    code, measured = wait_and_measure(proc)
    assert code == 0, proc.stderr.read()[-3000:] if proc.stderr else code
    plan = plan_of(run_config(overrides), "cpu")  # the config `verirl train` ran
    ratio = plan.peak / measured
    parts = ", ".join(f"{k} {v / 1e9:.2f}" for k, v in plan.components.items())
    print(f"{name}: measured {measured / 1e9:.2f} GB, plan {plan.peak / 1e9:.2f} GB ({parts})")
    assert 0.8 <= ratio <= 1.2, f"{name}: plan/measured = {ratio:.2f} ({parts})"
