"""The ``provers:`` config section and the run's checkers: one name for Lean (``lean``), the
old ``lean4`` still read with a deprecation warning."""

from __future__ import annotations

import pytest

from verirl.config import load_config
from verirl.provers.base import FormalProblem
from verirl.provers.lean.options import LeanOptions
from verirl.provers.settings import Provers, ProversConfig


def test_formal_problem_reads_lean4_as_lean() -> None:
    with pytest.warns(DeprecationWarning, match="'lean4' is deprecated; write 'lean'"):
        p = FormalProblem(system="lean4", name="t", statement="theorem t : True := by")  # type: ignore[arg-type]
    assert p == FormalProblem(system="lean", name="t", statement="theorem t : True := by")


def test_config_section_lean4_is_read_as_lean() -> None:
    with pytest.warns(DeprecationWarning):
        cfg = ProversConfig.model_validate({"lean4": {"timeout_s": 7.0}})
    assert cfg.lean.timeout_s == 7.0
    with pytest.warns(DeprecationWarning):
        both = ProversConfig.model_validate({"lean4": {"timeout_s": 5.0}, "lean": {"url": "u"}})
    assert (both.lean.timeout_s, both.lean.url) == (5.0, "u")


def test_a_run_config_written_with_lean4_still_loads(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "run.yaml"
    path.write_text("provers:\n  lean4:\n    timeout_s: 9\n")
    with pytest.warns(DeprecationWarning):
        cfg = load_config(path)
    assert cfg.provers.lean.timeout_s == 9.0


def test_checker_settings_accept_the_old_name() -> None:
    provers = Provers(ProversConfig.model_validate({"lean": {"timeout_s": 3.0}}))
    with pytest.warns(DeprecationWarning):
        assert provers.timeout_s("lean4") == 3.0
    assert provers.timeout_s("lean") == 3.0


def test_lean_defaults_are_defined_once() -> None:
    assert ProversConfig().lean.allowed_axioms == list(LeanOptions().allowed_axioms)
