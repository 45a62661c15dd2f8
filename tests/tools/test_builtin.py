"""The built-in toolsets: the calculator computes exactly and never evaluates Python; the
Python interpreter runs in the sandbox."""

from __future__ import annotations

import pytest

from verirl.tools import build_toolset
from verirl.tools.builtin import CalculationError, calculate_expression


def test_calculator_is_exact_and_refuses_anything_but_arithmetic() -> None:
    assert calculate_expression("48213 * 937 - 5521") == str(48213 * 937 - 5521)
    assert calculate_expression("(1 + 2) / 6") == "1/2"
    assert calculate_expression("0.1 + 0.2") == "3/10"
    assert calculate_expression("7 // 2 + 7 % 2 + 2 ** 10") == "1028"
    assert calculate_expression("12 × 3 ÷ 4") == "9"
    for bad in ("__import__('os').system('x')", "a + 1", "len('x')", "[1, 2]", "1 if 1 else 2"):
        with pytest.raises(CalculationError, match="only numbers"):
            calculate_expression(bad)
    for bad, why in [
        ("1 / 0", "division by zero"),
        ("9 ** 9 ** 9", "exponents"),
        ("10 ** 60 * 10 ** 60 * 10 ** 60 * 10 ** 60", "digits"),
        ("1 +", "not an arithmetic"),
        ("(" * 500, "longer than"),
        ("", "give an arithmetic"),
    ]:
        with pytest.raises(CalculationError, match=why):
            calculate_expression(bad)
    r = build_toolset("calculator").call("calculate", {"expression": "1/0"})
    assert r.text == "error: division by zero" and not r.ok and not r.refused


def test_python_tool_runs_in_the_sandbox() -> None:
    py = build_toolset("python", {"wall_s": 3.0})
    assert py.call("run_python", {"code": "print(sum(range(10)))"}).text == "45\n"
    failed = py.call("run_python", {"code": "print('a')\n1/0"}).text
    assert failed.startswith("a\nerror: the program raised an error: ZeroDivisionError")
    looped = py.call("run_python", {"code": "while True: pass"}).text
    assert "limit and was killed" in looped
