"""Token masks by hand: every token, and the top-ρ entropy tokens of "Beyond the 80/20 Rule"."""

from __future__ import annotations

import pytest
import torch

from verirl.train.token_masks import TOKEN_MASKS, ConfiguredMask, MaskInputs

# two rows; row 1's last token is padding (its entropy must not count)
ENTROPY = torch.tensor([[0.1, 0.5, 0.9], [0.3, 0.7, 5.0]])
MASK = torch.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]])


def test_none_keeps_every_token() -> None:
    keep, stats = ConfiguredMask.build("none", {})(MaskInputs(MASK, torch.zeros_like(MASK)))
    assert keep.tolist() == torch.ones_like(MASK).tolist() and stats == {}
    assert TOKEN_MASKS.get("none").needs == frozenset()


def test_top_entropy_keeps_the_top_rho_of_the_trained_tokens() -> None:
    # trained entropies sorted: 0.1 0.3 0.5 0.7 0.9; the 0.6-quantile (ρ = 0.4) sits at
    # position 0.6·4 = 2.4: 0.5 + 0.4·(0.7 − 0.5) = 0.58 → keep 0.7 and 0.9, 2 of 5 tokens
    mask = ConfiguredMask.build("top_entropy", {"rho": 0.4})
    assert mask.needs == {"entropy"}
    keep, stats = mask(MaskInputs(MASK, torch.zeros_like(MASK), ENTROPY))
    assert keep.tolist() == [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]]
    assert stats["top_entropy_threshold"] == pytest.approx(0.58)
    assert stats["tokens_kept"] == pytest.approx(0.4)


def test_top_entropy_edges() -> None:
    every = ConfiguredMask.build("top_entropy", {"rho": 1.0})
    keep, _ = every(MaskInputs(MASK, torch.zeros_like(MASK), ENTROPY))
    assert keep.tolist() == MASK.tolist()  # ρ = 1: every trained token, never padding
    none_trained = torch.zeros_like(MASK)
    keep, stats = every(MaskInputs(none_trained, none_trained, ENTROPY))
    assert float(keep.sum()) == 0.0 and stats["tokens_kept"] == 0.0
    assert ConfiguredMask.build("top_entropy", {}).params.rho == 0.2  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="rho"):
        ConfiguredMask.build("top_entropy", {"rho": 1.5})
