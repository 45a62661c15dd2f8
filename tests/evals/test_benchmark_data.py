"""Benchmark problems from local JSONL/parquet files, the Hub (through datasets) and
reasoning-gym's generator — never downloaded in tests."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from verirl.errors import UserInputError
from verirl.evals import benchmark_data as data
from verirl.evals.benchmarks import BENCHMARKS, load_math_items

GSM_ROWS = [
    {"question": "Tom has 2 apples and buys 3. How many?", "answer": "2+3=<<2+3=5>>5\n#### 5"},
    {"question": "A farm sells 1,200 eggs twice.", "answer": "1,200*2=2,400\n#### 2,400"},
]
MATH_ROWS = [
    {
        "problem": "What is $1/2 + 1/4$?",
        "solution": "It is $\\boxed{\\frac{3}{4}}$.",
        "answer": "\\frac{3}{4}",
        "subject": "Prealgebra",
        "level": 1,
        "unique_id": "test/prealgebra/1.json",
    },
    {"problem": "Compute $2^3$.", "solution": "$2^3 = \\boxed{8}$."},  # no answer field
]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_gsm8k_jsonl(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "gsm.jsonl", GSM_ROWS)
    items, where = load_math_items(BENCHMARKS.get("gsm8k").part, str(path), False, None, 0)
    assert where == str(path)
    assert [(i.id, i.gold) for i in items] == [("gsm8k/0", "5"), ("gsm8k/1", "2400")]
    assert items[0].question.startswith("Tom has")
    items, _ = load_math_items(BENCHMARKS.get("gsm8k").part, str(path), False, 1, 0)
    assert len(items) == 1


def test_math500_jsonl_and_parquet(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    jsonl = write_jsonl(tmp_path / "math.jsonl", MATH_ROWS)
    parquet = tmp_path / "math.parquet"
    rows = [{k: r.get(k) for k in ("problem", "solution", "answer")} for r in MATH_ROWS]
    pq.write_table(pa.Table.from_pylist(rows), parquet)
    for path in (jsonl, parquet):
        items, _ = load_math_items(BENCHMARKS.get("math500").part, str(path), False, None, 0)
        assert [i.gold for i in items] == ["\\frac{3}{4}", "8"]  # the second from its box
    items, _ = load_math_items(BENCHMARKS.get("math500").part, str(jsonl), False, None, 0)
    assert items[0].id == "test/prealgebra/1.json" and items[0].meta["level"] == 1


def test_bad_files_are_clear_errors(tmp_path: Path) -> None:
    gsm = BENCHMARKS.get("gsm8k").part
    with pytest.raises(UserInputError, match="does not exist"):
        load_math_items(gsm, str(tmp_path / "nope.jsonl"), False, None, 0)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"question": "q", "answer": "#### 1"}\n{not json\n')
    with pytest.raises(UserInputError, match=r"broken.jsonl:2"):
        load_math_items(gsm, str(broken), False, None, 0)
    no_marker = write_jsonl(tmp_path / "m.jsonl", [{"question": "q", "answer": "five"}])
    with pytest.raises(UserInputError, match="####"):
        load_math_items(gsm, str(no_marker), False, None, 0)
    wrong_fields = write_jsonl(tmp_path / "w.jsonl", MATH_ROWS)  # MATH rows given as GSM8K
    with pytest.raises(UserInputError, match="'question'"):
        load_math_items(gsm, str(wrong_fields), False, None, 0)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(UserInputError, match="no rows"):
        load_math_items(gsm, str(empty), False, None, 0)


def test_local_directory_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(data.BENCHMARK_DIR_ENV, raising=False)
    gsm = BENCHMARKS.get("gsm8k").part
    with pytest.raises(UserInputError, match="--hub"):
        load_math_items(gsm, None, False, None, 0)
    beside = tmp_path.parent / "shared" / "benchmarks"
    beside.mkdir(parents=True, exist_ok=True)
    write_jsonl(beside / "gsm8k_test.jsonl", GSM_ROWS)
    items, where = load_math_items(gsm, None, False, None, 0)
    assert where == str(beside / "gsm8k_test.jsonl") and len(items) == 2
    own = tmp_path / "own"
    own.mkdir()
    write_jsonl(own / "gsm8k_test.jsonl", GSM_ROWS[:1])
    monkeypatch.setenv(data.BENCHMARK_DIR_ENV, str(own))
    items, where = load_math_items(gsm, None, False, None, 0)
    assert where == str(own / "gsm8k_test.jsonl") and len(items) == 1


def test_hub_copy_through_datasets(monkeypatch: pytest.MonkeyPatch) -> None:
    """--hub calls datasets.load_dataset(repo, config, split=...) (replaced here: no network)."""
    calls: list[tuple[Any, ...]] = []

    def load_dataset(repo: str, config: str | None, split: str) -> list[dict[str, Any]]:
        calls.append((repo, config, split))
        return GSM_ROWS if repo == "openai/gsm8k" else MATH_ROWS

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    items, where = load_math_items(BENCHMARKS.get("gsm8k").part, None, True, None, 0)
    assert calls[-1] == ("openai/gsm8k", "main", "test") and where == "hub:openai/gsm8k"
    assert [i.gold for i in items] == ["5", "2400"]
    items, _ = load_math_items(BENCHMARKS.get("math500").part, None, True, 1, 0)
    assert calls[-1] == ("HuggingFaceH4/MATH-500", None, "test") and len(items) == 1


def test_hub_failure_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def offline(*args: Any, **kwargs: Any) -> None:
        raise ConnectionError("no network")

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=offline))
    with pytest.raises(UserInputError, match="--data PATH"):
        load_math_items(BENCHMARKS.get("gsm8k").part, None, True, None, 0)


@pytest.mark.reasoning_gym
def test_gsm_symbolic_is_generated_and_seeded() -> None:
    pytest.importorskip("reasoning_gym", reason="gsm_symbolic needs reasoning-gym (extra 'bench')")
    bench = BENCHMARKS.get("gsm_symbolic").part
    a, where = load_math_items(bench, None, False, 5, 7)
    b, _ = load_math_items(bench, None, False, 5, 7)
    c, _ = load_math_items(bench, None, False, 5, 8)
    assert "gsm_symbolic" in where and len(a) == 5
    assert a == b and a != c
    for item in a:
        assert float(item.gold) == float(item.gold)  # a number
        assert "final answer" in item.question
