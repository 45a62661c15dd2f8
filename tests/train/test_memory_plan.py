"""The memory plan's arithmetic, by hand; what it reads off a model config; what it suggests;
``verirl memory``; and the check that refuses a run before any work."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
from transformers import LlamaConfig, LlamaForCausalLM

from verirl.assembly import load_config
from verirl.cli import main
from verirl.errors import UserInputError
from verirl.models import LoraSettings, apply_lora
from verirl.train import memory_plan as mp
from verirl.train.memory_plan import (
    ModelShape,
    PlanInputs,
    StepShape,
    compute_plan,
    parse_device,
    suggest_fix,
)

SHAPE = ModelShape(
    params=1_000_000,
    layers=2,
    hidden=64,
    intermediate=128,
    q_dim=64,
    kv_dim=32,
    vocab=1000,
    tied=True,
)
STEP = StepShape(prompts=2, group=2, prompt_tokens=10, response_tokens=20)


def test_components_by_hand() -> None:
    p = PlanInputs(SHAPE, STEP, micro_batch_tokens=10_000, chunk_tokens=8, workers=2)
    plan = compute_plan(p)
    c = plan.components
    assert c["weights"] == 4e6 and c["gradients"] == 4e6 and c["optimizer"] == 8e6
    # shared prompts: 2 prompts x 10 + 4 rows x 20 = 100 tokens in the one micro-batch
    assert plan.learner_tokens == 100
    per_token_layer = 8.5 * 64 + 4 * 128 + 2 * 32  # floats
    layer = 4 * per_token_layer * 100
    assert c["activations"] == pytest.approx(2 * layer + 2 * layer)
    # the tiled linear head: a tile of 8 x 1000 float32 logits twice, and the head's gradient
    assert c["log-prob chunk"] == pytest.approx(2 * 4 * 8 * 1000 + 4 * 1000 * 64)
    # generation: 4 rows x 30 positions x 2 layers x (k, v) x 32 floats, and 3 logit rows
    assert c["generation"] == pytest.approx(4 * 30 * 2 * 2 * 32 * 4 + 3 * 4 * 4 * 1000)
    assert c["workers"] == pytest.approx(mp.POOL_OVERHEAD + 2 * mp.WORKER_PROCESS)
    learner = c["gradients"] + c["activations"] + c["log-prob chunk"]
    fixed = c["runtime"] + c["weights"] + c["optimizer"]
    assert plan.peak == pytest.approx(fixed + max(learner, c["generation"]) + c["workers"])


def test_checkpointing_keeps_layer_inputs_and_one_layer() -> None:
    p = PlanInputs(SHAPE, STEP, micro_batch_tokens=10_000)
    on = compute_plan(replace(p, activation_checkpointing=True)).components["activations"]
    layer = 4 * (8.5 * 64 + 4 * 128 + 2 * 32) * 100
    assert on == pytest.approx(2 * 100 * 64 * 4 + 3 * layer)


def test_a_head_that_is_not_a_plain_linear_pays_for_a_checkpointed_chunk() -> None:
    p = PlanInputs(SHAPE, STEP, micro_batch_tokens=10_000, chunk_tokens=8, linear_head=False)
    assert compute_plan(p).components["log-prob chunk"] == pytest.approx(
        5 * 4 * 8 * 1000 + 4 * 1000 * 64
    )


def test_a_lora_on_the_output_head_leaves_the_tiled_path() -> None:
    from verirl.config import load_config
    from verirl.train.memory_plan import plan_inputs

    config = {"vocab_size": 1000, "hidden_size": 64, "intermediate_size": 128}
    config |= {"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2}
    from transformers import LlamaConfig

    hf = LlamaConfig(**config)
    plain = plan_inputs(load_config(None, ["model.lora.r=8"]), 10, "cpu", hf)
    head = ["model.lora.r=8", "model.lora.target_modules=[q_proj,lm_head]"]
    assert plain.linear_head and not plan_inputs(load_config(None, head), 10, "cpu", hf).linear_head


def test_the_full_logits_path_pays_for_every_response_token() -> None:
    p = PlanInputs(SHAPE, STEP, micro_batch_tokens=10_000, chunk_tokens=8)
    full = compute_plan(replace(p, chunked_logprobs=False)).components["log-prob chunk"]
    assert full == pytest.approx(3 * 4 * 80 * 1000 + 4 * 1000 * 64)  # 80 response tokens
    assert full > compute_plan(p).components["log-prob chunk"]


def test_micro_batches_follow_the_learners_packing() -> None:
    # a budget of 60 padded tokens: one prompt group (10 + 2 x 20 = 50) per micro-batch
    p = PlanInputs(SHAPE, STEP, micro_batch_tokens=60)
    assert compute_plan(p).learner_tokens == 50
    unshared = replace(p, share_prompt_prefix=False)
    assert compute_plan(unshared).learner_tokens == 60  # two rows of 30


def test_lora_trains_the_adapter_and_full_fine_tuning_everything() -> None:
    model = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=300,
            hidden_size=32,
            intermediate_size=48,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
        )
    )
    shape = ModelShape.from_hf_config(model.config)
    assert shape.params == sum(p.numel() for p in model.parameters())
    assert (shape.hidden, shape.intermediate, shape.q_dim, shape.kv_dim) == (32, 48, 32, 16)
    lora = LoraSettings(r=4)
    adapted = apply_lora(model, lora)
    trainable = sum(p.numel() for p in adapted.parameters() if p.requires_grad)
    assert shape.lora_params(4, lora.target_modules) == trainable


def test_a_distillation_teacher_is_planned_beside_the_policy(tiny_model_dir: Path) -> None:
    """A checkpoint teacher holds its float32 weights (read off its config.json); an EMA
    self-teacher a float32 copy of the trainable parameters (LoRA: the adapter's); a
    self-teacher at the policy's own weights, or a source no active term reads, nothing."""
    from verirl.train.memory_plan import teacher_bytes

    teacher = ModelShape.from_hf_config(LlamaConfig.from_pretrained(tiny_model_dir)).params
    distill = ["loss.terms.distill.coef=1.0"]
    checkpoint = [
        "loss.sources.teacher.name=checkpoint",
        f"loss.sources.teacher.params.path={tiny_model_dir}",
    ]
    ema = ["loss.sources.teacher.name=privileged_self", "loss.sources.teacher.params.ema=0.9"]
    assert teacher_bytes(load_config(None, [*distill, *checkpoint]), 123) == 4.0 * teacher
    assert teacher_bytes(load_config(None, [*distill, *ema]), 123) == 4.0 * 123
    assert teacher_bytes(load_config(None, [*distill, ema[0]]), 123) == 0.0
    assert teacher_bytes(load_config(None, checkpoint), 123) == 0.0  # no term reads it
    base = compute_plan(PlanInputs(SHAPE, STEP))
    plan = compute_plan(PlanInputs(SHAPE, STEP, teacher_bytes=5e6))
    assert plan.components["teacher"] == 5e6 and plan.peak == pytest.approx(base.peak + 5e6)
    assert "teacher" not in base.components


def test_a_sampling_copy_is_planned_at_its_width() -> None:
    """SHAPE's decoder layers hold 2 × (2·64·64 + 2·64·32 + 2·64·128 + 64·128) = 73,728 linear
    weights (16,384 of them down projections), its tied head 1,000 × 64 = 64,000 and the rest
    (embedding, norms) 1,000,000 − 73,728 = 926,272, of which the embedding 64,000: w8a16
    holds it int8 in the tied head's storage (untied: its own int8 rows) and the norms fp32."""
    from dataclasses import replace

    from verirl.train.memory_plan import sampling_copy_bytes

    assert sampling_copy_bytes(SHAPE, "w8a16") == 73_728 + 64_000 + 4 * 862_272
    untied = replace(SHAPE, params=1_064_000, tied=False)  # the head's own 64,000 weights
    assert sampling_copy_bytes(untied, "w8a16") == 73_728 + 64_000 + 64_000 + 4 * 862_272
    assert sampling_copy_bytes(SHAPE, "bf16") == 2 * (73_728 + 64_000 + 926_272)
    assert sampling_copy_bytes(SHAPE, "int8") == (73_728 - 16_384 + 64_000) + 4 * (16_384 + 926_272)
    base = compute_plan(PlanInputs(SHAPE, STEP))
    plan = compute_plan(PlanInputs(SHAPE, STEP, sampling_copy="w8a16"))
    assert plan.components["sampling copy"] == 3_586_816
    assert plan.peak == pytest.approx(base.peak + 3_586_816)
    from verirl.train.memory_plan import plan_inputs

    hf = LlamaConfig(vocab_size=1000, hidden_size=64, intermediate_size=128, num_hidden_layers=2)
    cfg = load_config(None, ["rollout.engine.params.precision=w8a16"])
    assert plan_inputs(cfg, 20, "cpu", hf).sampling_copy == "w8a16"
    assert plan_inputs(load_config(None, []), 20, "cpu", hf).sampling_copy is None


def test_suggestions_bring_the_plan_under_the_limit() -> None:
    cfg = load_config(
        None, ["rollout.max_new_tokens=20000", "optim.activation_checkpointing=false"]
    )
    plan = mp.plan_memory(cfg, "cpu", limit=20e9, prompt_tokens=100)
    assert not plan.fits
    fix = suggest_fix(plan)
    assert fix is not None and "optim.activation_checkpointing=true" in fix
    assert "rollout.engine.params.max_batch_sequences=" in fix  # the KV cache dominates
    overrides = fix.split(" (")[0].split()
    fixed = mp.plan_memory(
        load_config(
            None,
            ["rollout.max_new_tokens=20000", "optim.activation_checkpointing=false", *overrides],
        ),
        "cpu",
        limit=20e9,
        prompt_tokens=100,
    )
    assert fixed.fits
    # what already fits needs nothing; what nothing saves gets None
    assert suggest_fix(replace(plan, limit=1e12, peak=1.0)) is None
    assert suggest_fix(replace(plan, limit=1e9)) is None


def test_auto_checkpointing_turns_on_only_when_the_plan_needs_it() -> None:
    cfg = load_config(None, ["optim.activation_checkpointing=auto"])
    assert not mp.plan_memory(cfg, "cpu", limit=1e12, prompt_tokens=100).activation_checkpointing
    tight = mp.plan_memory(cfg, "cpu", limit=5e9, prompt_tokens=100)
    assert tight.activation_checkpointing and tight.fits


def test_auto_checkpointing_is_off_only_while_the_step_fits_comfortably() -> None:
    """By hand (SHAPE, STEP, chunks of 8): without checkpointing the peak is runtime 470 MB +
    weights 4 MB + AdamW 8 MB + gradients 4 MB + activations 4 x 448,000 + the head's tile
    (2 x 4 x 8 x 1,000) and gradient (256,000) = 488,112,000 bytes; 'comfortably' is at most
    80% of the limit, so the line is a limit of 610,140,000 bytes."""
    p = PlanInputs(SHAPE, STEP, micro_batch_tokens=10_000, chunk_tokens=8)
    assert compute_plan(p).peak == pytest.approx(488_112_000)
    roomy = mp.auto_checkpointing(p, 610_200_000)
    assert not roomy.activation_checkpointing
    assert roomy.peak == pytest.approx(488_112_000)
    assert roomy.why == (
        "off (auto): the step needs 0.5 GB without it, within 80% of the 0.6 GB available"
    )
    # fits, but not comfortably (0.8 x 610,000,000 = 488,000,000 < 488,112,000): on
    tight = mp.auto_checkpointing(p, 610_000_000)
    assert tight.activation_checkpointing and tight.fits
    assert tight.peak < 488_112_000
    assert tight.why.startswith(
        "on (auto): the step would need 0.5 GB without it, over 80% of the 0.6 GB available"
    )
    # does not fit without it at all: on; no limit known: off
    assert mp.auto_checkpointing(p, 400e6).activation_checkpointing
    assert not mp.auto_checkpointing(p, math.inf).activation_checkpointing


@pytest.mark.parametrize(
    ("spec", "want"),
    [
        ("cpu", ("cpu", None)),
        ("cuda", ("cuda", None)),
        ("cuda:80GB", ("cuda", 80e9)),
        ("CUDA:24GiB", ("cuda", 24 * 2**30)),
    ],
)
def test_parse_device(spec: str, want: tuple[str, float | None]) -> None:
    assert parse_device(spec) == want


def test_parse_device_refuses_nonsense_in_one_line() -> None:
    with pytest.raises(ValueError, match="cuda:80GB"):
        parse_device("tpu")


def test_verirl_memory_prints_the_plan_and_what_fits(
    tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["memory", f"model.name={tiny_model_dir}", "--device", "cuda:80GB"]) == 0
    out = capsys.readouterr().out
    for word in ("weights", "activations", "log-prob chunk", "generation", "peak"):
        assert word in out
    assert "the step fits" in out
    code = main(["memory", "rollout.max_new_tokens=300000", "--device", "cuda:8GB"])
    out = capsys.readouterr().out
    assert code == 1 and "does not fit" in out
    assert main(["memory", "--device", "tpu"]) == 2


def test_a_run_that_will_not_fit_is_refused_before_any_work(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from verirl.assembly import build

    built: list[int] = []
    monkeypatch.setattr("verirl.assembly.build_policy", lambda *a, **k: built.append(1))
    monkeypatch.setattr(mp, "memory_limit", lambda device: 1e9)  # a 1 GB machine
    cfg = load_config(None, [f"model.name={tiny_model_dir}", "rollout.max_new_tokens=40000"])
    with pytest.raises(UserInputError, match=r"planned step needs .* GB but this cpu has 1\.0 GB"):
        build(cfg)
    assert built == []  # no model was loaded
