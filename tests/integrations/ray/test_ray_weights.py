"""The weights' wire format between the learner, the driver and the rollout replicas
(numpy arrays the object store maps without a copy). Pure torch/numpy: runs without Ray."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

from verirl.integrations.ray.learner import load_trainable, trainable_state


def _model(dtype: torch.dtype, seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    m = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2)).to(dtype)
    m[0].bias.requires_grad_(False)  # a frozen parameter (as under LoRA) does not travel
    return m


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_trainable_weights_round_trip_exactly_through_pickle(dtype: torch.dtype) -> None:
    src, dst = _model(dtype, 0), _model(dtype, 1)
    state = trainable_state(src)
    assert sorted(state) == ["0.weight", "1.bias", "1.weight"]
    assert all(isinstance(a, np.ndarray) for a in state.values())
    frozen_before = dst[0].bias.detach().clone()
    load_trainable(dst, pickle.loads(pickle.dumps(state)))  # what a put and a get do
    for name, p in dst.named_parameters():
        if p.requires_grad:
            assert p.dtype == dtype and torch.equal(p, dict(src.named_parameters())[name])
    assert torch.equal(dst[0].bias, frozen_before)


def test_a_read_only_array_loads_and_the_source_is_not_aliased() -> None:
    src, dst = _model(torch.float32, 0), _model(torch.float32, 1)
    state = trainable_state(src)
    for a in state.values():
        a.flags.writeable = False  # the object store hands out read-only memory
    load_trainable(dst, state)
    with torch.no_grad():
        dst[1].weight.add_(1.0)  # the loaded model owns its memory
    assert not torch.equal(dst[1].weight, src[1].weight)
