"""Wording helpers for prompts: counts with the right grammatical number, lists of numbers."""

from __future__ import annotations

from collections.abc import Iterable


def plural(count: int, singular: str, many: str | None = None) -> str:
    """``"1 edge"``, ``"3 edges"``, ``"0 edges"``; ``many`` for irregular plurals
    (``plural(1, "child", "children")``)."""
    return f"{count} {singular if count == 1 else (many or singular + 's')}"


def commas(values: Iterable[object]) -> str:
    """``"3, 1, 4"``: the values separated by commas."""
    return ", ".join(map(str, values))


def indexed(values: Iterable[object], name: str = "A") -> str:
    """``"A[0]=3 A[1]=1 A[2]=4"``: each value with its index, separated by spaces."""
    return " ".join(f"{name}[{i}]={v}" for i, v in enumerate(values))
