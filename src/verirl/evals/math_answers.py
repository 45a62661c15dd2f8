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
is bounded: only the last :data:`MAX_RESPONSE_CHARS` characters are read, math-verify's own
``signal.alarm`` timeouts apply in the main thread, and every failure inside math-verify is a
wrong answer, never an exception.
"""

from __future__ import annotations

import re
import threading
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


def _config() -> tuple[list[Any], list[Any]]:
    from math_verify import ExprExtractionConfig, LatexExtractionConfig

    gold = [LatexExtractionConfig()]
    pred = [LatexExtractionConfig(boxed_match_priority=0), ExprExtractionConfig()]
    return gold, pred


def _timeout(timeout_s: int) -> int | None:
    """math-verify's timeouts use ``signal.alarm``: only the main thread may set one."""
    return timeout_s if threading.current_thread() is threading.main_thread() else None


@lru_cache(maxsize=4096)
def _parse_gold(gold: str, timeout_s: int) -> tuple[Any, ...]:
    from math_verify import parse

    gold_config, _ = _config()
    return tuple(parse(f"\\boxed{{{gold}}}", gold_config, parsing_timeout=_timeout(timeout_s)))


def parse_gold(gold: str, timeout_s: int = 5) -> list[Any]:
    """The gold answer (LaTeX or a number) as math-verify reads it: ``\\boxed{gold}``.
    An empty list means math-verify cannot read it (a data error, reported by the caller)."""
    if not gold.strip() or len(gold) > MAX_GOLD_CHARS:
        return []
    try:
        return list(_parse_gold(gold, timeout_s))
    except (Exception, _timeout_exception()):
        return []


def _timeout_exception() -> type[BaseException]:
    from math_verify.errors import TimeoutException

    return TimeoutException


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
    timeout = _timeout(timeout_s)
    try:
        pred = parse(text, pred_config, parsing_timeout=timeout)
    except (Exception, _timeout_exception()):
        return Grade(False, None, boxed)
    if not pred:
        return Grade(False, None, boxed)
    answer = str(pred[-1])[:200]  # the extracted string (math-verify's fallback entry)
    try:
        ok = bool(verify(gold_parsed, pred, timeout_seconds=timeout))
    except (Exception, _timeout_exception()):
        ok = False
    return Grade(ok, answer, boxed)


__all__ = ["MAX_RESPONSE_CHARS", "Grade", "grade", "gsm8k_gold", "parse_gold"]
