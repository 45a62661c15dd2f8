"""model.device / model.dtype: placement, native-bf16 detection, clear errors; CUDA when present."""

from __future__ import annotations

import pytest
import torch

from verirl import device as dev
from verirl.errors import UserInputError


def test_auto_precision_is_fp32_on_any_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """``auto`` keeps fp32 on the CPU (the path the default job is measured on) and says
    whether bf16 would be native there."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(dev, "cpu_native_bf16", lambda: (False, "AVX2 only"))
    p = dev.resolve_placement("auto", "auto")
    assert p.device == torch.device("cpu") and p.autocast_dtype is None
    assert p.precision == "fp32" and "no native bf16" in p.reason and "AVX2 only" in p.reason
    monkeypatch.setattr(dev, "cpu_native_bf16", lambda: (True, "AMX yes"))
    p = dev.resolve_placement("cpu", "auto")
    assert p.autocast_dtype is None and "bf16 opts in" in p.reason and "AMX yes" in p.reason


def test_auto_precision_is_bf16_on_a_cuda_device_that_has_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda d=None: "Fake GPU")
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: True)
    p = dev.resolve_placement("auto", "auto")
    assert p.device == torch.device("cuda") and p.autocast_dtype == torch.bfloat16
    assert "Fake GPU" in p.reason
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: False)
    p = dev.resolve_placement("cuda:0", "auto")
    assert p.autocast_dtype is None and "no bf16" in p.reason


def test_explicit_dtypes_win_and_bf16_without_hardware_is_flagged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(dev, "cpu_native_bf16", lambda: (False, "AVX2 only"))
    assert dev.resolve_placement("cpu", "fp32").autocast_dtype is None
    p = dev.resolve_placement("cpu", "bf16")
    assert p.autocast_dtype == torch.bfloat16 and "slower" in p.reason


def test_an_avx2_capability_is_not_native_bf16(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "AVX2")
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: True)
    native, seen = dev.cpu_native_bf16()
    assert not native and "AVX2" in seen


def test_bad_devices_are_one_line_user_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(UserInputError, match=r"model.device: 'cuda'.*no CUDA device"):
        dev.resolve_placement("cuda", "auto")
    with pytest.raises(UserInputError, match=r"model.device: 'gpu0' is not a device"):
        dev.resolve_placement("gpu0", "auto")
    with pytest.raises(UserInputError, match=r"model.dtype"):
        dev.resolve_placement("cpu", "fp8")


def test_autocast_context_matches_the_placement() -> None:
    p = dev.Placement(torch.device("cpu"), torch.bfloat16, "test")
    with p.autocast():
        assert torch.is_autocast_enabled("cpu")
    with dev.Placement(torch.device("cpu"), None, "test").autocast():
        assert not torch.is_autocast_enabled("cpu")
    with dev.autocast(torch.device("cpu"), torch.bfloat16):  # what engines and scorers use
        assert torch.get_autocast_dtype("cpu") == torch.bfloat16
    with dev.autocast(torch.device("cpu"), None):
        assert not torch.is_autocast_enabled("cpu")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine")
def test_engine_and_learner_run_a_step_on_cuda(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from verirl.credit import CREDIT, CreditInput
    from verirl.envs import get_env
    from verirl.models import load_tokenizer, tiny_model
    from verirl.rewards.stage import env_reward_stage
    from verirl.rollout.collect import COLLECTORS
    from verirl.rollout.hf import HFEngine
    from verirl.rollout.prompts import PromptFormatter
    from verirl.train.learner import Learner, LearnerSettings, collate
    from verirl.types import SamplingParams

    placement = dev.resolve_placement("cuda", "auto")
    tok = load_tokenizer("smollm2-135m-instruct")
    model = tiny_model(len(tok)).to(placement.device)
    engine = HFEngine(model, tok, 16, placement.autocast_dtype, seed=0)
    problems = [get_env("addition").generate(0, s) for s in range(2)]
    rollouts = (
        COLLECTORS.get("single_turn")
        .build({})
        .collect(
            problems,
            engine,
            PromptFormatter(tok),
            SamplingParams(n=4, max_new_tokens=8),
            score=env_reward_stage(),
        )
    )
    adv = CREDIT.get("grpo")(CreditInput.from_rollouts(rollouts))
    learner = Learner(model, LearnerSettings(placement=placement), total_steps=1)
    before = [p.detach().clone() for p in model.parameters()]
    stats = learner.update(collate(rollouts, adv, tok.pad_token_id))
    assert all(torch.isfinite(torch.tensor(v)) for v in stats.values())
    assert next(model.parameters()).device.type == "cuda"
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
