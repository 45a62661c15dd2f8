"""Truncated importance sampling of the engine/learner mismatch, and the drift metrics."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
import torch

from verirl.config import load_config
from verirl.device import resolve_placement
from verirl.models import tiny_model
from verirl.train.learner import Learner, LearnerSettings, collate
from verirl.train.loss import logprob_mismatch
from verirl.train.off_policy import truncated_is_weights
from verirl.types import Problem, Rollout, Verdict

VOCAB = 300


def test_tis_weights_by_hand() -> None:
    # learner probs 0.5, 0.2, (0.3 masked); engine probs 0.25, 0.8, 0.9
    learner = torch.log(torch.tensor([[0.5, 0.2, 0.3]]))
    engine = torch.log(torch.tensor([[0.25, 0.8, 0.9]]))
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    # ratios 0.5/0.25 = 2 (capped at 1.5) and 0.2/0.8 = 0.25; a masked token weighs 1
    w = truncated_is_weights(learner, engine, mask, cap=1.5)
    assert w[0].tolist() == pytest.approx([1.5, 0.25, 1.0])
    assert truncated_is_weights(learner, engine, mask, cap=3.0)[0].tolist() == pytest.approx(
        [2.0, 0.25, 1.0]
    )
    drift = logprob_mismatch(learner, engine, mask)  # |ln 2|, |ln 4|
    assert drift["engine_logp_diff_mean"] == pytest.approx(1.5 * math.log(2))
    assert drift["engine_logp_diff_max"] == pytest.approx(math.log(4))
    # k3 = e^δ − δ − 1 with δ = ln(learner/engine): (2 − ln 2 − 1 + 0.25 + ln 4 − 1) / 2
    assert drift["engine_logp_kl"] == pytest.approx((0.25 + math.log(2)) / 2)
    with pytest.raises(ValueError, match="cap"):
        truncated_is_weights(learner, engine, mask, cap=0.0)


def _rollouts() -> list[Rollout]:
    g = torch.Generator().manual_seed(0)
    out = []
    for group in range(2):
        prompt = tuple(torch.randint(3, VOCAB, (6,), generator=g).tolist())
        for k in range(3):
            resp = tuple(torch.randint(3, VOCAB, (4,), generator=g).tolist())
            out.append(
                Rollout(
                    Problem("addition", 0, 0, "x", "1"),
                    group,
                    prompt,
                    resp,
                    (0.0,) * 4,
                    "t",
                    "stop",
                    verdict=Verdict(float(k), False),
                )
            )
    return out


def _learner(*overrides: str, exact: bool = True) -> Learner:
    cfg = load_config(None, ["model.dtype=fp32", "optim.lr=1e-3", *overrides])
    settings = LearnerSettings.from_config(
        cfg, resolve_placement("cpu", "fp32"), exact, activation_checkpointing=True
    )
    return Learner(tiny_model(VOCAB, seed=7), settings, 1)


@pytest.mark.parametrize(("cap", "weight"), [(2.0, 1.2), (1.1, 1.1)])
def test_learner_weights_the_loss_by_the_truncated_ratio(cap: float, weight: float) -> None:
    """Engine log-probs = learner's − ln 1.2 on every token: the ratio is 1.2 everywhere, so
    the TIS loss is min(1.2, cap) × the uncorrected loss, and the drift is ln 1.2."""
    rs = _rollouts()
    adv = torch.linspace(0.2, 1.0, 6)[:, None].expand(6, 4).contiguous()
    probe = _learner()
    with torch.no_grad():
        exact_lp = probe.logprobs(collate(rs, adv, 0))
    rs = [
        replace(r, logprobs=tuple((exact_lp[i] - math.log(1.2)).tolist())) for i, r in enumerate(rs)
    ]
    plain = _learner("optim.old_logprobs=recompute").update(collate(rs, adv, 0))
    tis = _learner(f"loss.tis_cap={cap}", exact=False).update(collate(rs, adv, 0))
    assert plain["train/engine_logp_diff_mean"] == pytest.approx(math.log(1.2), abs=1e-5)
    assert plain["train/engine_logp_diff_max"] == pytest.approx(math.log(1.2), abs=1e-5)
    assert "train/tis_weight_mean" not in plain
    assert tis["train/tis_weight_mean"] == pytest.approx(weight, rel=1e-5)
    assert tis["train/tis_truncated_frac"] == (1.0 if cap < 1.2 else 0.0)
    assert tis["train/loss"] == pytest.approx(weight * plain["train/loss"], rel=1e-4)


def test_pi_old_is_recomputed_only_on_the_rows_that_train() -> None:
    """Group 0's rewards are all equal (advantage 0: its rows never run), group 1's are not.
    Engine log-probs: the learner's − ln 1.2 on group 1, the learner's − 5 on group 0. Only
    group 1 is recomputed, so the mismatch is ln 1.2 (group 0's −5 is not measured), and the
    update is the one where group 0 had group 1's offset too."""
    rs = _rollouts()
    adv = torch.cat([torch.zeros(3, 4), torch.linspace(0.2, 1.0, 3)[:, None].expand(3, 4)])
    with torch.no_grad():
        exact_lp = _learner().logprobs(collate(rs, adv, 0))

    def shifted(group0: float) -> list[Rollout]:
        return [
            replace(
                r, logprobs=tuple((exact_lp[i] - (group0 if i < 3 else math.log(1.2))).tolist())
            )
            for i, r in enumerate(rs)
        ]

    got = _learner("optim.old_logprobs=recompute").update(collate(shifted(5.0), adv, 0))
    same = _learner("optim.old_logprobs=recompute").update(collate(shifted(math.log(1.2)), adv, 0))
    assert got["train/engine_logp_diff_mean"] == pytest.approx(math.log(1.2), abs=1e-5)
    assert got["train/engine_logp_diff_max"] == pytest.approx(math.log(1.2), abs=1e-5)
    assert got["train/loss"] == same["train/loss"] and got["train/rows_trained"] == 0.5


def test_auto_recomputes_only_for_an_inexact_engine() -> None:
    rs = _rollouts()
    adv = torch.ones(6, 4)
    exact = _learner().update(collate(rs, adv, 0))  # hf: sampling log-probs used as π_old
    assert "train/engine_logp_diff_mean" not in exact
    inexact = _learner(exact=False).update(collate(rs, adv, 0))
    assert inexact["train/engine_logp_diff_mean"] > 0.5  # 0.0 stored vs real log-probs


def test_tis_with_rollout_logprobs_is_refused() -> None:
    with pytest.raises(ValueError, match="tis_cap"):
        load_config(None, ["loss.tis_cap=2", "optim.old_logprobs=rollout"])


def test_pi_old_from_the_update_pass_equals_a_separate_pass() -> None:
    """One epoch of one minibatch: π_old is read off the update's own forward pass (no no-grad
    pass before it). With TIS truncating some tokens and log-probs off by a different amount
    on every token, the update (weights after the step), the loss, the mismatch and TIS's
    statistics equal those of a separate no-grad pass, and the model runs once, not twice."""
    rs = _rollouts()
    adv = torch.cat([torch.zeros(3, 4), torch.linspace(0.2, 1.0, 3)[:, None].expand(3, 4)])
    offsets = torch.linspace(0.9, -0.6, 24).reshape(6, 4)
    with torch.no_grad():
        exact_lp = _learner().logprobs(collate(rs, adv, 0))
    rs = [replace(r, logprobs=tuple((exact_lp[i] + offsets[i]).tolist())) for i, r in enumerate(rs)]
    learners = {fuse: _learner("loss.tis_cap=1.3", exact=False) for fuse in (True, False)}
    calls = dict.fromkeys(learners, 0)
    for fuse, learner in learners.items():
        learner.fuse_old_logprobs = fuse

        def count(*_: object, fuse: bool = fuse) -> None:
            calls[fuse] += 1

        learner.model.get_submodule("model.layers.0").register_forward_pre_hook(count)
    stats = {fuse: learner.update(collate(rs, adv, 0)) for fuse, learner in learners.items()}
    assert calls[False] == 2 * calls[True] > 0  # the first layer ran in half the passes
    for key in ("loss", "engine_logp_diff_mean", "engine_logp_kl", "tis_weight_mean"):
        assert stats[True][f"train/{key}"] == pytest.approx(stats[False][f"train/{key}"], rel=1e-5)
    assert 0 < stats[True]["train/tis_truncated_frac"] == stats[False]["train/tis_truncated_frac"]
    for a, b in zip(
        learners[True].model.parameters(), learners[False].model.parameters(), strict=True
    ):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(
    "override", ["optim.epochs=2", "optim.minibatches=2", "loss.token_mask.name=top_entropy"]
)
def test_pi_old_needs_its_own_pass_when_the_policy_moves_first(override: str) -> None:
    """A second epoch or minibatch runs after a step (π_old must be the weights before it),
    and an entropy token mask reads π_old's entropies before the first pass."""
    learner = _learner(override, exact=False)
    assert learner.settings.recompute_old_logprobs and not learner.fuses_old_logprobs(6)
    assert _learner(exact=False).fuses_old_logprobs(6)
