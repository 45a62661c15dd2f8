"""Answer extraction from model output: the last ``\\boxed{...}`` or ``<answer>...</answer>``.

Brace matching handles nesting (``\\boxed{\\frac{1}{2}}`` → ``\\frac{1}{2}``), which the
non-greedy regexes of several reference implementations get wrong. Whichever answer marker
appears last in the text wins.

Every function here runs in time linear in the length of the text, whatever it holds
(untrusted text is data): one left-to-right pass matches all braces at once, so thousands of
unclosed ``\\boxed{`` or ``<answer>`` markers cost no more than one.
"""

from __future__ import annotations

import re

BOXED = "\\boxed{"
_OPEN_TAG = "<answer>"
_CLOSE_TAG = "</answer>"
# An escaped brace (skipped as a unit) or a brace, as :func:`matching_brace` reads them.
_BRACE_TOKEN = re.compile(r"\\[{}]|[{}]")
_TEXT_WRAPPER = re.compile(r"\\(?:text|mathrm|textbf)\{(.*)\}", re.DOTALL)


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
    """Content of the last *closed* ``\\boxed{...}`` in ``text`` (nested braces allowed).

    "Last" is the closed marker that starts last. One pass over ``text`` with a stack of open
    braces finds the closing brace of every marker (escaped ``\\{``/``\\}`` do not count),
    so the cost is linear in ``len(text)`` however many markers are left unclosed."""
    first = text.find(BOXED)
    if first < 0:
        return None
    if text.find(BOXED, first + 1) < 0:  # one marker: its own brace is the bottom of the stack
        start = first + len(BOXED)
        close = text.find("}", start)
        if close >= 0:
            inner = text[start:close]
            if "{" not in inner and "\\" not in inner:
                # fast path, same result: no brace opens and nothing is escaped before the
                # first "}", so it closes the marker (the loop below returns the same slice)
                return inner
        depth = 0
        for m in _BRACE_TOKEN.finditer(text, first + len(BOXED) - 1):
            c = m.group()
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    return text[first + len(BOXED) : m.start()]
        return None
    markers: set[int] = set()
    pos = first
    while pos >= 0:
        markers.add(pos + len(BOXED) - 1)  # the index of the marker's own "{"
        pos = text.find(BOXED, pos + 1)
    best: tuple[int, int] | None = None
    stack: list[int] = []
    for m in _BRACE_TOKEN.finditer(text, first):
        c = m.group()
        if c == "{":
            stack.append(m.start())
        elif c == "}" and stack:
            opened = stack.pop()
            if opened in markers and (best is None or opened > best[0]):
                best = (opened, m.start())
    if best is None:
        return None
    return text[best[0] + 1 : best[1]]


def last_answer_tag(text: str) -> str | None:
    """Content of the last ``<answer>...</answer>`` pair, or ``None``.

    Pairs are read left to right, each ``<answer>`` closed by the first ``</answer>`` after
    it (the non-greedy regex reading), in one linear pass."""
    found = None
    pos = text.find(_OPEN_TAG)
    while pos >= 0:
        start = pos + len(_OPEN_TAG)
        end = text.find(_CLOSE_TAG, start)
        if end < 0:
            break
        found = text[start:end]
        pos = text.find(_OPEN_TAG, end + len(_CLOSE_TAG))
    return found


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
    answer: str | None
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
    m = _TEXT_WRAPPER.fullmatch(a) if a.startswith("\\") else None
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
