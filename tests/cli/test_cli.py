"""The command line: envs list/show/check, eval, report, and clean errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from verirl.cli import main
from verirl.envs import env_names


def test_envs_list_shows_every_environment(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["envs", "list"]) == 0
    out = capsys.readouterr().out
    assert f"{len(env_names())} environments" in out
    assert len(env_names()) >= 400  # RLVE-Gym's size (Zeng et al. 2025, arXiv:2511.07317)
    assert "shortest_path" in out and "graphs" in out


def test_envs_show_prints_prompt_and_a_verified_solution(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["envs", "show", "sort_list", "--difficulty", "2", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    assert "reference solution" in out and "correct=True" in out


def _check_rows(out: str) -> dict[str, str]:
    """``envs check``'s table as {environment: result} (its name, count and result cells)."""
    return dict(re.findall(r"^\W*([a-z_0-9]+)\W+\d+\W+(ok|skipped|failed|FAILED)\b", out, re.M))


def test_envs_check_passes_for_good_envs_and_names_unknown_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["envs", "check", "addition", "gcd", "--max-difficulty", "3"]) == 0
    rows = _check_rows(capsys.readouterr().out)
    assert rows == {"addition": "ok", "gcd": "ok"}, rows
    assert main(["envs", "show", "no_such_env"]) == 2
    assert "unknown environment 'no_such_env'" in capsys.readouterr().err


def test_envs_check_skips_an_environment_whose_prover_is_missing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A proof environment whose assistant cannot start is a configuration gap: reported as
    skipped with the reason, not as a failing environment; its self-check never runs."""
    from verirl.envs import get_env
    from verirl.errors import UserInputError

    env = get_env("coq_proofs")

    def no_checker(problem: object, output: str) -> object:
        raise UserInputError("cannot start the coq checker (test)")

    monkeypatch.setattr(env, "verify", no_checker)
    assert main(["envs", "check", "coq_proofs", "addition", "--max-difficulty", "1"]) == 0
    out = capsys.readouterr().out
    assert "coq checker is not available" in out
    assert _check_rows(out) == {"coq_proofs": "skipped", "addition": "ok"}, out


def _eval_args(model_dir: Path, run_dir: Path, *more: str) -> list[str]:
    """A tiny model's held-out evaluation: two environments, 2 problems at each of two
    difficulties, 2 samples each, 4 new tokens."""
    return [
        f"model.name={model_dir}",
        f"run.dir={run_dir}",
        "curriculum.environments=[addition, gcd]",
        "eval.problems=2",
        "eval.difficulties=[0, 1]",
        "eval.samples=2",
        *more,
        "rollout.max_new_tokens=4",
    ]


def test_eval_reports_accuracy_per_environment(
    tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["eval", *_eval_args(tiny_model_dir, tmp_path)])
    assert code == 0
    out = capsys.readouterr().out
    assert "addition" in out and "gcd" in out and "d=1" in out and "overall" in out


def test_eval_of_environments_gives_pass_at_k_with_intervals_as_json(
    tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Several samples per problem: avg@n and pass@k per environment and over all of them,
    with 95% intervals, on screen and in --out's JSON; a pass@k beyond the samples and a
    benchmark-only flag are one-line errors naming the fix."""
    args = _eval_args(tiny_model_dir, tmp_path, "eval.temperature=1.0")
    out_file = tmp_path / "res" / "eval.json"
    assert main(["eval", "--pass-k", "1", "2", "--out", str(out_file), *args]) == 0
    screen = capsys.readouterr().out
    assert "pass@2" in screen and "avg@2" in screen and "95% CI" in screen
    doc = json.loads(out_file.read_text())
    assert set(doc["environments"]) == {"addition", "gcd"}
    assert doc["settings"]["samples"] == 2 and doc["settings"]["temperature"] == 1.0
    for env, entry in doc["environments"].items():
        m = entry["metrics"]
        assert m["pass@2"]["problems"] == 4, env  # 2 problems x 2 difficulties
        assert m["avg@2"]["value"] == pytest.approx(entry["accuracy"])
        assert m["pass@1"]["value"] <= m["pass@2"]["value"] <= 1.0
        assert len(entry["per_problem"]) == 4 and all(n == 2 for n, _ in entry["per_problem"])
        low, high = m["pass@2"]["ci95"]
        assert low <= m["pass@2"]["value"] <= high
    assert doc["all"]["metrics"]["pass@2"]["problems"] == 8
    assert main(["eval", "--pass-k", "4", *args]) == 2
    assert "--pass-k 4 needs eval.samples >= 4 (got 2)" in capsys.readouterr().err
    assert main(["eval", "--samples", "8", *args]) == 2
    assert "--samples: only with --benchmark" in capsys.readouterr().err


def test_report_writes_html_for_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text("run:\n  name: r\n")
    rows = [{"step": s, "time": float(s), "rollout/reward": s / 4} for s in range(1, 5)]
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["report", str(run)]) == 0
    assert (run / "report.html").is_file()
    assert main(["report", str(tmp_path / "missing")]) == 2


def test_a_bad_model_path_is_one_line_and_leaves_no_run_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from verirl.cli import main

    code = main(["train", "model.name=/nonexistent/model", f"run.dir={tmp_path / 'runs'}"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "model path '/nonexistent/model' does not exist" in err
    assert not (tmp_path / "runs").exists()


def test_config_and_overrides_may_surround_the_options() -> None:
    """``verirl eval run.yaml --checkpoint DIR key=value``: argparse alone rejected the words
    after an option ("unrecognized arguments"); they are the command's overrides."""
    from verirl.cli import parse

    ns = parse(["eval", "run.yaml", "--checkpoint", "ck", "eval.problems=4", "--limit", "2", "a=1"])
    assert (ns.args, ns.checkpoint, ns.limit) == (["run.yaml", "eval.problems=4", "a=1"], "ck", 2)
    ns = parse(["eval", "--pass-k", "1", "8", "run.yaml", "a=1", "--checkpoint", "ck", "b=2"])
    assert (ns.pass_k, ns.args, ns.checkpoint) == ([1, 8], ["run.yaml", "a=1", "b=2"], "ck")
    with pytest.raises(SystemExit):
        parse(["eval", "--pass-k", "run.yaml"])  # no k at all
    for bad in (["eval", "run.yaml", "--checkpoint", "ck", "--bogus"], ["envs", "list", "extra"]):
        with pytest.raises(SystemExit) as info:
            parse(bad)
        assert info.value.code == 2
