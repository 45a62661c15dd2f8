"""The fast paths of the shared reading code return what the code before them returned.

Each ``_old_*`` function below is the implementation before the speed-up (issue 23, "as fast as
reasoning-gym"), kept here as the reference; hypothesis compares it with the current one on
random input drawn near the fast paths' edges (digits, separators, braces, backslashes,
Unicode digits and spaces), value or exception alike."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from verirl.envs import get_env
from verirl.envs.base import seeded_rng
from verirl.envs.reading import answers, normalize, surface_forms
from verirl.envs.reading.answers import BOXED, last_boxed
from verirl.envs.reading.normalize import parse_integers, split_items


def _outcome(f: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[str, Any]:
    """What ``f(*args, **kwargs)`` returns, or the type and message of what it raises."""
    try:
        return "value", f(*args, **kwargs)
    except Exception as exc:
        return type(exc).__name__, str(exc)


# ---- the code before the fast paths --------------------------------------------------------
def _old_last_boxed(text: str) -> str | None:
    first = text.find(BOXED)
    if first < 0:
        return None
    if text.find(BOXED, first + 1) < 0:
        depth = 0
        for m in answers._BRACE_TOKEN.finditer(text, first + len(BOXED) - 1):
            c = m.group()
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    return text[first + len(BOXED) : m.start()]
        return None
    return last_boxed(text)  # several markers: unchanged code


def _old_split_items(
    text: str, *, plus: bool = False, whitespace: bool = True, max_items: int = 100_000
) -> list[str]:
    t = normalize.strip_delimiters(normalize.clean(text))
    if not t:
        return []
    t = normalize._CONJUNCTIONS.sub(",", t)
    parts = [p.strip() for p in normalize._top_level_split(t, ",;" + ("+" if plus else ""))]
    if len(parts) > max_items:
        raise normalize.InvalidAnswer("the list is far too long")
    if len(parts) > 1 and parts[-1] == "":
        parts = parts[:-1]
    if any(p == "" for p in parts):
        raise ValueError("an empty item in the list")
    if len(parts) == 1 and whitespace and not normalize._SPACING.search(parts[0]):
        words = parts[0].split()
        if len(words) > 1 and all(normalize._PLAIN_INT.fullmatch(w) for w in words):
            parts = words
    if len(parts) > max_items:
        raise normalize.InvalidAnswer("the list is far too long")
    return [normalize.clean(p) for p in parts]


def _old_parse_integers(
    text: str, names: tuple[str, ...] = (), *, plus: bool = False, whitespace: bool = True
) -> list[int]:
    items = _old_split_items(text, plus=plus, whitespace=whitespace)
    if all(len(item) <= 4000 and normalize._PLAIN_INT.fullmatch(item) for item in items):
        return [int(item) for item in items]
    if names:
        named = normalize.assignments(items, names)
        if named is not None:
            return [normalize.parse_integer(named[n]) for n in names]
    return [normalize.parse_integer(item) for item in items]


def _old_form_clean(text: str) -> str:
    if not isinstance(text, str):
        raise surface_forms.FormError("answer is not text")
    if len(text) > surface_forms.MAX_CHARS:
        raise surface_forms.FormError("answer too long")
    t = text.strip().strip("$").strip()
    t = t.replace("\u2212", "-").replace("\u2013", "-").replace("\u00d7", "\\times ")
    t = t.replace("\u00b7", "\\cdot ").replace("\u00a0", " ").replace("\u2009", " ")
    while True:
        m = surface_forms._WRAPPERS.search(t)
        if not m:
            break
        close = answers.matching_brace(t, m.end())
        if close is None:
            raise surface_forms.FormError("unbalanced braces")
        t = t[: m.start()] + " " + t[m.end() : close] + " " + t[close + 1 :]
    t = surface_forms._SPACING.sub(" ", t)
    t = t.replace("{,}", ",")
    return re.sub(r"\s+", " ", t).strip()


# ---- inputs near the fast paths' edges ------------------------------------------------------
_LIST_CHARS = "0123456789 ,;-+\t\n\r.\\{}[]()$~x=&and\u0663\uff13\u00a0\u2009\x1c\x0b"
_numbers = st.lists(st.integers(-(10**6), 10**9).map(str), min_size=1, max_size=8)
_separators = st.sampled_from([" ", "  ", ", ", ",", " ; ", ";", "\n", " \t", " , ", ",,", "+"])


@st.composite
def _list_texts(draw: st.DrawFn) -> str:
    items = draw(_numbers)
    text = items[0]
    for item in items[1:]:
        text += draw(_separators) + item
    return (
        draw(st.sampled_from(["", " ", "[", "\\{"]))
        + text
        + draw(st.sampled_from(["", " ", ".", ",", "]", "\\}", "\n"]))
    )


_texts = st.one_of(_list_texts(), st.text(alphabet=_LIST_CHARS, max_size=40))


@settings(max_examples=300, deadline=None)
@given(text=_texts, plus=st.booleans(), whitespace=st.booleans())
def test_parse_integers_and_split_items_as_before(text: str, plus: bool, whitespace: bool) -> None:
    options = {"plus": plus, "whitespace": whitespace}
    assert _outcome(parse_integers, text, **options) == _outcome(
        _old_parse_integers, text, **options
    )
    assert _outcome(split_items, text, **options) == _outcome(_old_split_items, text, **options)


def test_parse_integers_as_before_on_long_and_named_lists() -> None:
    for text in ["1 " * 60_000, "7" * 4001 + " 1", "7" * 4001, "x = 1, y = 2", " 3 ", ""]:
        for names in [(), ("x", "y")]:
            new = _outcome(parse_integers, text, names)
            assert new == _outcome(_old_parse_integers, text, names)


_BOX_CHARS = "ab1 {}\\$<>/answer"


@settings(max_examples=300, deadline=None)
@given(body=st.text(alphabet=_BOX_CHARS, max_size=30), head=st.text(alphabet="x{}\\ ", max_size=4))
def test_last_boxed_as_before(body: str, head: str) -> None:
    for text in [head + BOXED + body, BOXED + body + "}", head + BOXED + body + "}} \\}"]:
        assert last_boxed(text) == _old_last_boxed(text)


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="ab1 ,.-{}$\\~\t\n\x1c\u00a0\u2212\u2009text", max_size=40))
def test_surface_form_clean_as_before(text: str) -> None:
    assert _outcome(surface_forms.clean, text) == _outcome(_old_form_clean, text)


def _old_parse_date(text: str) -> tuple[Any, int | None]:
    t = surface_forms.clean(text).lower().replace(",", " ")
    t = re.sub(r"\b(\d{1,2})(?:st|nd|rd|th)\b", r"\1", t)
    t = re.sub(r"\b(the|of|on)\b", " ", t)
    words = t.split()
    weekday = None
    if words:
        w0 = words[0].rstrip(".")
        for i, name in enumerate(surface_forms.WEEKDAYS):
            if w0 == name or (len(w0) >= 3 and name.startswith(w0)):
                weekday, words = i, words[1:]
                break
    t = " ".join(words)
    date = surface_forms._date
    if m := re.fullmatch(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})", t):
        return date(int(m[1]), int(m[2]), int(m[3])), weekday
    if m := re.fullmatch(r"(\d{1,2})\.(\d{1,2})\.(\d{4})", t):
        return date(int(m[3]), int(m[2]), int(m[1])), weekday
    if m := re.fullmatch(r"(\d{1,2})[/-](\d{1,2})[/-](\d{4})", t):
        a, b, y = int(m[1]), int(m[2]), int(m[3])
        maybe = surface_forms._maybe_date
        readings = {d for d in (maybe(y, a, b), maybe(y, b, a)) if d is not None}
        if len(readings) != 1:
            raise surface_forms.FormError("ambiguous or invalid numeric date")
        return readings.pop(), weekday
    if m := re.fullmatch(r"([a-z.]+) (\d{1,2}) (\d{4})", t):
        month = surface_forms._month(m[1])
        if month:
            return date(int(m[3]), month, int(m[2])), weekday
    if m := re.fullmatch(r"(\d{1,2}) ([a-z.]+) (\d{4})", t):
        month = surface_forms._month(m[2])
        if month:
            return date(int(m[3]), month, int(m[1])), weekday
    raise surface_forms.FormError("not a date")


_MONTHISH = st.sampled_from(
    [m[:k] for m in surface_forms.MONTHS for k in (2, 3, 4, len(m))]
    + ["Sept", "The", "On", "Sat", "Mon", "Sunday", "Xyz", "APRIL", "aPr"]
)


@settings(max_examples=300, deadline=None)
@given(
    word=_MONTHISH,
    day=st.integers(0, 40),
    year=st.integers(0, 12000),
    sep=st.sampled_from([" ", ", ", "  ", ",", " , "]),
    tail=st.sampled_from(["", ".", " ", "th"]),
)
def test_parse_date_as_before(word: str, day: int, year: int, sep: str, tail: str) -> None:
    for text in [f"{word} {day}{sep}{year}{tail}", f"{word.capitalize()} {day}{sep}{year}"]:
        assert _outcome(surface_forms.parse_date, text) == _outcome(_old_parse_date, text)


def test_seeded_rng_is_random_seeded_with_the_string() -> None:
    for i in range(300):
        name, difficulty, seed = f"env_{i % 17}", i % 9, i * 7919
        new, old = (
            seeded_rng(name, difficulty, seed),
            random.Random(f"verirl/{name}/{difficulty}/{seed}"),
        )
        assert new.getstate() == old.getstate()
        assert [new.random(), new.gauss(0, 1), new.randrange(10**9)] == [
            old.random(),
            old.gauss(0, 1),
            old.randrange(10**9),
        ]
    unicode = seeded_rng("é/∑", 3, -1)
    assert unicode.getstate() == random.Random("verirl/é/∑/3/-1").getstate()


# ---- survo_puzzle's check over flat cells ----------------------------------------------------
def _old_survo_check(problem: Any, answer: str) -> tuple[float, bool, str]:
    d = problem.data
    m, n = len(d["shown"]), len(d["shown"][0])
    cells = parse_integers(
        answer.replace(";", " ").replace("\n", " ").replace("\\\\", " ").replace(",", " ")
    )
    if len(cells) != m * n or sorted(cells) != list(range(m * n)):
        return -0.5, False, "shape"
    grid = [cells[i * n : (i + 1) * n] for i in range(m)]
    if any(
        v != -1 and grid[i][j] != v for i, row in enumerate(d["shown"]) for j, v in enumerate(row)
    ):
        return -0.5, False, "changed"
    good = sum(1 for r, s in zip(grid, d["rows"], strict=True) if sum(r) == s)
    good += sum(1 for c, s in zip(zip(*grid, strict=True), d["cols"], strict=True) if sum(c) == s)
    return (good / (m + n)) ** 5 if good < m + n else 1.0, good == m + n, f"{good}"


@settings(max_examples=100, deadline=None)
@given(difficulty=st.integers(0, 20), seed=st.integers(0, 10**6), swaps=st.integers(0, 3))
def test_survo_check_as_before(difficulty: int, seed: int, swaps: int) -> None:
    env = get_env("survo_puzzle")
    problem = env.generate(difficulty, seed)
    cells = problem.answer.replace(";", "").split()
    rng = random.Random(seed)
    for _ in range(swaps):  # swapped cells: a changed given, wrong sums, or the same grid
        i, j = rng.randrange(len(cells)), rng.randrange(len(cells))
        cells[i], cells[j] = cells[j], cells[i]
    answer = " ".join(cells)
    old = _old_survo_check(problem, answer)
    new = env.check(problem, answer)
    assert new.correct == old[1]
    if old[2] == "shape":
        assert new.reward == -0.5 and "exactly once" in new.detail
    elif old[2] == "changed":
        assert new.reward == -0.5 and new.detail == "a given number was changed"
    else:
        n_sums = len(problem.data["rows"]) + len(problem.data["cols"])
        assert new.detail == ("correct" if old[1] else f"{n_sums - int(old[2])} sums are wrong")
