"""Wording helpers for prompts: counts with the right grammatical number."""

from __future__ import annotations


def plural(count: int, singular: str, many: str | None = None) -> str:
    """``"1 edge"``, ``"3 edges"``, ``"0 edges"``; ``many`` for irregular plurals
    (``plural(1, "child", "children")``)."""
    return f"{count} {singular if count == 1 else (many or singular + 's')}"
