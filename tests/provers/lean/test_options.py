"""The options the Lean backends share."""

from __future__ import annotations

import pytest

from verirl.provers.lean.options import LeanOptions


def test_overrides_apply_on_top_of_options() -> None:
    base = LeanOptions(split_bullets=False)
    built = LeanOptions.build(base, {"check_axioms": False})
    assert (built.split_bullets, built.check_axioms) == (False, False)
    assert LeanOptions.build(None, {}) == LeanOptions()


def test_unknown_option_is_named() -> None:
    with pytest.raises(TypeError, match="split_bulets"):
        LeanOptions.build(None, {"split_bulets": True})


def test_never_allowed_axioms_are_refused() -> None:
    with pytest.raises(ValueError, match="sorryAx"):
        LeanOptions(allowed_axioms=("sorryAx",))
