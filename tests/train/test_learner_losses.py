"""The learner's loss: the default update is the clipped surrogate alone; loss terms, their
inputs and the token mask enter the update exactly as declared."""

from __future__ import annotations

import copy

import pytest
import torch

from tests.train.test_learner import VOCAB, _learner, _rollouts, _same_weights
from verirl.config import load_config
from verirl.device import resolve_placement
from verirl.models import tiny_model
from verirl.train.learner import Learner, LearnerSettings, collate
from verirl.train.loss import (
    AggregationScale,
    ClippedSurrogateParams,
    clipped_surrogate,
    token_mean,
)
from verirl.train.optimizers import AdamSettings, build_optimizer
from verirl.train.terms import LOSS_TERMS, TermInputs, TermParams
from verirl.train.token_masks import ConfiguredMask, MaskInputs
from verirl.types import Batch


def _weights(model: torch.nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.parameters()]


def _per_row_logprobs(model: torch.nn.Module, batch: Batch) -> torch.Tensor:
    """log π of every response token, one plain forward per row: [N, R], differentiable."""
    p, n = batch.prompt_width, len(batch)
    rows = []
    for i in range(n):
        keep = batch.attention_mask[i] == 1
        ids = batch.input_ids[i][keep]
        lp_len = int(batch.attention_mask[i, :p].sum())
        r = int(batch.attention_mask[i, p:].sum())
        logits = model(ids[None]).logits[0].float()
        lp = torch.log_softmax(logits[lp_len - 1 : lp_len - 1 + r], -1)
        picked = lp.gather(1, ids[lp_len:, None]).squeeze(1)
        rows.append(torch.nn.functional.pad(picked, (0, batch.response_mask.shape[1] - r)))
    return torch.stack(rows) * batch.response_mask


def test_the_default_update_is_the_clipped_surrogate_alone() -> None:
    """Today's default path, written out: DAPO's clipped surrogate on the engine's log-probs,
    the token mean, one backward, the norm clipped at 1, one AdamW step — nothing else."""
    model = tiny_model(VOCAB, seed=8)
    before, twin = _weights(model), copy.deepcopy(model)
    batch = collate(_rollouts(), torch.randn(9, 7, generator=torch.Generator().manual_seed(3)), 0)
    stats = _learner(model, "optim.lr=1e-2").update(batch)

    trainable = list(twin.parameters())
    adam = AdamSettings(1e-2, (0.9, 0.98), 0.01)
    opt = build_optimizer("adamw", {}, trainable, adam, torch.device("cpu"))
    twin.train()
    logp = _per_row_logprobs(twin, batch)
    mask = batch.response_mask
    loss_mat, _ = clipped_surrogate(
        logp, batch.old_logprobs, batch.advantages, mask, ClippedSurrogateParams()
    )
    loss = token_mean(loss_mat, mask, AggregationScale(float(mask.sum()), len(batch), 48))
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(trainable, 1.0)
    opt.step()

    assert stats["train/loss"] == pytest.approx(float(loss.detach()), rel=1e-5)
    assert stats["train/grad_norm"] == pytest.approx(float(grad_norm), rel=1e-4)
    assert "train/kl_ref" not in stats
    after, want = _weights(model), _weights(twin)
    moved = torch.cat([(a - b).flatten() for a, b in zip(after, before, strict=True)]).norm()
    apart = torch.cat([(a - b).flatten() for a, b in zip(after, want, strict=True)]).norm()
    assert float(apart) < 1e-2 * float(moved)  # Adam turns float noise in ~0 gradients into ±lr


def test_top_entropy_mask_is_zero_advantage_on_the_other_tokens() -> None:
    """The mask selects over the whole minibatch from the entropies before the update, so with
    small micro-batches the update is the plain one on advantages zeroed outside the top ρ."""
    adv = torch.randn(9, 7, generator=torch.Generator().manual_seed(5))
    batch = collate(_rollouts(), adv, pad_id=0)
    masked_model, plain_model = tiny_model(VOCAB, seed=4), tiny_model(VOCAB, seed=4)
    masked = _learner(
        masked_model,
        "optim.lr=1e-2",
        "optim.micro_batch_tokens=25",
        "loss.token_mask.name=top_entropy",
        "loss.token_mask.params={rho: 0.3}",
    )
    plain = _learner(plain_model, "optim.lr=1e-2")
    with torch.no_grad():
        entropy = plain.token_logprobs(batch, entropy=True).entropy
    assert entropy is not None
    keep, _ = ConfiguredMask.build("top_entropy", {"rho": 0.3})(
        MaskInputs(batch.response_mask, batch.advantages, entropy)
    )
    stats = masked.update(batch)
    plain.update(collate(_rollouts(), adv * keep, pad_id=0))
    assert stats["train/tokens_kept"] == pytest.approx(
        float(keep.sum() / batch.response_mask.sum())
    )
    assert 0.2 < stats["train/tokens_kept"] < 0.5
    assert _same_weights(_weights(masked_model), _weights(plain_model))


def test_an_entropy_bonus_trains_every_row_and_its_coefficient_adapts() -> None:
    batch = collate(_rollouts(), torch.randn(9, 7, generator=torch.Generator().manual_seed(5)), 0)
    plain = _learner(tiny_model(VOCAB, seed=4)).update(batch)
    bonus = _learner(tiny_model(VOCAB, seed=4), "loss.terms.entropy.coef=0.1").update(batch)
    # token mean of (ℓ − 0.1·H) = plain loss − 0.1 · mean entropy (same weights, same rows)
    assert bonus["train/loss"] == pytest.approx(plain["train/loss"] - 0.1 * bonus["train/entropy"])

    adv = torch.randn(9, 7, generator=torch.Generator().manual_seed(5))
    adv[3:6] = 0.0  # a group without signal: trained all the same, the bonus reaches it
    adaptive = _learner(
        tiny_model(VOCAB, seed=4), "loss.terms.entropy={coef: 0.0, adaptive: true, target: 100}"
    )
    first = adaptive.update(collate(_rollouts(), adv, pad_id=0))
    second = adaptive.update(collate(_rollouts(), adv, pad_id=0))
    assert first["train/rows_trained"] == 1.0
    assert (first["train/entropy_coef"], second["train/entropy_coef"]) == (0.0, 0.005)
    state = adaptive.state_dict()["loss_terms"]["entropy"]
    assert state == pytest.approx({"coef": 0.01, "last_entropy": second["train/entropy"]})
    restored = _learner(
        tiny_model(VOCAB, seed=4), "loss.terms.entropy={coef: 0.0, adaptive: true, target: 100}"
    )
    restored.load_state_dict(adaptive.state_dict())
    assert restored.state_dict()["loss_terms"] == adaptive.state_dict()["loss_terms"]


class _TeacherParams(TermParams):
    pass


@LOSS_TERMS.register("test_teacher_gap", _TeacherParams, needs=frozenset({"teacher"}))
def _teacher_gap(inputs: TermInputs, params: _TeacherParams) -> tuple[torch.Tensor, dict]:
    """log π_θ − log π_teacher per token (a stand-in for a distillation term)."""
    return inputs.logprobs - inputs.source("teacher"), {}


def test_a_term_reads_a_token_source_the_learner_is_given() -> None:
    with pytest.raises(ValueError, match="test_teacher_gap needs 'teacher'"):
        _learner(tiny_model(VOCAB, seed=4), "loss.terms.test_teacher_gap.coef=1.0")
    calls: list[int] = []

    def teacher(batch: Batch) -> torch.Tensor:
        calls.append(len(batch))
        return torch.full_like(batch.response_mask, -2.0) * batch.response_mask

    model = tiny_model(VOCAB, seed=4)
    cfg = load_config(None, ["loss.terms.test_teacher_gap.coef=1.0", "optim.epochs=2"])
    settings = LearnerSettings.from_config(
        cfg, resolve_placement("cpu", "fp32"), activation_checkpointing=True
    )
    learner = Learner(model, settings, 1, token_sources={"teacher": teacher})
    zero = collate(_rollouts(), torch.zeros(9, 7), pad_id=0)
    stats = learner.update(zero)
    assert calls == [9]  # once per rollout batch, for its every epoch and minibatch
    assert stats["train/rows_trained"] == 1.0  # the term is not advantage-gated
    assert stats["train/grad_norm"] > 0  # the teacher gap alone moved the policy
