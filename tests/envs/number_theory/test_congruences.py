"""CongruentEquation (number_theory_congruence.py): hand-solved congruences and the
self-check."""

from __future__ import annotations

from tests.envs.helpers import reward, verdict
from verirl.envs import get_env
from verirl.envs.selfcheck import self_check


def test_congruent_equation() -> None:
    assert verdict("congruent_equation", "5", a=3, c=1, m=7).correct  # 15 = 2·7 + 1
    assert verdict("congruent_equation", "x = 5", a=3, c=1, m=7).correct
    assert reward("congruent_equation", "12", a=3, c=1, m=7) == 0.0  # a solution, not the least
    # 4x ≡ 2 (mod 6): x ≡ 2 (mod 3), least positive 2
    assert verdict("congruent_equation", "2", a=4, c=2, m=6).correct
    # 3x ≡ 0 (mod 6): x ≡ 0 (mod 2), least positive 2 (not 0)
    assert verdict("congruent_equation", "2", a=3, c=0, m=6).correct
    assert reward("congruent_equation", "0", a=3, c=0, m=6) == 0.0
    assert reward("congruent_equation", "2, 5", a=4, c=2, m=6) == -0.5


def test_self_check() -> None:
    report = self_check(get_env("congruent_equation"))
    assert not report.failures, report.failures
