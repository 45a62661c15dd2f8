"""The learner: batch layout, shared-prefix log-probs and exact gradient accumulation."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from verirl.config import load_config
from verirl.device import resolve_placement
from verirl.models import tiny_model
from verirl.train.learner import (
    MICRO_BATCH_OVERHEAD_TOKENS,
    Learner,
    LearnerSettings,
    collate,
    pack_rows,
)
from verirl.types import Problem, Rollout, Verdict

PROBLEM = Problem("addition", 0, 0, "x", "1")
VOCAB = 300


def _rollouts(seed: int = 0) -> list[Rollout]:
    """Three groups (prompt lengths 5, 9, 5) of three responses of lengths 1, 4, 7."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for group, plen in enumerate([5, 9, 5]):
        prompt = tuple(torch.randint(3, VOCAB, (plen,), generator=g).tolist())
        for k in range(3):
            n = 1 + 3 * k
            resp = tuple(torch.randint(3, VOCAB, (n,), generator=g).tolist())
            lp = tuple((-torch.rand(n, generator=g)).tolist())
            out.append(
                Rollout(
                    PROBLEM, group, prompt, resp, lp, "t", "stop", verdict=Verdict(float(k), False)
                )
            )
    return out


def test_collate_left_pads_prompts_and_right_pads_responses() -> None:
    rs = _rollouts()
    adv = torch.arange(9 * 7, dtype=torch.float32).reshape(9, 7)
    b = collate(rs, adv, pad_id=0)
    assert b.input_ids.shape == (9, 9 + 7) and b.prompt_width == 9
    # row 0: prompt of 5 right-aligned at column 9, response of 1 token at column 9
    assert b.attention_mask[0].tolist() == [0] * 4 + [1] * 5 + [1] + [0] * 6
    assert b.input_ids[0, 4:9].tolist() == list(rs[0].prompt_ids)
    assert b.input_ids[2, 9:].tolist() == list(rs[2].response_ids)
    assert b.old_logprobs[2].tolist() == pytest.approx(list(rs[2].logprobs))
    assert b.advantages[0].tolist() == [0.0] + [0.0] * 6  # masked beyond the response
    assert b.advantages[2].tolist() == adv[2].tolist()
    assert b.rewards.tolist() == [0, 1, 2] * 3
    sub = b.select(torch.tensor([0, 6]))  # prompts of 5: no prompt padding left
    assert sub.prompt_width == 5 and sub.response_mask.shape[1] == 1


def _learner(model: torch.nn.Module, *overrides: str) -> Learner:
    cfg = load_config(None, ["model.dtype=fp32", *overrides])
    return Learner(
        model,
        LearnerSettings.from_config(
            cfg, resolve_placement("cpu", "fp32"), activation_checkpointing=True
        ),
        1,
    )


def _grads(learner: Learner, batch) -> tuple[torch.Tensor, list[torch.Tensor]]:  # type: ignore[no-untyped-def]
    learner.model.zero_grad()
    lp = learner.logprobs(batch)
    (lp * batch.response_mask * batch.advantages).sum().backward()
    return lp.detach() * batch.response_mask, [p.grad.clone() for p in learner.model.parameters()]


def test_shared_prefix_logprobs_and_gradients_equal_the_full_pass() -> None:
    model = tiny_model(VOCAB, seed=2)
    batch = collate(_rollouts(), torch.randn(9, 7), pad_id=0)
    lp_shared, g_shared = _grads(_learner(model, "optim.share_prompt_prefix=true"), batch)
    lp_full, g_full = _grads(_learner(model, "optim.share_prompt_prefix=false"), batch)
    assert torch.allclose(lp_shared, lp_full, atol=1e-5)
    for a, b in zip(g_shared, g_full, strict=True):
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-4)


def test_logprobs_match_a_per_row_forward() -> None:
    model = tiny_model(VOCAB, seed=3)
    rs = _rollouts()
    batch = collate(rs, torch.zeros(9, 7), pad_id=0)
    lp = _learner(model).logprobs(batch)
    for i, r in enumerate(rs):
        ids = torch.tensor([list(r.prompt_ids) + list(r.response_ids)])
        with torch.no_grad():
            ref = torch.log_softmax(model(ids).logits[0, :-1].float(), -1)
        ref = ref[len(r.prompt_ids) - 1 :].gather(1, ids[0, len(r.prompt_ids) :, None]).squeeze(1)
        assert torch.allclose(lp[i, : len(r.response_ids)].detach(), ref, atol=1e-5)


@pytest.mark.parametrize("share", ["true", "false"])
def test_micro_batching_gives_the_same_update(share: str) -> None:
    rs = _rollouts()
    rs = [replace(r, verdict=Verdict(float(i % 3), False)) for i, r in enumerate(rs)]
    adv = torch.randn(9, 7, generator=torch.Generator().manual_seed(5))
    after = []
    for budget in (10_000, 25):  # one micro-batch vs many
        model = tiny_model(VOCAB, seed=4)
        learner = _learner(
            model,
            f"optim.micro_batch_tokens={budget}",
            "optim.lr=1e-2",
            f"optim.share_prompt_prefix={share}",
        )
        stats = learner.update(collate(rs, adv, pad_id=0))
        after.append(([p.detach().clone() for p in model.parameters()], stats))
    (p1, s1), (p2, s2) = after
    assert s1["train/loss"] == pytest.approx(s2["train/loss"], rel=1e-4)
    assert s1["train/grad_norm"] == pytest.approx(s2["train/grad_norm"], rel=1e-4)
    # Adam normalises each coordinate by its own gradient size, so float noise in a near-zero
    # gradient can move that coordinate by up to lr; compare the update as a whole.
    delta = torch.cat([(a - b).flatten() for a, b in zip(p1, p2, strict=True)])
    assert float(delta.norm()) < 1e-3 * float(torch.cat([a.flatten() for a in p1]).norm())


def _silent_group_update(skip: bool, *overrides: str) -> list[tuple[list[torch.Tensor], dict]]:
    """Two updates of a fresh model: group 1's rows without signal (advantage 0), then a
    batch where no row has any; the weights and statistics after each."""
    model = tiny_model(VOCAB, seed=4)
    learner = _learner(
        model, "optim.lr=1e-2", f"optim.skip_zero_advantage_rows={str(skip).lower()}", *overrides
    )
    adv = torch.randn(9, 7, generator=torch.Generator().manual_seed(5))
    adv[3:6] = 0.0  # group 1: equal rewards
    out = []
    for a in (adv, torch.zeros(9, 7)):
        stats = learner.update(collate(_rollouts(), a, pad_id=0))
        out.append(([p.detach().clone() for p in model.parameters()], stats))
    return out


def _same_weights(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    delta = torch.cat([(x - y).flatten() for x, y in zip(a, b, strict=True)])
    return float(delta.norm()) < 1e-6 * float(torch.cat([x.flatten() for x in a]).norm())


def test_rows_without_signal_are_skipped_and_the_update_is_the_same() -> None:
    skipped, every = _silent_group_update(True), _silent_group_update(False)
    (w1, s1), (w2, s2) = skipped
    (v1, t1), (v2, _) = every
    assert s1["train/rows_trained"] == pytest.approx(6 / 9) and t1["train/rows_trained"] == 1.0
    assert s1["train/loss"] == pytest.approx(t1["train/loss"], rel=1e-5)
    assert s1["train/grad_norm"] == pytest.approx(t1["train/grad_norm"], rel=1e-5)
    assert _same_weights(w1, v1)
    # no row with signal: nothing runs, and the optimizer still takes its (momentum) step
    assert s2["train/rows_trained"] == 0.0 and "train/entropy" not in s2
    assert s2["train/loss"] == 0.0 and s2["train/grad_norm"] == 0.0
    assert not _same_weights(w1, w2)  # Adam's momentum moved the weights
    assert _same_weights(w2, v2)


def test_rows_are_not_skipped_when_a_kl_term_gives_them_a_gradient() -> None:
    (_, stats), _ = _silent_group_update(True, "loss.terms.kl.coef=0.1")
    assert stats["train/rows_trained"] == 1.0


def test_kl_penalty_uses_the_frozen_initial_policy() -> None:
    model = tiny_model(VOCAB, seed=6)
    learner = _learner(model, "loss.terms.kl.coef=0.5", "optim.lr=1e-2")
    batch = collate(_rollouts(), torch.randn(9, 7), pad_id=0)
    first = learner.update(batch)  # measured before the first step: π_θ = π_ref
    second = learner.update(batch)
    assert first["train/kl_ref"] == pytest.approx(0.0, abs=1e-7)
    assert second["train/kl_ref"] > 1e-6  # one step later the policy has moved away


def test_packing_splits_off_long_responses_when_that_saves_work() -> None:
    # 6 rows of response 17 and 2 of 64, prompts of 75 in two groups (rows 0-3, 4-7).
    # one micro-batch: 2·75 + 8·64 = 662 (+64 overhead) = 726
    # split {0..5} / {6, 7}: (2·75 + 6·17) + (1·75 + 2·64) = 252 + 203 = 455 (+128) = 583
    keys = [0, 0, 0, 0, 1, 1, 1, 1]
    got = pack_rows([75] * 8, [17] * 6 + [64] * 2, keys, budget=10_000, shared_prefix=True)
    assert got == [[0, 1, 2, 3, 4, 5], [6, 7]]
    assert MICRO_BATCH_OVERHEAD_TOKENS == 64


def test_packing_keeps_a_group_together_when_sharing_pays() -> None:
    # one prompt of 200 tokens, responses 10 and 30: together 200 + 2·30 = 260 (+64);
    # apart (200 + 10) + (200 + 30) = 440 (+128)
    assert pack_rows([200, 200], [10, 30], [0, 0], 10_000, True) == [[0, 1]]
    # without prefix sharing: together 2·(200+30) = 460 (+64) vs apart 210 + 230 (+128)
    assert pack_rows([200, 200], [10, 30], [0, 0], 10_000, False) == [[0, 1]]


def test_packing_respects_the_budget() -> None:
    segments = pack_rows([10] * 6, [10] * 6, [0, 1, 2, 3, 4, 5], budget=45, shared_prefix=True)
    assert sorted(i for s in segments for i in s) == list(range(6))
    for s in segments:  # each distinct prompt costs 10, each row 10
        assert len(s) * 10 + len(s) * 10 <= 45 or len(s) == 1
