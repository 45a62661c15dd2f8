"""The built-in toolsets ``calculator`` (exact arithmetic, no ``eval``) and ``python`` (a
Python interpreter in :mod:`verirl.sandbox`); ``mcp`` (an MCP server's tools) is
:mod:`verirl.tools.mcp`'s."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from verirl.tools.toolset import TOOLSETS, Toolset
from verirl.tools.typed import ToolError

MAX_EXPRESSION_CHARS = 300
MAX_DIGITS = 200
_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}


class CalculationError(ToolError):
    """An expression the calculator does not compute (the message says why)."""


def calculate_expression(expression: str) -> str:
    """The exact value of an arithmetic ``expression`` over integers and decimals (``+ - * /
    // % **`` and parentheses), as an integer or a reduced fraction ``p/q``; raises
    :class:`CalculationError` for anything else, a zero divisor, or a value past
    :data:`MAX_DIGITS` digits. The expression is parsed, never evaluated by Python."""
    if not isinstance(expression, str) or not expression.strip():
        raise CalculationError("give an arithmetic expression, e.g. 12 * (3 + 4)")
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise CalculationError(f"the expression is longer than {MAX_EXPRESSION_CHARS} characters")
    try:
        tree = ast.parse(expression.replace("×", "*").replace("÷", "/"), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise CalculationError("not an arithmetic expression") from None
    value = _evaluate(tree.body)
    if value.denominator == 1:
        return str(value.numerator)
    return f"{value.numerator}/{value.denominator}"


def _evaluate(node: ast.expr) -> Fraction:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return Fraction(node.value)
    if isinstance(node, ast.Constant) and type(node.value) is float:
        return Fraction(str(node.value))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd | ast.USub):
        inner = _evaluate(node.operand)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Div | ast.FloorDiv | ast.Mod) and right == 0:
            raise CalculationError("division by zero")
        if isinstance(node.op, ast.Pow):
            if right.denominator != 1 or abs(right) > 64:
                raise CalculationError("exponents are whole numbers from -64 to 64")
            if left == 0 and right < 0:
                raise CalculationError("division by zero")
        out = Fraction(_BINARY[type(node.op)](left, right))
        if max(len(str(abs(out.numerator))), len(str(out.denominator))) > MAX_DIGITS:
            raise CalculationError(f"the value has more than {MAX_DIGITS} digits")
        return out
    raise CalculationError(
        "only numbers, + - * / // % ** and parentheses are allowed (no names or calls)"
    )


@TOOLSETS.register("calculator")
class Calculator(Toolset):
    """Exact arithmetic."""

    def calculate(self, expression: str) -> str:
        """Compute an arithmetic expression exactly.

        Args:
            expression: Numbers with + - * / // % ** and parentheses, e.g. "(12 + 30) * 7".

        Returns:
            The exact value: an integer or a fraction p/q.
        """
        return calculate_expression(expression)


@TOOLSETS.register("python")
class PythonInterpreter(Toolset):
    """A Python interpreter in the sandbox (fresh process per call, time and memory limits,
    no network, nothing outside its directory): what a program prints is the observation."""

    def __init__(self, wall_s: float = 5.0, cpu_s: float = 2.0, memory_mb: int = 256) -> None:
        self.limits = {"wall_s": wall_s, "cpu_s": cpu_s, "memory_mb": memory_mb}

    def run_python(self, code: str) -> str:
        """Run a Python program and return what it prints.

        Args:
            code: A complete Python program; print the values you want to see.

        Returns:
            The program's standard output, or why it failed.
        """
        from verirl.sandbox import Limits, default_sandbox

        limits = Limits(
            cpu_s=float(self.limits["cpu_s"]),
            wall_s=float(self.limits["wall_s"]),
            memory_mb=int(self.limits["memory_mb"]),
            output_bytes=64_000,
        )
        run = default_sandbox().run(code, limits=limits)
        if run.status == "ok":
            return run.stdout
        return f"{run.stdout}error: the program {run.reason()}"
