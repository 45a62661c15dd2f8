"""One answer-normalisation layer shared by every verifier.

A verifier is a training signal: rejecting a correct answer written in another common form
(``1\\,576``, ``x = 16``, ``\\{0, 2, 4\\}``) scores it below a wrong one, and reading a wrong
answer as a right one (``1, 0`` as 10) rewards it. Every environment reads answers through
this module, so one policy holds everywhere:

* **Surface cleanup** (:func:`clean`) never changes a value: ``$…$``, ``\\(…\\)``, ``\\[…\\]``,
  ``\\text{}``/``\\mathrm{}``/``\\textbf{}`` wrappers, ``\\left``/``\\right``, ``\\displaystyle``,
  one trailing period, Unicode minus signs.
* **Digits.** Any Unicode decimal digit (Arabic-Indic ``٣``, full-width ``３``, ...) is read as
  its value, in every environment: the answer's value does not depend on its script, and
  Python's ``int`` reads them the same way.
* **Thousands separators** merge digit groups only when the grouping is exactly
  thousands: one to three digits, then groups of exactly three, all with the same separator
  (``,`` ``{,}`` ``\\,`` ``\\;`` ``\\:`` ``\\ `` ``~`` or a thin space). Anything else is a list.
  A plain space or a comma followed by a space always separates: **a separator never merges
  numbers** (``1, 0`` is two numbers, never 10; ``1 10`` is two numbers, never 110).
* **Named values.** ``x = 16`` and ``x \\equiv 16 \\pmod{20}`` are read as 16 when the prompt
  names ``x`` (and, for a congruence, when the modulus is the problem's own).
* **Collections** (:func:`split_items`): one outer pair of ``\\{ \\}``, ``{ }``, ``[ ]``,
  ``( )`` or ``\\langle \\rangle`` is dropped; items are separated by ``,``, ``;``, ``and``
  (also ``\\text{ and }``), and, where an environment allows it, ``+`` or whitespace. Whether
  order matters is the environment's declaration (``Environment.answer_kind``), not the
  delimiter's: ``{1, 2}`` and ``[1, 2]`` mean the same to an unordered environment.

Errors: :class:`InvalidAnswer` (a ``ValueError``) when the text reads as an answer of the
wrong shape (two numbers where one is asked for) — :meth:`Environment.verify` scores it
RLVE's invalid −0.5 — and a plain ``ValueError`` when it reads as nothing (wrong format −1).

math-verify (the CER release's checker) was evaluated for this layer and left for free-form
answers only: it reads ``1\\,576`` as 577 and ``1 10`` as 11, and needs ~50 ms and a
``signal.alarm`` timeout (main thread only) per call. Expressions go through the bounded
parser of :mod:`verirl.envs.reading.symbolic_parser` (sympy underneath).

RLVE reward conventions: Zeng et al., *RLVE: Scaling Up Reinforcement Learning for Language
Models with Adaptive Verifiable Environments*, arXiv:2511.07317.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from verirl.envs.reading.answers import matching_brace

MAX_ANSWER_CHARS = 100_000


class InvalidAnswer(ValueError):
    """The answer reads, but not as the kind of answer the task asks for (RLVE: −0.5)."""


# ---- surface cleanup -----------------------------------------------------------------------
_UNICODE = {
    "\u2212": "-",  # minus sign
    "\u2012": "-",  # figure dash
    "\ufe63": "-",
    "\uff0d": "-",
    "\uff0b": "+",
    "\u00a0": " ",  # no-break space
    "\u2009": "\\,",  # thin space: a thousands separator in SI style
    "\u202f": "\\,",  # narrow no-break space
    "\u2006": "\\,",
    "\uff0c": ",",  # full-width comma
    "\u060c": ",",  # Arabic comma
    "\u066b": ".",  # Arabic decimal separator
    "\uff0e": ".",
    "\uff08": "(",
    "\uff09": ")",
    "\uff3b": "[",
    "\uff3d": "]",
    "\uff5b": "{",
    "\uff5d": "}",
    "\uff1d": "=",
}
_WRAPPERS = re.compile(r"\\(?:text|textrm|textnormal|mathrm|textbf|mathbf|mbox|operatorname)\s*\{")
_INLINE_TEXT = re.compile(
    r"\\(?:text|textrm|textnormal|mathrm|textbf|mathbf|mbox)\s*\{([^{}\\]*)\}"
)
_BOXED_OPEN = re.compile(r"\\boxed\s*\{")
_SIZING = re.compile(r"\\(?:left|right|bigl|bigr|Bigl|Bigr|big|Big)(?![A-Za-z])")
_MATH_DELIMS = (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"))


def ascii_digits(text: str) -> str:
    """Unicode decimal digits (``٣``, ``３``, ``३``) → ASCII, and typographic minus signs,
    spaces and punctuation → their ASCII forms (see :data:`_UNICODE`)."""
    if text.isascii():
        return text
    out = []
    for c in text:
        if c.isascii():
            out.append(c)
        elif c in _UNICODE:
            out.append(_UNICODE[c])
        else:
            d = unicodedata.decimal(c, None)
            out.append(str(d) if d is not None else c)
    return "".join(out)


def clean(text: str) -> str:
    """Remove what never changes an answer's value (see the module docstring).

    Raises ``ValueError`` when the text is longer than :data:`MAX_ANSWER_CHARS`.
    """
    if not isinstance(text, str):
        raise ValueError("the answer is not text")
    if len(text) > MAX_ANSWER_CHARS:
        raise ValueError("the answer is too long")
    if text.isascii() and "\\" not in text and "$" not in text:
        # Fast path, same result: with no backslash, no dollar and no non-ASCII character
        # nothing below can match (every wrapper, delimiter, ``\left`` or ``\dfrac`` starts
        # with one of them) except the trailing full stop.
        t = text.strip()
        if not t.endswith("."):
            return t
    t = ascii_digits(text).strip()
    for _ in range(8):  # peel nested wrappers: $\text{16}$, \boxed{$16$}, ...
        before = t
        for left, right in _MATH_DELIMS:
            if len(t) >= len(left) + len(right) and t.startswith(left) and t.endswith(right):
                t = t[len(left) : len(t) - len(right)].strip()
                break
        m = _WRAPPERS.match(t) or _BOXED_OPEN.match(t)
        if m:
            close = matching_brace(t, m.end())
            if close == len(t) - 1:
                t = t[m.end() : close].strip()
        if t.startswith("\\displaystyle"):
            t = t[len("\\displaystyle") :].strip()
        if t.endswith(".") and not t.endswith(".."):
            t = t[:-1].rstrip()  # a sentence's full stop: "1576." -> "1576"
        if t == before:
            break
    t = _INLINE_TEXT.sub(lambda m: f" {m.group(1).strip()} ", t)
    t = _SIZING.sub("", t)
    t = t.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac").replace("\\!", "")
    return t.strip()


# ---- integers ------------------------------------------------------------------------------
_PLAIN_INT = re.compile(r"[+-]?\d+")
_ZERO_FRACTION = re.compile(r"([+-]?\d+)\.0+")
# Separators that may sit between thousands groups (each a literal; one kind per number).
THOUSANDS_SEPARATORS = (",", "{,}", "\\,", "\\;", "\\:", "\\ ", "~", "'", "\\thinspace ")
_GROUPED = {
    sep: re.compile(r"([+-]?)(\d{1,3}(?:" + re.escape(sep) + r"\d{3})+)")
    for sep in THOUSANDS_SEPARATORS
}
_SPACING = re.compile(r"\s*(\\[,;:]|\{,\}|~)\s*")
_MOD = re.compile(
    r"^(.*?)\s*(?:\\pmod\s*\{?\s*([^{}]+?)\s*\}?|\(\s*(?:\\bmod|\\mod|mod|\\text\{\s*mod\s*\})"
    r"\s*([^()]+?)\s*\)|(?:\\bmod|\\mod|mod)\s+(\S+))\s*$"
)


def _strip_name(t: str, names: Sequence[str]) -> tuple[str, bool]:
    """``x = 16`` / ``x \\equiv 16`` → (``16``, is_congruence) when ``x`` is in ``names``."""
    for name in names:
        m = re.match(r"^" + re.escape(name) + r"\s*(=|\\equiv|≡|\\cong)\s*(.*)$", t, re.DOTALL)
        if m:
            return m.group(2).strip(), m.group(1) != "="
    return t, False


def _integer_literal(t: str) -> int:
    """One integer written with at most one kind of thousands separator."""
    if _PLAIN_INT.fullmatch(t):
        return int(t)
    m = _ZERO_FRACTION.fullmatch(t)
    if m:
        return int(m.group(1))
    compact = _SPACING.sub(lambda m: m.group(1), t)
    for sep, pattern in _GROUPED.items():
        m = pattern.fullmatch(compact)
        if m:
            return int(m.group(1) + m.group(2).replace(sep, ""))
    if re.fullmatch(r"[+-]?\d+(?:\s*(?:,|;|\s|\\[,;: ]|~|\{,\})\s*[+-]?\d+)+", compact):
        raise InvalidAnswer("expected one integer, found several numbers")
    raise ValueError(f"not an integer: {t[:40]!r}")


def parse_integer(text: str, names: Sequence[str] = (), modulus: int | None = None) -> int:
    """Read one integer (see the module docstring for every accepted form).

    ``names``: variables the prompt names (``x = 16`` is read as 16). ``modulus``: the
    problem's modulus, when ``x \\equiv 16 \\pmod{m}`` is a valid way to state the answer; a
    congruence modulo anything else is :class:`InvalidAnswer`.
    """
    t = clean(text)
    if len(t) > 4000:
        raise ValueError("the number is too long")
    if _PLAIN_INT.fullmatch(t):  # fast path, same result: no name, congruence or separator
        return int(t)
    t, congruence = _strip_name(t, names)
    m = _MOD.match(t)
    if m:
        stated = next(g for g in m.groups()[1:] if g is not None)
        try:
            stated_modulus = _integer_literal(clean(stated))
        except ValueError:
            raise InvalidAnswer("the modulus of the congruence is not a number") from None
        if modulus is None:
            raise InvalidAnswer("the answer is a congruence; a number was asked for")
        if stated_modulus != modulus:
            raise InvalidAnswer("the congruence is modulo another number than the problem's")
        t = m.group(1).strip()
        t, _ = _strip_name(t, names)
    elif congruence and modulus is None:
        raise InvalidAnswer("the answer is a congruence; a number was asked for")
    if t.startswith("{") and t.endswith("}") and matching_brace(t, 1) == len(t) - 1:
        t = t[1:-1].strip()  # "{16}" is a TeX group, not a set
    return _integer_literal(t)


# ---- collections ---------------------------------------------------------------------------
_PAIRS = (("\\{", "\\}"), ("\\lbrace", "\\rbrace"), ("\\langle", "\\rangle"), ("{", "}"),
          ("[", "]"), ("(", ")"))  # fmt: skip
_OPEN = {"(": ")", "[": "]", "{": "}"}


def strip_delimiters(t: str) -> str:
    """``t`` without one outer pair of delimiters that encloses all of it (``\\{ \\}``,
    ``\\lbrace \\rbrace``, ``\\langle \\rangle``, ``{ }``, ``[ ]``, ``( )``)."""
    for left, right in _PAIRS:
        if t.startswith(left) and t.endswith(right) and len(t) >= len(left) + len(right):
            inner = t[len(left) : len(t) - len(right)]
            if _balanced(inner):
                return inner.strip()
    return t


def _balanced(t: str) -> bool:
    """Brackets in ``t`` (ignoring escaped braces) close in order."""
    stack: list[str] = []
    i = 0
    while i < len(t):
        c = t[i]
        if c == "\\" and i + 1 < len(t) and t[i + 1] in "{}":
            i += 2
            continue
        if c in _OPEN:
            stack.append(_OPEN[c])
        elif c in ")]}" and (not stack or stack.pop() != c):
            return False
        i += 1
    return not stack


_NESTING = re.compile(r"[\\()\[\]{}]")
_SEPARATOR_SETS: dict[str, re.Pattern[str]] = {}


def _top_level_split(t: str, separators: str) -> list[str]:
    """Split ``t`` at the characters in ``separators`` outside brackets; ``\\,`` (LaTeX
    spacing) and ``{,}`` (a grouped comma) never split."""
    if not _NESTING.search(t):  # fast path, same result: no bracket or backslash, depth 0
        pattern = _SEPARATOR_SETS.get(separators)
        if pattern is None:
            pattern = _SEPARATOR_SETS[separators] = re.compile(f"[{re.escape(separators)}]")
        return pattern.split(t)
    parts: list[str] = []
    depth, start, i = 0, 0, 0
    while i < len(t):
        c = t[i]
        if c == "\\" and i + 1 < len(t):
            i += 2  # \, \; \{ \} ... are never separators
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and c in separators:
            parts.append(t[start:i])
            start = i + 1
        i += 1
    parts.append(t[start:])
    return parts


_CONJUNCTIONS = re.compile(r"(?<![A-Za-z])(?:and|or|&)(?![A-Za-z])")


def split_items(
    text: str, *, plus: bool = False, whitespace: bool = True, max_items: int = 100_000
) -> list[str]:
    """The items of a collection answer, stripped and cleaned (see the module docstring).

    ``plus``: ``+`` also separates (``5 + 3`` for a multiset of coins); ``whitespace``: a
    list with no other separator may be separated by spaces (``3 1 2``).
    """
    t = strip_delimiters(clean(text))
    if not t:
        return []
    t = _CONJUNCTIONS.sub(",", t)
    parts = [p.strip() for p in _top_level_split(t, ",;" + ("+" if plus else ""))]
    if len(parts) > max_items:
        raise InvalidAnswer("the list is far too long")
    if len(parts) > 1 and parts[-1] == "":
        parts = parts[:-1]  # "1, 2, 3," trailing separator
    if any(p == "" for p in parts):
        raise ValueError("an empty item in the list")
    if len(parts) == 1 and whitespace and not _SPACING.search(parts[0]):
        words = parts[0].split()
        if len(words) > 1 and all(_PLAIN_INT.fullmatch(w) for w in words):
            parts = words
    if len(parts) > max_items:
        raise InvalidAnswer("the list is far too long")
    # a stripped plain integer is its own clean() (ASCII, no backslash, "$" or full stop; and
    # no part is longer than the text clean() already accepted): skip the call, same result
    return [p if p.isascii() and _PLAIN_INT.fullmatch(p) else clean(p) for p in parts]


_ASCII_SPACE = "[ \\t\\n\\r]"
_LISTED_INTEGERS = re.compile(
    f"{_ASCII_SPACE}*-?[0-9]+(?:{_ASCII_SPACE}*[,;]{_ASCII_SPACE}*-?[0-9]+)*{_ASCII_SPACE}*"
)
_SPACED_INTEGERS = re.compile(f"{_ASCII_SPACE}*-?[0-9]+(?:{_ASCII_SPACE}+-?[0-9]+)*{_ASCII_SPACE}*")
_LIST_SEPARATOR = re.compile("[,;]")


def parse_integers(
    text: str,
    names: Sequence[str] = (),
    *,
    plus: bool = False,
    whitespace: bool = True,
) -> list[int]:
    """A list of integers: ``3, 1, 2`` / ``[3, 1, 2]`` / ``\\{3, 1, 2\\}`` / ``3; 1; 2`` /
    ``3 1 2``. Items may be named (``i = 0, j = 2``) when ``names`` lists the names — then
    every item must be named, and the values come back in the order of ``names``."""
    if isinstance(text, str) and len(text) <= MAX_ANSWER_CHARS:
        # fast paths, same result: plain ASCII integers (at most 4000 digits each) separated
        # only by whitespace runs (when ``whitespace`` allows it), or each by one "," or ";"
        # with optional whitespace around it. No cleanup rule, delimiter, conjunction, name
        # or empty item can apply; split_items would give exactly these items.
        if _LISTED_INTEGERS.fullmatch(text):
            items = _LIST_SEPARATOR.split(text)
        elif whitespace and _SPACED_INTEGERS.fullmatch(text):
            items = text.split()
        else:
            items = []
        if items and all(len(item) <= 4000 for item in items):
            return [int(item) for item in items]
    items = split_items(text, plus=plus, whitespace=whitespace)
    if all(len(item) <= 4000 and _PLAIN_INT.fullmatch(item) for item in items):
        # fast path, same result: what parse_integer returns for each plain integer (and no
        # plain integer is a named assignment)
        return [int(item) for item in items]
    if names:
        named = assignments(items, names)
        if named is not None:
            return [parse_integer(named[n]) for n in names]
    return [parse_integer(item) for item in items]


def assignments(items: Iterable[str], names: Sequence[str]) -> dict[str, str] | None:
    """``["x = 1", "y = 2"]`` → ``{"x": "1", "y": "2"}`` when every item assigns a distinct
    name of ``names`` and every name is assigned; ``None`` when no item is an assignment.
    Raises :class:`InvalidAnswer` for a partial or repeated assignment."""
    out: dict[str, str] = {}
    items = list(items)
    pattern = re.compile(
        r"^("
        + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
        + r")\s*=\s*(.+)$",
        re.DOTALL,
    )
    for item in items:
        m = pattern.match(item)
        if m is None:
            if out or "=" in item:
                raise InvalidAnswer("mixes named and unnamed values")
            return None
        if m.group(1) in out:
            raise InvalidAnswer(f"{m.group(1)} is given twice")
        out[m.group(1)] = m.group(2).strip()
    if not out:
        return None
    if set(out) != set(names):
        raise InvalidAnswer("not every unknown is given a value")
    return out


# ---- surface forms and near misses (for the environment contract) --------------------------
def grouped(n: int, sep: str) -> str:
    """``n`` with thousands groups joined by ``sep``: ``grouped(1576, "\\\\,") == "1\\\\,576"``."""
    sign, digits = ("-", str(-n)) if n < 0 else ("", str(n))
    head = len(digits) % 3 or 3
    groups = [digits[:head]] + [digits[i : i + 3] for i in range(head, len(digits), 3)]
    return sign + sep.join(groups)


def integer_forms(n: int) -> list[str]:
    """Renderings of the integer ``n`` that every integer verifier must accept."""
    s = str(n)
    forms = [s, f" {s} ", f"${s}$", f"{s}.", f"\\text{{{s}}}", f"\\mathbf{{{s}}}", f"{{{s}}}"]
    forms.append("".join(chr(0x0660 + int(c)) if c.isdigit() else c for c in s))  # Arabic-Indic
    forms.append("".join(chr(0xFF10 + int(c)) if c.isdigit() else c for c in s))  # full-width
    if abs(n) >= 1000:
        forms += [grouped(n, ","), grouped(n, "\\,"), grouped(n, "{,}"), grouped(n, "\\ ")]
        forms.append(f"${grouped(n, '{,}')}$")
    if n < 0:
        forms.append(f"\u2212{-n}")
    return forms


def integer_near_misses(n: int) -> list[str]:
    """Close-in-form wrong readings of ``n`` that every integer verifier must reject: the
    digits split by a separator (never merged back), a neighbour, a second number."""
    s = str(abs(n))
    sign = "-" if n < 0 else ""
    out = [str(n + 1), f"{n}, {n + 1}", f"{n} {n + 1}"]
    if len(s) >= 2:
        out += [f"{sign}{s[:1]}, {s[1:]}", f"{sign}{s[:1]} {s[1:]}", f"{sign}{s[:-1]}; {s[-1]}"]
    if len(s) >= 3:
        out.append(f"{sign}{s[:-2]},{s[-2:]}")  # a comma that is not a thousands separator
    if n != 0:
        out.append(str(-n))
    return out


def list_forms(items: Sequence[str], ordered: bool) -> list[str]:
    """Renderings of a list (``ordered``) or set of ``items`` that must be accepted."""
    body = ", ".join(items)
    forms = [body, f"[{body}]", f"({body})", ",".join(items), "; ".join(items), f"${body}$"]
    forms += [f"{body}.", f"[{body}]."]
    if not ordered:
        rev = ", ".join(reversed(items))
        forms += [f"\\{{{body}\\}}", f"{{{body}}}", f"\\{{{rev}\\}}", rev, f"$\\{{{body}\\}}$"]
    if len(items) == 2:
        forms.append(f"{items[0]} and {items[1]}")
    return forms


def list_near_misses(items: Sequence[str]) -> list[str]:
    """Wrong lists close in form to ``items``: two items merged by dropping the separator
    (a separator never merges numbers, and merged digits are not the list)."""
    out = []
    if len(items) >= 2 and all(_PLAIN_INT.fullmatch(i) for i in items[:2]):
        merged = [items[0] + items[1].lstrip("+-"), *items[2:]]
        out.append(", ".join(merged))
    return out
