"""Grading math benchmark answers with math-verify, as the reference graders compare.

- **GSM8K** (Cobbe et al. 2021, *Training Verifiers to Solve Math Word Problems*,
  arXiv:2110.14168): the gold answer is the number after the solution's final ``#### ``
  (the release's own ``extract_answer`` reads it the same way), thousands separators removed.
  The reference graders compare the model's final number with it: OpenAI's ``grade_school_math``
  and lm-evaluation-harness's ``flexible-extract`` take the last number of the response. With a
  ``\\boxed{}`` prompt the boxed number is the final answer; without one, the last number is.
- **MATH / MATH-500** (Hendrycks et al. 2021, arXiv:2103.03874; the 500-problem subset of
  Lightman et al. 2023, arXiv:2305.20050): the gold answer is the problem's ``\\boxed{}`` answer
  (the dataset's ``answer`` field, or the last ``\\boxed{}`` of the solution); the model's
  answer is its last ``\\boxed{}``, compared by mathematical equivalence rather than string
  equality — math-verify's ``verify``, as lighteval and open-r1 grade MATH-500.

A response is read with math-verify's extraction: ``\\boxed{}`` first (priority 0), then the
anchored forms ("the final answer is …"), then the last LaTeX expression or number. Grading
is bounded: only the last :data:`MAX_RESPONSE_CHARS` characters are read, a deadline applies in
the main thread (see :func:`_deadline`), and every failure inside math-verify is a wrong
answer, never an exception.
"""

from __future__ import annotations

import contextlib
import logging
import re
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from verirl.envs.reading.answers import last_boxed

MAX_RESPONSE_CHARS = 20_000
"""Longer responses are graded on their tail (the final answer comes last)."""

MAX_GOLD_CHARS = 2_000

_GSM8K_FINAL = re.compile(r"####\s*(?P<answer>[^\n]*)")


@dataclass(frozen=True)
class Grade:
    """``correct``: math-verify's verdict; ``answer``: the text math-verify extracted from the
    response (``None`` when it found none); ``boxed``: whether the response has a closed
    ``\\boxed{}`` (the prompt's asked-for format)."""

    correct: bool
    answer: str | None
    boxed: bool


def gsm8k_gold(solution: str) -> str:
    """The gold number of a GSM8K worked solution: what follows its last ``####``, without
    thousands separators, ``$`` or surrounding space. Raises ``ValueError`` when there is none."""
    found = _GSM8K_FINAL.findall(solution)
    if not found:
        raise ValueError("a GSM8K answer ends with '#### <number>'; this one has no '####'")
    gold = found[-1].strip().replace(",", "").replace("$", "").strip()
    if not gold:
        raise ValueError("a GSM8K answer ends with '#### <number>'; the number is empty")
    return gold


def _not_our_timeout_notice(record: logging.LogRecord) -> bool:
    """math-verify warns that its timeouts are off when we pass ``None``: ours is on."""
    return not str(record.msg).startswith("Timeout is disabled")


for _name in ("math_verify.parser", "math_verify.grader"):
    logging.getLogger(_name).addFilter(_not_our_timeout_notice)


def _config() -> tuple[list[Any], list[Any]]:
    from math_verify import ExprExtractionConfig, LatexExtractionConfig

    gold = [LatexExtractionConfig()]
    pred = [LatexExtractionConfig(boxed_match_priority=0), ExprExtractionConfig()]
    return gold, pred


class GradeTimeout(BaseException):
    """Grading overran its deadline. A ``BaseException``, so math-verify's and sympy's own
    ``except Exception`` clauses do not swallow it."""


_REPEAT_S = 0.05
"""After the deadline the alarm repeats at this interval until the call has stopped."""


@contextlib.contextmanager
def _deadline(timeout_s: float) -> Iterator[None]:
    """Raise :class:`GradeTimeout` in the main thread once ``timeout_s`` has passed.

    math-verify's own timeouts (one ``signal.alarm``) fire once: an exception raised while a
    ``__del__``, a weakref callback or a garbage-collection callback runs is printed and
    dropped by the interpreter, and the call then went on without any deadline. This timer
    repeats every :data:`_REPEAT_S` seconds after the deadline until the call has returned.
    Signals reach only the main thread; elsewhere the call runs without a deadline (its input
    is bounded by :data:`MAX_RESPONSE_CHARS`).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def fire(signum: int, frame: object) -> None:
        raise GradeTimeout(f"grading took longer than {timeout_s:g} s")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, timeout_s, _REPEAT_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@lru_cache(maxsize=4096)
def _parse_gold(gold: str, timeout_s: int) -> tuple[Any, ...]:
    from math_verify import parse

    gold_config, _ = _config()
    with _deadline(timeout_s):
        return tuple(parse(f"\\boxed{{{gold}}}", gold_config, parsing_timeout=None))


def parse_gold(gold: str, timeout_s: int = 5) -> list[Any]:
    """The gold answer (LaTeX or a number) as math-verify reads it: ``\\boxed{gold}``.
    An empty list means math-verify cannot read it (a data error, reported by the caller)."""
    if not gold.strip() or len(gold) > MAX_GOLD_CHARS:
        return []
    try:
        return list(_parse_gold(gold, timeout_s))
    except (Exception, GradeTimeout):
        return []


def grade(response: str, gold: str, timeout_s: int = 5) -> Grade:
    """Is ``response`` (a whole model output) a correct answer to a problem whose gold answer
    is ``gold``? Never raises; bounded in time and input size (see the module docstring)."""
    from math_verify import parse, verify

    text = response[-MAX_RESPONSE_CHARS:]
    boxed = last_boxed(text) is not None
    gold_parsed = parse_gold(gold, timeout_s)
    if not gold_parsed:
        return Grade(False, None, boxed)
    _, pred_config = _config()
    try:
        with _deadline(timeout_s):
            pred = parse(text, pred_config, parsing_timeout=None)
    except (Exception, GradeTimeout):
        return Grade(False, None, boxed)
    if not pred:
        return Grade(False, None, boxed)
    answer = str(pred[-1])[:200]  # the extracted string (math-verify's fallback entry)
    try:
        with _deadline(timeout_s):
            ok = bool(verify(gold_parsed, pred, timeout_seconds=None))
    except (Exception, GradeTimeout):
        ok = False
    return Grade(ok, answer, boxed)


__all__ = ["MAX_RESPONSE_CHARS", "Grade", "GradeTimeout", "grade", "gsm8k_gold", "parse_gold"]
