"""Answer extraction from model output: the last ``\\boxed{...}`` or ``<answer>...</answer>``.

Brace matching handles nesting (``\\boxed{\\frac{1}{2}}`` → ``\\frac{1}{2}``), which the
non-greedy regexes of several reference implementations get wrong. Whichever answer marker
appears last in the text wins.
"""

from __future__ import annotations

import re

BOXED = "\\boxed{"
_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)


def split_boxed(text: str, marker: str = BOXED) -> tuple[str, str | None]:
    """Split ``text`` at its last ``marker`` (default ``\\boxed{``).

    Returns ``(solution, answer)``: the solution is the text up to and including the marker,
    the answer the brace-matched content after it (anything after the closing brace is
    dropped). Without the marker the whole text is the solution and the answer is ``None``.
    An unclosed brace yields the rest of the text as the answer.
    """
    pos = text.rfind(marker)
    if pos < 0:
        return text, None
    start = pos + len(marker)
    close = matching_brace(text, start)
    end = close if close is not None else len(text)
    return text[:start], text[start:end]


def last_boxed(text: str) -> str | None:
    """Content of the last *closed* ``\\boxed{...}`` in ``text`` (nested braces allowed)."""
    pos = text.rfind(BOXED)
    while pos >= 0:
        start = pos + len(BOXED)
        close = matching_brace(text, start)
        if close is not None:
            return text[start:close]
        pos = text.rfind(BOXED, 0, pos)
    return None


def last_answer_tag(text: str) -> str | None:
    """Content of the last ``<answer>...</answer>`` pair, or ``None``."""
    matches = _ANSWER_TAG.findall(text)
    return matches[-1] if matches else None


def extract_answer(text: str) -> str | None:
    """The final answer in ``text``: whichever of ``\\boxed{}`` / ``<answer>`` comes last.

    Returns the stripped content, or ``None`` when the output has no closed answer marker.
    Never raises for any string input.
    """
    if not isinstance(text, str):
        return None
    boxed_pos = text.rfind(BOXED)
    tag_pos = text.rfind("<answer>")
    boxed = last_boxed(text) if boxed_pos >= 0 else None
    tagged = last_answer_tag(text) if tag_pos >= 0 else None
    if boxed is not None and tagged is not None:
        answer = boxed if boxed_pos > tag_pos else tagged
    else:
        answer = boxed if boxed is not None else tagged
    if answer is None:
        return None
    return strip_answer(answer)


def strip_answer(answer: str) -> str:
    """Remove surrounding whitespace, ``$`` math delimiters and ``\\text{}`` wrappers."""
    a = answer.strip()
    while len(a) >= 2 and a[0] == "$" and a[-1] == "$":
        a = a[1:-1].strip()
    m = re.fullmatch(r"\\(?:text|mathrm|textbf)\{(.*)\}", a, re.DOTALL)
    if m and matching_brace(a, a.index("{") + 1) == len(a) - 1:
        a = m.group(1).strip()
    return a


def matching_brace(text: str, start: int) -> int | None:
    """Index of the ``}`` closing the brace opened just before ``start``, or ``None``."""
    depth = 1
    i = start
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] in "{}":
            i += 2  # escaped brace: \{ or \}
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None
