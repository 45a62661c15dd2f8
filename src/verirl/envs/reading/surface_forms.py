"""Surface forms of answers: parsers (and renderers) for the free-form environments.

A free-form answer has many spellings: ``4``, ``4.0``, ``four``, ``400\\%``, ``\\frac{8}{2}``;
``April 17, 2021`` and ``2021-04-17``; ``{3, 1, 2}`` and ``1, 2 and 3``; ``12x^3-4x+5`` and
``5 - 4x + 12*x**3``. The parsers here map each spelling to one value (``Fraction``, ``date``,
sympy expression) so that the verifiers compare values, never strings. Every parser raises
:class:`FormError` (a ``ValueError``) on text it cannot read; nothing here evaluates model
text as code (expressions go through the ANTLR LaTeX parser of ``latex2sympy2_extended``,
after a size and exponent guard).
"""

from __future__ import annotations

import datetime as dt
import re
from fractions import Fraction

from verirl.envs.reading.answers import matching_brace


class FormError(ValueError):
    """The text is not a readable answer of the expected kind."""


MAX_CHARS = 200

# ---- cleaning ----------------------------------------------------------------------------------
_WRAPPERS = re.compile(r"\\(?:text|mathrm|textrm|mbox|operatorname|textbf|mathbf)\s*\{")
_SPACING = re.compile(r"\\[,;:! ]|~|\\quad|\\qquad|\\displaystyle|\\left|\\right")
_WHITESPACE = re.compile(r"\s+")
_CLEAN_TRIGGERS = re.compile(r"[$\\~{]")


def clean(text: str) -> str:
    """Strip ``$``, unwrap ``\\text{…}``-like wrappers, drop LaTeX spacing and ``\\left``/
    ``\\right``, map Unicode minus/times, collapse whitespace. Raises on over-long input."""
    if not isinstance(text, str):
        raise FormError("answer is not text")
    if len(text) > MAX_CHARS:
        raise FormError("answer too long")
    if text.isascii() and not _CLEAN_TRIGGERS.search(text):
        # fast path, same result: only the whitespace rule below applies to ASCII text
        # without "$", a backslash (wrappers, spacing), "~" or "{" ("{,}")
        return _WHITESPACE.sub(" ", text.strip()).strip()
    t = text.strip().strip("$").strip()
    t = t.replace("\u2212", "-").replace("\u2013", "-").replace("\u00d7", "\\times ")
    t = t.replace("\u00b7", "\\cdot ").replace("\u00a0", " ").replace("\u2009", " ")
    while True:
        m = _WRAPPERS.search(t)
        if not m:
            break
        close = matching_brace(t, m.end())
        if close is None:
            raise FormError("unbalanced braces")
        t = t[: m.start()] + " " + t[m.end() : close] + " " + t[close + 1 :]
    t = _SPACING.sub(" ", t)
    t = t.replace("{,}", ",")
    return _WHITESPACE.sub(" ", t).strip()


# ---- numbers -----------------------------------------------------------------------------------
_DEC = r"(?:\d+\.?\d*|\.\d+)"
_PLAIN = re.compile(rf"[+-]?{_DEC}")
_THOUSANDS = re.compile(r"([+-]?)(\d{1,3}(?:[, ]\d{3})+)(\.\d+)?")
_SCI_E = re.compile(rf"([+-]?{_DEC})\s*[eE]\s*([+-]?\d{{1,3}})")
_SCI_TIMES = re.compile(
    rf"([+-]?{_DEC})\s*(?:\\times|\\cdot|\*|x)\s*10\s*(?:\^|\*\*)\s*\{{?\s*([+-]?\d{{1,3}})\s*\}}?"
)
_SLASH = re.compile(rf"([+-]?)({_DEC})\s*/\s*({_DEC})")
_MIXED = re.compile(r"([+-]?)(\d+)\s+(\d+)\s*/\s*(\d+)")
_REPEAT = re.compile(r"([+-]?)(\d*)\.(\d*)\s*\\overline\s*\{\s*(\d+)\s*\}")
_FRAC_SHORT = re.compile(r"\\[dt]?frac\s*(\d)\s*(\d)")
_PERCENT = re.compile(r"(?:\\%|%|\s+percent|\s+per cent)$", re.IGNORECASE)


def parse_number(text: str) -> Fraction:
    """An exact rational from a number in any common spelling.

    Digits (``2,500``, ``2 500``, ``-3.``, ``.5``), scientific (``2.5e3``,
    ``2.5 \\times 10^{3}``), fractions (``5/8``, ``\\frac{5}{8}``, ``\\dfrac58``, ``1 1/2``),
    repeating decimals (``0.\\overline{3}``), percentages (``62.5\\%``, ``62.5 percent``) and
    English words (``forty-two``, ``minus five``, ``two point five``, ``three quarters``,
    ``one and a half``).
    """
    t = clean(text)
    if not t:
        raise FormError("empty answer")
    m = _PERCENT.search(t)
    if m:
        return parse_number(t[: m.start()]) / 100
    t = _FRAC_SHORT.sub(r"\\frac{\1}{\2}", t)
    value = _numeric(t)
    if value is not None:
        return value
    return parse_words(t)


def _numeric(t: str) -> Fraction | None:
    compact = re.sub(r"^([+-])\s+", r"\1", t)
    if _PLAIN.fullmatch(compact):
        return _decimal(compact)
    m = _THOUSANDS.fullmatch(t)
    if m:
        return _decimal(m.group(1) + re.sub(r"[, ]", "", m.group(2)) + (m.group(3) or ""))
    for pattern in (_SCI_E, _SCI_TIMES):
        m = pattern.fullmatch(t)
        if m:
            exp = int(m.group(2))
            if abs(exp) > 100:
                raise FormError("exponent out of range")
            return _decimal(m.group(1).replace(" ", "")) * Fraction(10) ** exp
    m = _SLASH.fullmatch(t)
    if m:
        den = _decimal(m.group(3))
        if den == 0:
            raise FormError("division by zero")
        value = _decimal(m.group(2)) / den
        return -value if m.group(1) == "-" else value
    m = _MIXED.fullmatch(t)
    if m:
        if int(m.group(4)) == 0:
            raise FormError("division by zero")
        value = int(m.group(2)) + Fraction(int(m.group(3)), int(m.group(4)))
        return -value if m.group(1) == "-" else value
    m = _REPEAT.fullmatch(t)
    if m:
        sign, whole, fixed, rep = m.groups()
        base = Fraction(int(whole or "0")) + (
            Fraction(int(fixed), 10 ** len(fixed)) if fixed else 0
        )
        value = base + Fraction(int(rep), (10 ** len(rep) - 1) * 10 ** len(fixed))
        return -value if sign == "-" else value
    return _latex_fraction(t)


def _decimal(s: str) -> Fraction:
    s = s.strip()
    if s.endswith("."):
        s = s[:-1]
    if not s or s in "+-":
        raise FormError("not a number")
    return Fraction(s)


def _latex_fraction(t: str) -> Fraction | None:
    """``\\frac{a}{b}`` (also ``\\dfrac``/``\\tfrac``), optionally signed or after a whole
    number (mixed: ``1\\frac{1}{2}``). ``None`` when ``t`` is not of that shape."""
    m = re.match(r"([+-]?)\s*(\d*)\s*\\[dt]?frac\s*\{", t)
    if not m:
        return None
    num_end = matching_brace(t, m.end())
    if num_end is None or num_end + 1 >= len(t) or t[num_end + 1] != "{":
        return None
    den_end = matching_brace(t, num_end + 2)
    if den_end is None or t[den_end + 1 :].strip():
        return None
    num = parse_number(t[m.end() : num_end])
    den = parse_number(t[num_end + 2 : den_end])
    if den == 0:
        raise FormError("division by zero")
    value = num / den + (int(m.group(2)) if m.group(2) else 0)
    return -value if m.group(1) == "-" else value


# ---- numbers in words --------------------------------------------------------------------------
# fmt: off
_UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_TEENS = ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
          "eighteen", "nineteen"]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_ORDINALS = ["zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh",
             "eighth", "ninth", "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth",
             "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth"]
# fmt: on
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_WORD_VALUE = {w: i for i, w in enumerate(_UNITS)} | {w: 10 + i for i, w in enumerate(_TEENS)}
_WORD_VALUE |= {w: 20 + 10 * i for i, w in enumerate(_TENS)}
_DENOMINATORS = {"half": 2, "halves": 2, "quarter": 4, "quarters": 4}
for _i, _w in enumerate(_ORDINALS[3:], start=3):
    _DENOMINATORS[_w] = _i
    _DENOMINATORS[_w + "s"] = _i
for _i, _w in enumerate(("twentieth", "thirtieth", "fortieth", "fiftieth"), start=2):
    _DENOMINATORS[_w] = 10 * _i
    _DENOMINATORS[_w + "s"] = 10 * _i
_DENOMINATORS |= {"hundredth": 100, "hundredths": 100, "thousandth": 1000, "thousandths": 1000}


def parse_words(text: str) -> Fraction:
    """An English number phrase: integers up to the trillions, ``minus``/``negative``,
    ``point`` decimals, simple fractions (``three quarters``, ``five eighths``, ``a half``)
    and ``N and a half``. Raises :class:`FormError` on anything else."""
    words = re.sub(r"[-,]", " ", text.lower()).split()
    if not words:
        raise FormError("empty answer")
    sign = 1
    if words[0] in ("minus", "negative"):
        sign, words = -1, words[1:]
    if "and" in words and words[-1] in _DENOMINATORS:  # "two and a half"
        cut = len(words) - 1 - words[::-1].index("and")
        whole, frac = words[:cut], words[cut + 1 :]
        if whole and frac and frac[0] in ("a", "an", *_UNITS, *_TEENS, *_TENS):
            return sign * (_integer_words(whole) + _fraction_words(frac))
    if words[-1] in _DENOMINATORS:
        return sign * _fraction_words(words)
    if "point" in words:
        cut = words.index("point")
        digits = words[cut + 1 :]
        if not digits or any(d not in _UNITS for d in digits):
            raise FormError("digits after 'point' must be single digit words")
        decimals = Fraction(int("".join(str(_UNITS.index(d)) for d in digits)), 10 ** len(digits))
        integer = _integer_words(words[:cut]) if words[:cut] else 0
        return sign * (integer + decimals)
    return sign * Fraction(_integer_words(words))


def _fraction_words(words: list[str]) -> Fraction:
    den = _DENOMINATORS[words[-1]]
    head = words[:-1]
    num = 1 if head in (["a"], ["an"], ["one"]) or not head else _integer_words(head)
    if num != 1 and not words[-1].endswith("s"):
        raise FormError("fraction word must be plural after a numerator above one")
    return Fraction(num, den)


def _integer_words(words: list[str]) -> int:
    total, current, last, scale_seen = 0, 0, None, 10**15
    for w in words:
        if w == "and" and last in ("hundred", "scale"):
            continue
        if w in ("a", "an") and last is None:
            current, last = 1, "unit"
            continue
        if re.fullmatch(r"\d+", w) and last in (None, "scale"):
            current, last = int(w), "digits"
            continue
        value = _WORD_VALUE.get(w)
        if value is not None:
            if value < 10:
                ok = last in (None, "tens", "hundred", "scale")
                kind = "unit"
            elif value < 20:
                ok = last in (None, "hundred", "scale")
                kind = "teen"
            else:
                ok = last in (None, "hundred", "scale")
                kind = "tens"
            if not ok:
                raise FormError(f"unexpected number word {w!r}")
            current += value
            last = kind
        elif w == "hundred":
            if last not in ("unit", "teen", "tens", "digits") or current >= 100 or current == 0:
                raise FormError("misplaced 'hundred'")
            current *= 100
            last = "hundred"
        elif w in _SCALES:
            scale = _SCALES[w]
            if current == 0 or scale >= scale_seen:
                raise FormError(f"misplaced {w!r}")
            total += current * scale
            current, last, scale_seen = 0, "scale", scale
        else:
            raise FormError(f"not a number word: {w!r}")
    if last is None:
        raise FormError("no number words")
    return total + current


def number_to_words(n: int, hyphen: bool = True, british_and: bool = False) -> str:
    """``801`` → ``eight hundred one`` (``british_and``: ``eight hundred and one``);
    ``42`` → ``forty-two`` (``hyphen=False``: ``forty two``)."""
    if n < 0:
        return "minus " + number_to_words(-n, hyphen, british_and)
    if n == 0:
        return "zero"
    parts: list[str] = []
    for name, scale in sorted(_SCALES.items(), key=lambda kv: -kv[1]):
        if n >= scale:
            parts.append(_below_thousand(n // scale, hyphen, british_and) + " " + name)
            n %= scale
    if n:
        parts.append(_below_thousand(n, hyphen, british_and))
    return " ".join(parts)


def _below_thousand(n: int, hyphen: bool, british_and: bool) -> str:
    out = []
    if n >= 100:
        out.append(_UNITS[n // 100] + " hundred")
        n %= 100
        if n and british_and:
            out.append("and")
    if n >= 20:
        tens = _TENS[n // 10 - 2]
        out.append(tens + (("-" if hyphen else " ") + _UNITS[n % 10] if n % 10 else ""))
    elif n >= 10:
        out.append(_TEENS[n - 10])
    elif n:
        out.append(_UNITS[n])
    return " ".join(out)


def decimal_string(x: Fraction, max_places: int = 12) -> str | None:
    """The exact finite decimal of ``x`` (``Fraction(5, 8)`` → ``0.625``), or ``None`` when it
    does not terminate within ``max_places``."""
    for places in range(max_places + 1):
        scaled = x * 10**places
        if scaled.denominator == 1:
            n = int(scaled)
            sign = "-" if n < 0 else ""
            digits = str(abs(n)).rjust(places + 1, "0")
            return sign + (digits[:-places] + "." + digits[-places:] if places else digits)
    return None


# ---- quantities with units ---------------------------------------------------------------------
def parse_quantity(text: str, synonyms: dict[str, str]) -> tuple[Fraction, str | None]:
    """``2,500 meters`` → ``(2500, 'm')`` given ``synonyms`` (spelling → unit key, matched
    case-insensitively at the end of the text, longest first). No unit → ``None``."""
    t = clean(text)
    lower = t.lower()
    for spelling in sorted(synonyms, key=len, reverse=True):
        s = spelling.lower()
        if lower.endswith(s):
            head = t[: len(t) - len(s)]
            if head and (head[-1].isspace() or head[-1].isdigit() or head[-1] in ".}"):
                return parse_number(head), synonyms[spelling]
    return parse_number(t), None


# ---- dates ----------------------------------------------------------------------------------
MONTHS = [
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
]  # fmt: skip
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


def _month(word: str) -> int | None:
    w = word.lower().rstrip(".")
    if w == "sept":
        return 9
    for i, name in enumerate(MONTHS):
        if w == name or (len(w) >= 3 and name.startswith(w) and len(w) <= len(name)):
            return i + 1
    return None


_ORDINAL_SUFFIX = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b")
_DATE_FILLERS = re.compile(r"\b(the|of|on)\b")
_ISO_DATE = re.compile(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})")
_DOTTED_DATE = re.compile(r"(\d{1,2})\.(\d{1,2})\.(\d{4})")
_NUMERIC_DATE = re.compile(r"(\d{1,2})[/-](\d{1,2})[/-](\d{4})")
_MONTH_DAY_YEAR = re.compile(r"([a-z.]+) (\d{1,2}) (\d{4})")
_DAY_MONTH_YEAR = re.compile(r"(\d{1,2}) ([a-z.]+) (\d{4})")


_MONTH_D_YYYY = re.compile(r"([A-Za-z]{3,9}) ([0-9]{1,2}), ([0-9]{4})")
# Month words of 3+ letters that _month reads (every prefix of a month's name, and "sept"),
# except those the slow path reads otherwise (a weekday's prefix or a filler word): none is.
_MONTH_WORDS: dict[str, int] = {
    word: month
    for word in {name[:k] for name in MONTHS for k in range(3, len(name) + 1)} | {"sept"}
    if (month := _month(word)) is not None
    and not any(day.startswith(word) for day in WEEKDAYS)
    and word not in ("the", "of", "on")
}


def parse_date(text: str) -> tuple[dt.date, int | None]:
    """A calendar date in common spellings, and the weekday (0 = Monday) if one is named.

    ``2021-04-17``, ``April 17, 2021``, ``17 April 2021``, ``Apr. 17th 2021``,
    ``the 17th of April, 2021``, ``Saturday, April 17, 2021``, ``17.04.2021`` (day first) and
    ``4/17/2021`` / ``17/4/2021`` — the slash form only when one reading is a valid date or
    both readings agree (``4/5/2021`` is refused as ambiguous).
    """
    if m := _MONTH_D_YYYY.fullmatch(text):
        # fast path, same result: "April 17, 2021" (or "Apr 17, 2021"): nothing to clean, no
        # ordinal suffix, filler word or weekday; the slow path below reads the same month
        # word through _month (which _MONTH_WORDS holds, its answers precomputed)
        month = _MONTH_WORDS.get(m[1].lower())
        if month is not None:
            return _date(int(m[3]), month, int(m[2])), None
    t = clean(text).lower().replace(",", " ")
    t = _ORDINAL_SUFFIX.sub(r"\1", t)
    t = _DATE_FILLERS.sub(" ", t)
    words = t.split()
    weekday = None
    if words:
        w0 = words[0].rstrip(".")
        for i, name in enumerate(WEEKDAYS):
            if w0 == name or (len(w0) >= 3 and name.startswith(w0)):
                weekday, words = i, words[1:]
                break
    t = " ".join(words)
    if m := _ISO_DATE.fullmatch(t):
        return _date(int(m[1]), int(m[2]), int(m[3])), weekday
    if m := _DOTTED_DATE.fullmatch(t):
        return _date(int(m[3]), int(m[2]), int(m[1])), weekday
    if m := _NUMERIC_DATE.fullmatch(t):
        a, b, y = int(m[1]), int(m[2]), int(m[3])
        readings = {d for d in (_maybe_date(y, a, b), _maybe_date(y, b, a)) if d is not None}
        if len(readings) != 1:
            raise FormError("ambiguous or invalid numeric date")
        return readings.pop(), weekday
    if m := _MONTH_DAY_YEAR.fullmatch(t):
        month = _month(m[1])
        if month:
            return _date(int(m[3]), month, int(m[2])), weekday
    if m := _DAY_MONTH_YEAR.fullmatch(t):
        month = _month(m[2])
        if month:
            return _date(int(m[3]), month, int(m[1])), weekday
    raise FormError("not a date")


def _date(y: int, m: int, d: int) -> dt.date:
    out = _maybe_date(y, m, d)
    if out is None:
        raise FormError("no such date")
    return out


def _maybe_date(y: int, m: int, d: int) -> dt.date | None:
    try:
        return dt.date(y, m, d)
    except ValueError:
        return None


def render_date(d: dt.date, style: str) -> str:
    """``long`` April 17, 2021 · ``iso`` 2021-04-17 · ``day_first`` 17 April 2021 ·
    ``abbrev`` Apr 17, 2021 · ``ordinal`` April 17th, 2021 · ``weekday`` Saturday, April 17,
    2021 · ``us_numeric`` 04/17/2021 · ``dotted`` 17.04.2021."""
    month = MONTHS[d.month - 1].capitalize()
    if style == "long":
        return f"{month} {d.day}, {d.year}"
    if style == "iso":
        return d.isoformat()
    if style == "day_first":
        return f"{d.day} {month} {d.year}"
    if style == "abbrev":
        return f"{month[:3]} {d.day}, {d.year}"
    if style == "ordinal":
        suffix = (
            "th" if 10 <= d.day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(d.day % 10, "th")
        )
        return f"{month} {d.day}{suffix}, {d.year}"
    if style == "weekday":
        return f"{WEEKDAYS[d.weekday()].capitalize()}, {month} {d.day}, {d.year}"
    if style == "us_numeric":
        return f"{d.month:02d}/{d.day:02d}/{d.year}"
    if style == "dotted":
        return f"{d.day:02d}.{d.month:02d}.{d.year}"
    raise ValueError(f"unknown date style {style!r}")


# ---- unordered lists -------------------------------------------------------------------------
_ITEM_PREFIX = re.compile(r"^(?:[a-z](?:_\{?\d+\}?)?\s*=\s*)")


def split_items(text: str) -> list[str]:
    """Items of a list or set answer: ``{3, 1, 2}``, ``[1; 2]``, ``x = 2 or x = 3``,
    ``1, 2 and 3``. Outer brackets and ``x =`` / ``x_1 =`` prefixes are removed."""
    t = clean(text)
    t = re.sub(r"\\[{}]", lambda m: m.group(0)[1], t)
    while len(t) >= 2 and t[0] + t[-1] in ("{}", "[]", "()"):
        t = t[1:-1].strip()
    parts = re.split(r"\s*(?:,|;|\band\b|\bor\b|&)\s*", t)
    items = [_ITEM_PREFIX.sub("", p.strip()).strip() for p in parts]
    items = [i for i in items if i]
    if not items:
        raise FormError("empty list")
    if len(items) > 1000:
        raise FormError("list too long")
    return items


# ---- rendering numbers in several spellings -------------------------------------------------
_DENOMINATOR_WORDS = {2: ("half", "halves"), 4: ("quarter", "quarters")}
for _i in range(3, 20):
    if _i != 4:
        _DENOMINATOR_WORDS[_i] = (_ORDINALS[_i], _ORDINALS[_i] + "s")


def repeating_decimal(x: Fraction, max_period: int = 12) -> str | None:
    """``1/6`` → ``0.1\\overline{6}``; ``None`` when ``x`` terminates or the period or the
    pre-period is longer than ``max_period``."""
    if decimal_string(x) is not None:
        return None
    sign, x = ("-" if x < 0 else ""), abs(x)
    whole, rem, den = x.numerator // x.denominator, x.numerator % x.denominator, x.denominator
    digits: list[str] = []
    seen: dict[int, int] = {}
    while rem and rem not in seen and len(digits) <= 2 * max_period:
        seen[rem] = len(digits)
        rem *= 10
        digits.append(str(rem // den))
        rem %= den
    if rem not in seen:
        return None
    start = seen[rem]
    fixed, period = "".join(digits[:start]), "".join(digits[start:])
    if len(period) > max_period:
        return None
    return f"{sign}{whole}.{fixed}\\overline{{{period}}}"


def fraction_words(x: Fraction) -> str | None:
    """``5/8`` → ``five eighths``; ``3/2`` → ``three halves``; ``None`` for integers and
    denominators above 19."""
    if x.denominator == 1 or x.denominator > 19:
        return None
    sign, x = ("minus " if x < 0 else ""), abs(x)
    one, many = _DENOMINATOR_WORDS[x.denominator]
    num = x.numerator
    return f"{sign}{number_to_words(num)} {one if num == 1 else many}"


def render_number(x: Fraction, style: str) -> str | None:
    """``x`` spelled in ``style``, or ``None`` when that spelling does not exist for ``x``:

    ``plain`` 2500 / 0.625 · ``thousands`` 2,500 · ``trailing_zero`` 2500.0 · ``sci``
    2.5 \\times 10^{3} · ``e`` 2.5e3 · ``words`` two thousand five hundred · ``fraction`` 5/8 ·
    ``latex`` \\frac{5}{8} · ``dfrac`` \\dfrac{5}{8} · ``unreduced`` 10/16 · ``percent``
    62.5\\% · ``mixed`` 1 1/2 · ``fraction_words`` five eighths · ``repeating``
    0.\\overline{3} · ``rounded4`` 0.3333 (non-terminating values only).
    """
    dec = decimal_string(x)
    sign = "-" if x < 0 else ""
    a = abs(x)
    if style == "plain":
        return dec
    if style == "thousands":
        if dec is None or a < 1000:
            return None
        whole, _, frac = dec.lstrip("-").partition(".")
        return sign + f"{int(whole):,}" + ("." + frac if frac else "")
    if style == "trailing_zero":
        return None if dec is None else (dec + ".0" if "." not in dec else dec + "0")
    if style in ("sci", "e"):
        if dec is None or x == 0:
            return None
        exp = len(str(int(a))) - 1 if a >= 1 else -len(str(int(1 / a)))
        while a / Fraction(10) ** exp >= 10:
            exp += 1
        while a / Fraction(10) ** exp < 1:
            exp -= 1
        mant = decimal_string(a / Fraction(10) ** exp)
        if mant is None or exp == 0:
            return None
        return f"{sign}{mant} \\times 10^{{{exp}}}" if style == "sci" else f"{sign}{mant}e{exp}"
    if style == "words":
        return number_to_words(int(x)) if x.denominator == 1 and a < 10**15 else None
    if style in ("fraction", "latex", "dfrac", "unreduced"):
        if x.denominator == 1:
            return None
        n, d = a.numerator, a.denominator
        if style == "unreduced":
            n, d = 2 * n, 2 * d
        if style == "fraction" or style == "unreduced":
            return f"{sign}{n}/{d}"
        return f"{sign}\\{'d' if style == 'dfrac' else ''}frac{{{n}}}{{{d}}}"
    if style == "percent":
        pct = decimal_string(x * 100)
        return None if pct is None else pct + "\\%"
    if style == "mixed":
        if a < 1 or a.denominator == 1:
            return None
        integer = a.numerator // a.denominator
        rest = a - integer
        return f"{sign}{integer} {rest.numerator}/{rest.denominator}"
    if style == "fraction_words":
        return fraction_words(x)
    if style == "repeating":
        return repeating_decimal(x)
    if style == "rounded4":
        return None if dec is not None else decimal_string(round(x, 4))
    raise ValueError(f"unknown number style {style!r}")


NUMBER_STYLES = (
    "plain", "thousands", "trailing_zero", "sci", "e", "words", "fraction", "latex", "dfrac",
    "unreduced", "percent", "mixed", "fraction_words", "repeating", "rounded4",
)  # fmt: skip
