"""Config loading, overrides and one-line errors that name the field."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from verirl.assembly import load_config
from verirl.config import ConfigError, apply_override


def test_defaults_validate_and_overrides_parse_yaml_values() -> None:
    cfg = load_config(None, ["optim.lr=1e-5", "rollout.stop=[a, b]", "model.lora={r: 8}"])
    assert cfg.optim.lr == 1e-5
    assert cfg.rollout.stop == ["a", "b"]
    assert cfg.model.lora is not None and cfg.model.lora.r == 8
    assert cfg.credit.name == "grpo"


def test_yaml_file_then_overrides(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("run:\n  steps: 7\ncredit:\n  name: rloo\n")
    cfg = load_config(f, ["run.steps=9"])
    assert cfg.run.steps == 9 and cfg.credit.name == "rloo"


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("optim.lr=-1", "optim.lr: Input should be greater than 0 (got -1)"),
        ("optim.lrr=1", "optim.lrr: Extra inputs are not permitted"),
        ("rollout.group_size=abc", "rollout.group_size: Input should be a valid integer"),
        ("credit.name=gpro", "credit.name: unknown credit estimator 'gpro'"),
        ("credit.params={eps: -1}", "credit.params.eps: Input should be greater than 0"),
        ("loss.policy.params={eps_hi: 0.3}", "loss.policy.params.eps_hi: Extra inputs"),
        ("loss.aggregation=sum", "loss.aggregation: unknown loss aggregation 'sum'"),
        ("curriculum.environments=[nope]", "unknown environment(s) 'nope'"),
        ("reward.name=magic", "reward.name: unknown reward source 'magic'"),
    ],
)
def test_invalid_values_name_the_field(override: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(None, [override])
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_bad_override_syntax_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"key\.sub=value"):
        apply_override({}, "optim.lr")
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("- a list\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(bad)


def test_naming_another_component_drops_the_old_ones_params(tmp_path: Path) -> None:
    """A config file gives the process pool one worker; naming the in-process executor on the
    command line must not carry ``workers`` over to it, while parameters given beside the new
    name (in either order) and a repeated same name keep theirs."""
    path = tmp_path / "run.yaml"
    path.write_text(
        "verification:\n  executor:\n    name: processes\n    params:\n      workers: 1\n"
    )
    inline = load_config(path, ["verification.executor.name=inline"])
    assert inline.verification.executor.params == {}
    same = load_config(path, ["verification.executor.name=processes"])
    assert same.verification.executor.params == {"workers": 1}
    for order in (1, -1):
        items = ["verification.executor.params={workers: 3}", "verification.executor.name=threads"]
        cfg = load_config(path, items[::order])
        assert (cfg.verification.executor.name, cfg.verification.executor.params) == (
            "threads",
            {"workers": 3},
        )


def test_cli_reports_one_line_and_exits_nonzero(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    res = subprocess.run(
        [sys.executable, "-m", "verirl.cli", "train", "optim.lr=-1", f"run.dir={tmp_path}"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "optim.lr" in lines[0], res.stderr


def test_every_example_config_validates() -> None:
    examples = sorted((Path(__file__).parents[1] / "examples").glob("*.yaml"))
    assert examples, "examples/ should hold the paper configurations"
    for path in examples:
        load_config(path)
