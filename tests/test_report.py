"""Run reports (verirl.report) on hand-written run directories.

Expected numbers are worked out by hand from the synthetic metrics below.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest

from verirl.report import (
    RunDirError,
    compare_runs,
    load_run,
    moving_average,
    plot_run,
    summarize,
    write_report,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
CONFIG = "run:\n  name: {name}\n  steps: 4\ncurriculum:\n  environments: [addition, chain_sum]\n"


def _step_row(step: int, reward: float | None, acc: float | None, **extra: Any) -> dict[str, Any]:
    return {
        "step": step,
        "time": 1000.0 + 10 * step,
        "rollout/reward": reward,
        "rollout/accuracy": acc,
        "train/loss": 0.1 * step,
        "train/grad_norm": None if step == 2 else 1.0,  # a non-finite value, logged as null
        "train/clip_frac": 0.01,
        "train/approx_kl_old": 0.001,
        "time/rollout_s": 4.0,
        "time/train_s": 6.0,
        "time/step_s": 10.0,
        "throughput/tokens_per_s": 100.0 * step,
        "curriculum/addition/h": float(step),
        "curriculum/addition/low": max(0.0, step - 2.0),
        "curriculum/addition/acc_at_h": 0.5,
        "curriculum/chain_sum/h": 1.0,
        "curriculum/chain_sum/low": 0.0,
        "curriculum/last/accuracy": 0.3,
        **extra,
    }


def make_run(root: Path, name: str = "synthetic", extra: dict[str, Any] | None = None) -> Path:
    """Four training steps between an eval_before row (step 0) and an eval_after row (step 4).

    Overall held-out accuracy 0.25 → 0.40 (+15.0 pts); addition 0.30 → 0.55 (+25.0 pts);
    chain_sum 0.20 → 0.25 (+5.0 pts). Rewards 0.1, 0.3, null, 0.5: final 0.5, mean 0.3.
    Final h: addition 4 (window 2–4), chain_sum 1 (window 0–1). Wall time 1000 → 1045 s.
    """
    run = root / name
    run.mkdir(parents=True)
    (run / "config.yaml").write_text(CONFIG.format(name=name))
    rows = [
        {
            "step": 0,
            "time": 1000.0,
            "eval_before/accuracy": 0.25,
            "eval_before/addition/accuracy": 0.30,
            "eval_before/addition/format": 0.9,
            "eval_before/chain_sum/accuracy": 0.20,
            "eval_before/chain_sum/format": 0.8,
        },
        _step_row(1, 0.1, 0.2, **(extra or {})),
        _step_row(2, 0.3, 0.4, **(extra or {})),
        _step_row(3, None, None, **(extra or {})),
        _step_row(4, 0.5, 0.6, **(extra or {})),
        {
            "step": 4,
            "time": 1045.0,
            "eval_after/accuracy": 0.40,
            "eval_after/addition/accuracy": 0.55,
            "eval_after/addition/format": 1.0,
            "eval_after/chain_sum/accuracy": 0.25,
            "eval_after/chain_sum/format": 0.9,
        },
    ]
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run / "checkpoint-000004").mkdir()
    return run


def test_load_run_reads_rows_config_and_checkpoints(tmp_path: Path) -> None:
    run = load_run(make_run(tmp_path))
    assert run.name == "synthetic"
    assert run.config["run"]["steps"] == 4
    assert len(run.rows) == 6
    assert [p.name for p in run.checkpoints] == ["checkpoint-000004"]
    steps, values = run.series("rollout/reward")
    assert steps == [1, 2, 3, 4]
    assert values[:2] == [0.1, 0.3] and values[3] == 0.5 and values[2] != values[2]  # NaN
    assert run.finite("train/grad_norm") == [1.0, 1.0, 1.0]
    assert run.curriculum_envs() == ["addition", "chain_sum"]  # "last" is not an environment
    assert run.eval_envs() == ["addition", "chain_sum"]
    assert run.warnings == []


def test_summary_numbers(tmp_path: Path) -> None:
    s = summarize(load_run(make_run(tmp_path)))
    assert s["steps"] == 4 and s["configured_steps"] == 4
    assert s["wall_s"] == pytest.approx(45.0)
    assert s["step_s_total"] == pytest.approx(40.0)
    assert s["final_reward"] == pytest.approx(0.5)
    assert s["mean_reward"] == pytest.approx(0.3)  # (0.1 + 0.3 + 0.5) / 3, the null skipped
    assert s["final_accuracy"] == pytest.approx(0.6)
    assert s["eval"]["overall"]["diff_pts"] == pytest.approx(15.0)
    assert s["eval"]["addition"]["diff_pts"] == pytest.approx(25.0)
    assert s["eval"]["chain_sum"]["diff_pts"] == pytest.approx(5.0)
    assert s["curriculum"]["addition"] == {"h": 4.0, "low": 2.0, "acc_at_h": 0.5}
    assert s["checkpoints"] == ["checkpoint-000004"]


def test_moving_average_skips_nan() -> None:
    nan = float("nan")
    assert moving_average([1.0, 3.0, nan, 5.0], 2) == [1.0, 2.0, 3.0, 5.0]
    out = moving_average([nan, nan], 3)
    assert all(v != v for v in out)


def test_plot_run_writes_pngs_and_skips_absent_panels(tmp_path: Path) -> None:
    run = load_run(make_run(tmp_path))
    paths = plot_run(run, tmp_path / "plots")
    names = {p.name for p in paths}
    assert names == {
        "reward_accuracy.png",
        "curriculum.png",
        "optimization.png",
        "timing.png",
        "eval.png",
    }  # no collector/* or reward/* series in this run
    for p in paths:
        assert p.read_bytes().startswith(PNG_MAGIC)


def test_plot_run_small_multiples_for_collector_and_reward(tmp_path: Path) -> None:
    extra = {"collector/turns": 2.0, "collector/extra_tokens": 30.0, "reward/cer/mean_reward": 0.4}
    paths = plot_run(load_run(make_run(tmp_path, extra=extra)), tmp_path / "plots")
    assert {"collector.png", "reward.png"} <= {p.name for p in paths}


def test_write_report_is_self_contained_with_right_numbers(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path)
    out = write_report(run_dir)
    assert out == run_dir / "report.html"
    text = out.read_text()
    assert "<script" not in text and "http://" not in text and "https://" not in text
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', text)
    assert len(images) == 5
    assert all(base64.b64decode(b).startswith(PNG_MAGIC) for b in images)
    assert (run_dir / "plots" / "eval.png").is_file()
    # held-out accuracy before → after with the difference in points, worked out by hand
    assert "25.0% → 40.0%" in text and "(+15.0 pts)" in text
    assert "30.0% → 55.0%" in text and "(+25.0 pts)" in text
    assert "20.0% → 25.0%" in text and "(+5.0 pts)" in text
    assert "4 / 4" in text  # steps done / configured
    assert "0:00:45" in text  # wall time
    assert "<td>0.5</td>" in text and "<td>0.3</td>" in text  # final and mean reward
    assert "4 (window 2–4)" in text and "1 (window 0–1)" in text  # final h per env
    assert "<pre>run:\n  name: synthetic" in text  # the config as YAML


def test_missing_files_give_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(RunDirError, match="does not exist"):
        load_run(tmp_path / "nope")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "config.yaml").write_text("run: {}\n")
    with pytest.raises(RunDirError, match=r"no metrics\.jsonl \(found: config\.yaml\)"):
        write_report(empty)
    (empty / "metrics.jsonl").write_text("\n")
    with pytest.raises(RunDirError, match="holds no metric rows"):
        load_run(empty)


def test_partial_files_are_tolerated(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path)
    (run_dir / "config.yaml").unlink()
    with (run_dir / "metrics.jsonl").open("a") as f:
        f.write('{"step": 5, "time": 10')  # the half-written line of a killed run
    run = load_run(run_dir)
    assert run.name == "synthetic"  # the directory name
    assert "config.yaml is missing" in run.warnings
    assert any("skipped 1 unreadable line" in w for w in run.warnings)
    text = write_report(run_dir).read_text()
    assert "config.yaml is missing" in text and "(+15.0 pts)" in text


def test_all_null_series_and_no_eval(tmp_path: Path) -> None:
    run_dir = tmp_path / "nulls"
    run_dir.mkdir()
    rows = [{"step": s, "time": None, "rollout/reward": None, "train/loss": 0.5} for s in (1, 2)]
    (run_dir / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run_dir / "config.yaml").write_text("run:\n  name: nulls\n")
    s = summarize(load_run(run_dir))
    assert s["final_reward"] is None and s["wall_s"] is None and s["eval"] == {}
    assert [p.name for p in plot_run(load_run(run_dir), tmp_path / "p")] == ["optimization.png"]
    assert "—" in write_report(run_dir).read_text()


def test_compare_runs_overlays(tmp_path: Path) -> None:
    a = make_run(tmp_path, "tcpo")
    b = make_run(tmp_path, "mt_grpo")
    out = compare_runs([a, b], tmp_path / "cmp")
    assert out == tmp_path / "cmp" / "compare.html"
    text = out.read_text()
    assert "tcpo" in text and "mt_grpo" in text and "(+15.0 pts)" in text
    assert len(re.findall(r"data:image/png;base64,", text)) == 2  # training overlay + eval
    assert compare_runs([a], tmp_path / "one.html") == tmp_path / "one.html"
    with pytest.raises(RunDirError):
        compare_runs([a, tmp_path / "missing"], tmp_path / "x.html")


# ---- health events and evaluations with intervals -----------------------------------------------
def _events(run_dir: Path) -> None:
    rows = [
        {"step": 2, "detector": "truncation", "message": "90% cut <b>", "setting": "raise it"},
        {"step": 3, "detector": "no_signal", "message": "ratio 0.00", "setting": "few-shot"},
    ]
    text = "".join(json.dumps(r) + "\n" for r in rows)
    (run_dir / "health.jsonl").write_text(text + "not json\n")


def _marker_lines(fig: Any) -> list[tuple[float, str]]:
    """(step, detector) of every labelled dashed marker on the figure's axes."""
    out = []
    for ax in fig.axes:
        for text in ax.texts:
            out.append((float(text.xy[0]), text.get_text()))
    return out


def test_health_events_are_marked_on_every_curve_and_listed(tmp_path: Path) -> None:
    from verirl.report import run_figures

    run_dir = make_run(tmp_path)
    _events(run_dir)
    run = load_run(run_dir)
    assert [(e.step, e.detector) for e in run.health] == [(2, "truncation"), (3, "no_signal")]
    figs = run_figures(run)
    for stem in ("reward_accuracy", "curriculum", "optimization", "timing"):
        marks = _marker_lines(figs[stem])
        assert (2.0, "truncation") in marks and (3.0, "no_signal") in marks, stem
    eval_texts = {t for _, t in _marker_lines(figs["eval"])}  # bars per env: no step axis
    assert not eval_texts & {"truncation", "no_signal"}
    text = write_report(run_dir).read_text()
    assert "<h2>Run health</h2>" in text and "90% cut &lt;b&gt;" in text  # escaped
    assert "truncation (step 2), no_signal (step 3)" in text  # the summary row
    quiet = make_run(tmp_path, name="quiet")
    assert "no health warnings" in write_report(quiet).read_text()


def test_eval_files_with_intervals_are_read_tolerantly_and_shown(tmp_path: Path) -> None:
    from verirl.evals.records import read_eval_records

    run_dir = make_run(tmp_path)
    evals = run_dir / "evals"
    evals.mkdir()
    # the flat schema: one record, with its interval and the policy it evaluated
    (evals / "a_before.json").write_text(
        json.dumps(
            {
                "benchmark": "gsm8k",
                "metric": "accuracy",
                "value": 0.02,
                "low": 0.012,
                "high": 0.031,
                "method": "wilson",
                "n": 1319,
                "label": "before",
            }
        )
    )
    # what `verirl eval --benchmark ... --out` writes: ci95 pairs under benchmarks.<name>.metrics
    (evals / "b_after.json").write_text(
        json.dumps(
            {
                "model": "m",
                "checkpoint": "final",
                "benchmarks": {
                    "gsm8k": {
                        "metrics": {
                            "accuracy": {
                                "value": 0.05,
                                "ci95": [0.04, 0.063],
                                "method": "wilson",
                                "problems": 1319,
                            }
                        }
                    }
                },
            }
        )
    )
    # a list with one unreadable entry (no value), and a file that is not JSON
    (evals / "c_list.json").write_text(
        json.dumps([{"benchmark": "math500", "value": 0.1, "step": 25}, {"benchmark": "x"}])
    )
    (evals / "d_broken.json").write_text("{")
    records, warnings = read_eval_records(run_dir)
    got = [(r.benchmark, r.metric, r.policy, r.value, r.low, r.high, r.n) for r in records]
    assert got == [
        ("gsm8k", "accuracy", "before", 0.02, 0.012, 0.031, 1319),
        ("gsm8k", "accuracy", "final", 0.05, 0.04, 0.063, 1319),
        ("math500", "value", "step 25", 0.1, None, None, None),
    ]
    from verirl.report import _policy_order

    assert [r.policy for r in sorted(records, key=_policy_order)] == ["before", "step 25", "final"]
    assert len(warnings) == 2
    assert "c_list.json: skipped 1 entry" in warnings[0] and "d_broken.json" in warnings[1]
    text = write_report(run_dir).read_text()
    assert "<h2>Evaluations</h2>" in text
    assert "[0.012, 0.031]" in text and "[0.04, 0.063]" in text and "wilson" in text
    assert "evals/d_broken.json: not readable JSON" in text
    assert (run_dir / "plots" / "evals.png").read_bytes().startswith(PNG_MAGIC)
