"""Off-policy corrections: hand-computed weights and ratios, the registry, the config."""

from __future__ import annotations

import math

import pytest
import torch

from verirl.assembly import load_config
from verirl.config import ConfigError
from verirl.train.off_policy import (
    OFF_POLICY,
    Corrections,
    DecoupledPPOParams,
    IcePopParams,
    MaskedISParams,
    gspo_logprobs,
    icepop_weights,
    masked_is_weights,
)

# learner (proximal) probs vs engine (behaviour) probs; the third token is padding
PROX = torch.log(torch.tensor([[0.5, 0.2, 0.3], [0.6, 0.3, 0.9]]))
BEHAV = torch.log(torch.tensor([[0.25, 0.8, 0.9], [0.1, 0.3, 0.9]]))
MASK = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
# token ratios: row 0: 2, 0.25; row 1: 6, 1


def _close(actual: torch.Tensor, expected: list[list[float]]) -> None:
    torch.testing.assert_close(actual, torch.tensor(expected), rtol=1e-5, atol=1e-6)


def test_registry_names_every_correction() -> None:
    assert set(OFF_POLICY.names()) >= {
        "none",
        "truncated_is",
        "masked_is",
        "icepop",
        "gspo",
        "decoupled_ppo",
    }


def test_truncated_is_behind_the_registry_by_hand() -> None:
    w, stats = Corrections.build([("truncated_is", {"cap": 1.5})]).weights(PROX, BEHAV, MASK)
    _close(w, [[1.5, 0.25, 1.0], [1.5, 1.0, 1.0]])
    assert stats["tis_weight_mean"] == pytest.approx((1.5 + 0.25 + 1.5 + 1.0) / 4)
    assert stats["tis_truncated_frac"] == pytest.approx(2 / 4)


def test_masked_is_token_level_drops_tokens_above_the_cap() -> None:
    w, stats = masked_is_weights(PROX, BEHAV, MASK, MaskedISParams(cap=3.0, level="token"))
    # 2 kept, 0.25 kept, 6 masked, 1 kept
    _close((w * MASK), [[2.0, 0.25, 0.0], [0.0, 1.0, 0.0]])
    assert stats["is_masked_frac"] == pytest.approx(1 / 4)


def test_masked_is_sequence_level_uses_the_product() -> None:
    w, stats = masked_is_weights(PROX, BEHAV, MASK, MaskedISParams(cap=3.0, level="sequence"))
    # row 0: 2 × 0.25 = 0.5 (kept, on every token); row 1: 6 × 1 = 6 > 3 (whole row masked)
    _close((w * MASK), [[0.5, 0.5, 0.0], [0.0, 0.0, 0.0]])
    assert stats["is_masked_frac"] == pytest.approx(2 / 4)


def test_icepop_zeroes_ratios_outside_the_band() -> None:
    w, stats = icepop_weights(PROX, BEHAV, MASK, IcePopParams(low=0.5, high=5.0))
    # 2 in band, 0.25 below, 6 above, 1 in band
    _close((w * MASK), [[2.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    assert stats["is_masked_frac"] == pytest.approx(2 / 4)
    with pytest.raises(ValueError, match="low <= high"):
        IcePopParams(low=2.0, high=1.0)


def test_decoupled_ppo_weight_is_prox_over_behav_with_an_optional_cap() -> None:
    spec = OFF_POLICY.get("decoupled_ppo")
    w, _ = spec.weights(PROX, BEHAV, MASK, DecoupledPPOParams())
    _close((w * MASK), [[2.0, 0.25, 0.0], [6.0, 1.0, 0.0]])
    w, stats = spec.weights(PROX, BEHAV, MASK, DecoupledPPOParams(cap=4.0))
    _close((w * MASK), [[2.0, 0.25, 0.0], [0.0, 1.0, 0.0]])
    assert stats["is_masked_frac"] == pytest.approx(1 / 4)
    assert spec.needs_proximal


def test_gspo_ratio_is_the_length_normalised_sequence_ratio() -> None:
    logp = torch.log(torch.tensor([[0.4, 0.9, 0.5]])).requires_grad_(True)
    old = torch.log(torch.tensor([[0.1, 0.9, 0.5]]))
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    out = gspo_logprobs(logp, old, mask, None)
    # s = (4 × 1)^(1/2) = 2 on both response tokens
    assert torch.exp(out - old)[0, :2].tolist() == pytest.approx([2.0, 2.0])
    # GSPO-token: each token's gradient is its own log-prob's gradient
    out[0, 1].backward()
    assert logp.grad is not None
    assert logp.grad.tolist() == [[0.0, 1.0, 0.0]]


def test_corrections_compose_in_order() -> None:
    both = Corrections.build([("truncated_is", {"cap": 1.5}), ("icepop", {})])
    w, stats = both.weights(PROX, BEHAV, MASK)
    # TIS (1.5, 0.25 | 1.5, 1) × IcePop (2, 0 | 0, 1)
    _close((w * MASK), [[3.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    assert {"tis_weight_mean", "is_masked_frac"} <= stats.keys()
    assert both.needs_proximal
    assert not Corrections.build([("gspo", {})]).needs_proximal
    none = Corrections.build([])
    assert none.weights(PROX, BEHAV, MASK)[0].tolist() == torch.ones_like(MASK).tolist()
    logp = torch.randn(2, 3)
    assert none.logprobs(logp, logp, MASK) is logp


def test_config_old_tis_cap_still_works_and_new_field_validates() -> None:
    cfg = load_config(None, ["loss.tis_cap=2"])
    assert [(p.name, p.params) for p in cfg.loss.corrections()] == [("truncated_is", {"cap": 2})]
    cfg = load_config(None, ["loss.off_policy.name=icepop", "loss.off_policy.params.low=0.2"])
    assert [p.name for p in cfg.loss.corrections()] == ["icepop"]
    with pytest.raises(ConfigError, match=r"loss\.off_policy\.name"):
        load_config(None, ["loss.off_policy.name=nope"])
    with pytest.raises(ConfigError, match=r"loss\.off_policy\.params"):
        load_config(None, ["loss.off_policy.name=icepop", "loss.off_policy.params.alpha=1"])
    with pytest.raises(ConfigError, match="old log-probs"):
        load_config(None, ["loss.off_policy.name=masked_is", "optim.old_logprobs=rollout"])
    with pytest.raises(ConfigError, match="twice"):
        load_config(None, ["loss.tis_cap=2", "loss.off_policy.name=truncated_is"])


def test_weights_are_exp_of_log_ratio() -> None:
    """A property the four IS corrections share inside their kept region: w = π_prox/π_behav."""
    prox = torch.log(torch.tensor([[0.3]]))
    behav = torch.log(torch.tensor([[0.2]]))
    mask = torch.ones(1, 1)
    for name in ("truncated_is", "masked_is", "icepop", "decoupled_ppo"):
        w, _ = Corrections.build([(name, {})]).weights(prox, behav, mask)
        assert float(w) == pytest.approx(math.exp(math.log(0.3) - math.log(0.2)))
