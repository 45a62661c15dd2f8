"""Time budgets in units of this machine's speed, measured in the same run (test helper).

A test never asserts an absolute wall-clock time: a budget that holds on one machine fails on
a slower or busier one. Where a test must bound how long something takes (a verifier on
hostile text, a generator at high difficulty), the bound is a multiple of
:func:`reference_seconds` — a fixed pure-Python workload timed in the same process, so that
the bound scales with the machine — and a call over it is timed again before it counts
(:meth:`Budget.overrun`), so that one burst of load on a shared machine does not fail a run.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

_WORDS = re.compile(r"[a-z]+|\d+")
_TEXT = "12x^{3} - 4x + 5 = 5 - 4x + 12*x**3; \\frac{7}{2} and 2,500 of 1000 more words"


def _reference_work() -> int:
    """About what reading an answer does: regexes, string building, dicts, small big-ints."""
    seen: dict[str, int] = {}
    total = 0
    for i in range(1000):
        text = f"{_TEXT} {i * 7919:x}"
        for word in _WORDS.findall(text):
            seen[word] = seen.get(word, 0) + 1
        total += (i**7) % 1009 + len(text.split())
    return total + len(seen)


def reference_seconds(repeats: int = 5) -> float:
    """Seconds the reference workload takes on this machine now (the fastest of ``repeats``:
    other processes only ever make it slower). About 5 ms on a 2-core CI machine."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        _reference_work()
        best = min(best, time.perf_counter() - t0)
    return best


def timed(call: Callable[[], object]) -> float:
    """Seconds one ``call()`` takes."""
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0


@dataclass
class Budget:
    """At most ``units`` times the reference workload per call, on this machine."""

    units: float
    reference_s: float = field(default_factory=reference_seconds)

    @property
    def seconds(self) -> float:
        return self.units * self.reference_s

    def overrun(
        self,
        call: Callable[[], object],
        elapsed: float,
        retries: int = 2,
        allowance_s: float = 0.0,
    ) -> float | None:
        """``None`` when a call that took ``elapsed`` seconds is within budget (past a fixed
        ``allowance_s``, e.g. a prover's own deadline); else its cost in reference units.
        A call over budget is timed ``retries`` more times (its fastest run counts) against
        the reference timed again now (the slower of the two references counts): only a call
        that is slow every time, on the machine as it is now, is over."""
        if elapsed <= allowance_s + self.seconds:
            return None
        best = min([elapsed, *(timed(call) for _ in range(retries))])
        reference = max(self.reference_s, reference_seconds(3))
        units = (best - allowance_s) / reference
        return units if units > self.units else None
