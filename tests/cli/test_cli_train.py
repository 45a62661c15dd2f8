"""``verirl train`` followed from a log file: with stdout not a terminal (as under ``> log``,
``nohup`` or CI) one parseable line per step and every warning as it happens, the same lines
in ``run.log``, and the registered loggers fed from the same run."""

from __future__ import annotations

import importlib.util
import json
import logging
from pathlib import Path

import pytest

from tests.conftest import TinyRun
from tests.train import wandb_files
from verirl.cli import main
from verirl.cli.train import REPEATS, _RunOutput

STEP_KEYS = [
    *("step", "reward", "acc", "windows", "step_s", "tokens_per_s"),
    *("heap_in_use_mb", "peak_rss_mb", "rss_mb"),  # every memory/* metric, sorted
]
HAS_WANDB = importlib.util.find_spec("wandb") is not None  # not in the lowest-versions stage


def _parse(line: str) -> dict[str, str]:
    """A step line's ``key=value`` words (every word must be one)."""
    words = [w.split("=", 1) for w in line.split()]
    assert all(len(w) == 2 for w in words), f"not key=value words: {line!r}"
    return dict(words)  # type: ignore[arg-type]


def test_a_run_to_a_file_prints_a_line_per_step_and_its_warnings(
    tiny_run: TinyRun,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """max_new_tokens=2 on a random model: every answer is cut (truncation warns at step 2)
    and no group has a signal (no_signal at step 3)."""
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    run_dir = tmp_path / "runs" / "followed"
    code = main(
        [
            "train",
            *tiny_run(
                run_dir,
                3,
                "reward.name=env",
                "run.save_every=0",
                "run.log_samples=0",
                "rollout.group_size=3",
                "rollout.max_new_tokens=2",
                "curriculum.environments=[addition, gcd]",
                "run.loggers=[tensorboard"
                + (", {name: wandb, params: {mode: offline}}]" if HAS_WANDB else "]"),
            ),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out.splitlines()
    rows = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines()]

    steps = [_parse(line) for line in out if line.startswith("step=")]
    assert [s["step"] for s in steps] == ["1/3", "2/3", "3/3"]
    for parsed, row in zip(steps, rows, strict=True):
        assert list(parsed) == STEP_KEYS
        assert float(parsed["reward"]) == pytest.approx(row["rollout/reward"], abs=5e-4)
        assert float(parsed["acc"]) == pytest.approx(row["rollout/accuracy"], abs=5e-4)
        assert float(parsed["step_s"]) == pytest.approx(row["time/step_s"], abs=0.05)
        assert parsed["windows"] == "addition:0-0,gcd:0-0"
        assert float(parsed["peak_rss_mb"]) == pytest.approx(row["memory/peak_rss_mb"], abs=0.5)
        assert float(parsed["peak_rss_mb"]) >= float(parsed["rss_mb"]) > 100  # a live process

    # each warning right after the step that raised it
    printed = [line for line in out if line.startswith(("step=", "warning:"))]
    kinds = [line.split()[0] if line.startswith("step=") else line for line in printed]
    assert kinds[0] == "step=1/3" and kinds[1] == "step=2/3"
    assert kinds[2].startswith("warning: run health: step 2: truncation")
    assert kinds[3] == "step=3/3"
    assert kinds[4].startswith("warning: run health: step 3: no_signal")
    assert len(printed) == 5

    # run.log: the same step lines and the same warnings
    log = (run_dir / "run.log").read_text().splitlines()
    logged = [line.split("INFO verirl.steps: ", 1)[1] for line in log if "verirl.steps" in line]
    assert logged == [line for line in out if line.startswith("step=")]
    warned = [line for line in log if " WARNING verirl.health: " in line]
    assert [w.split(": ", 1)[1] for w in warned] == [p[len("warning: ") :] for p in printed[2::2]]

    # the loggers saw the same steps
    assert list((run_dir / "tensorboard").glob("events.out.tfevents.*"))
    if HAS_WANDB:
        wandb_rows = wandb_files.wait_for_history(wandb_files.offline_run_file(run_dir), 3)
        assert [wandb_rows[s]["rollout/reward"] for s in (1, 2, 3)] == [
            r["rollout/reward"] for r in rows
        ]


def _warning(msg: str, *args: object, name: str = "verirl.test") -> logging.LogRecord:
    return logging.LogRecord(name, logging.WARNING, __file__, 1, msg, args, None)


def test_repeated_warnings_are_shown_a_few_times_then_left_to_run_log(
    capsys: pytest.CaptureFixture[str],
) -> None:
    output = _RunOutput(live=True, plain=True)
    for i in range(REPEATS + 3):
        output.emit(_warning("verifier error in %s", f"env{i}"))
    output.emit(_warning("another warning"))
    output.emit(logging.LogRecord("verirl.steps", logging.INFO, __file__, 1, "step=1/2", (), None))
    output.emit(logging.LogRecord("verirl.train", logging.INFO, __file__, 1, "precision", (), None))
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        *[f"warning: verifier error in env{i}" for i in range(REPEATS)],
        "warning: more warnings like this one go to run.log only (verirl.test)",
        "warning: another warning",
        "step=1/2",
    ]
    # the live console (stderr here) shows the same warnings, and no step line
    assert "verifier error in env0" in captured.err and "another warning" in captured.err
    assert "step=1/2" not in captured.err and "precision" not in captured.err


def test_a_terminal_gets_no_plain_lines(capsys: pytest.CaptureFixture[str]) -> None:
    output = _RunOutput(live=True, plain=False)
    output.emit(logging.LogRecord("verirl.steps", logging.INFO, __file__, 1, "step=1/2", (), None))
    output.emit(_warning("run health: something"))
    captured = capsys.readouterr()
    assert captured.out == "" and "run health: something" in captured.err
