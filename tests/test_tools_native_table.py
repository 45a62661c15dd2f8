"""experiments/tools_native.py: the table it prints from the runs' metrics (a finished run and
one still training), computed by hand."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml

SCRIPT = Path(__file__).parents[1] / "experiments" / "tools_native.py"


def _load():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("tools_native", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _eval(phase: str, accuracy: float, wellformed: float, refused: float) -> dict[str, float]:
    return {
        f"{phase}/accuracy": accuracy,
        f"{phase}/episode/mean_turns": 2.0,
        f"{phase}/episode/tools/wellformed_rate": wellformed,
        f"{phase}/episode/tools/calls_per_turn": 0.5,
        f"{phase}/episode/tools/refused_call_rate": refused,
    }


def _run(root: Path, name: str, credit: str, rows: list[dict[str, float]]) -> None:
    run = root / name
    run.mkdir(parents=True)
    cfg = {"credit": {"name": credit}, "eval": {"difficulties": [0, 2], "problems": 2}}
    (run / "config.yaml").write_text(yaml.safe_dump(cfg))
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_table_from_a_finished_and_a_running_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tools_native = _load()
    before = _eval("eval_before", 0.25, 0.25, 0.5)
    _run(
        tmp_path,
        "tcpo-s0",
        "tcpo",
        [before, {"time/step_s": 10.0}, {"time/step_s": 20.0}, _eval("eval_after", 0.75, 0.5, 0.0)],
    )
    _run(tmp_path, "mt_grpo-s0", "mt_grpo", [before, {"time/step_s": 30.0}])
    table = {e["run"]: e for e in tools_native.summarise(tmp_path)}
    done = table["tcpo-s0"]
    # 2 difficulties x 2 problems = 4 episodes of 2 replies; one call per episode
    assert (done["steps"], done["step_s"]) == (2, 15.0)
    assert (done["eval_after/episodes"], done["eval_after/turns"], done["eval_after/calls"]) == (
        4,
        8,
        4,
    )
    assert (done["eval_before/accepted"], done["eval_after/accepted"]) == (0.5, 1.0)
    assert "eval_after/success" not in table["mt_grpo-s0"]
    tools_native.main(tmp_path)
    out = capsys.readouterr().out
    assert "| tcpo-s0 | tcpo | 2 | 15 | 0.250 [" in out and "| 0.750 [" in out
    assert "| mt_grpo-s0 | mt_grpo | 1 | 30 |" in out and "| — |" in out
    assert "tcpo eval_after/success: mean 0.750 over 1 seeds" in out
    assert "mt_grpo eval_after" not in out  # no finished run to average
