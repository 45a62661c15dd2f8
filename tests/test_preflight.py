"""``verirl preflight``: the base policy sampled on a few problems per environment, with
warnings where no group can learn and suggested settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tiny_run import tiny_run
from verirl.cli import main
from verirl.config import load_config
from verirl.preflight import (
    PreflightReport,
    PreflightRow,
    _advise,
    preflight,
    preflight_problems,
    starting_difficulties,
)


def _tiny(model_dir: Path, run_dir: Path, *extra: str) -> list[str]:
    """The shared tiny run's settings with the environments' reward, 3 samples a problem."""
    return tiny_run(model_dir, run_dir, 1, "reward.name=env", "rollout.group_size=3", *extra)


def test_a_random_model_gets_no_signal_warnings_and_suggestions(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    cfg = load_config(
        None,
        _tiny(tiny_model_dir, tmp_path / "run", "rollout.max_new_tokens=4", "rollout.few_shot=[]"),
    )
    report = preflight(cfg, problems=2)
    envs = cfg.curriculum.resolved_environments()
    assert [(r.env, r.difficulty) for r in report.rows] == [(e, 0) for e in envs]
    for r in report.rows:
        assert (r.groups, r.samples) == (2, 6)
        assert r.format_rate == 0.0 and r.accuracy == 0.0 and r.effective_ratio == 0.0
        assert r.truncated > 0.5 and 0 < r.mean_tokens <= 4
    assert len(report.warnings) == len(envs)
    assert all("no learning signal" in w for w in report.warnings)
    text = " ".join(report.suggestions)
    assert "rollout.few_shot" in text and "rollout.max_new_tokens=8" in text
    assert not list(tmp_path.iterdir())  # no run directory written


def test_the_command_prints_the_table_and_the_warnings(
    tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _tiny(
        tiny_model_dir,
        tmp_path / "run",
        "rollout.max_new_tokens=3",
        "curriculum.environments=[addition]",
    )
    assert main(["preflight", *args, "--problems", "1"]) == 0
    out = capsys.readouterr().out
    assert "addition" in out and "warning:" in out and "preflight took" in out
    assert main(["preflight", *args, "--problems", "0"]) == 2


def test_starting_difficulties_follow_the_window() -> None:
    assert starting_difficulties(load_config(None, [])) == [0]
    cfg = load_config(None, ["curriculum.initial_difficulty=5", "curriculum.window=4"])
    assert starting_difficulties(cfg) == [2, 4, 5]
    static = load_config(None, ["curriculum.kind=static", "curriculum.static_high=20"])
    assert starting_difficulties(static) == [0, 10, 20]
    problems = preflight_problems(["addition"], [0, 1], 2)
    assert [(p.difficulty, p.seed) for p in problems] == [(0, 0), (0, 1), (1, 0), (1, 1)]


def _row(env: str, fmt: float, acc: float, ratio: float, truncated: float = 0.0) -> PreflightRow:
    return PreflightRow(env, 0, 4, 24, fmt, acc, truncated, 20.0, ratio)


def test_advice_names_too_easy_and_too_hard_environments() -> None:
    cfg = load_config(None, [])
    report = PreflightReport(
        [
            _row("addition", 1.0, 1.0, 0.0),
            _row("chain_sum", 0.9, 0.0, 0.0),
            _row("m", 0.6, 0.3, 0.5),
        ]
    )
    _advise(cfg, report)
    assert [w.split(":")[0] for w in report.warnings] == ["addition", "chain_sum"]
    assert "too easy" in report.warnings[0]
    text = " ".join(report.suggestions)
    assert "addition: ≥ 90% correct" in text and "curriculum.initial_difficulty=2" in text
    assert "chain_sum: answers are readable but never correct" in text
    healthy = PreflightReport([_row("m", 0.6, 0.3, 0.5)])
    _advise(cfg, healthy)
    assert healthy.warnings == [] and healthy.suggestions == []
