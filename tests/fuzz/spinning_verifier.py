"""A plugin for the deadline tests (``ProcessExecutor(plugins=["tests.fuzz.spinning_verifier"])``).

Imported in the worker processes only: there the ``addition`` verifier, given the answer
``spin:<path>``, writes its process id to ``<path>`` and then spins in pure Python (holding the
GIL, as a parser stuck on hostile text does) for :data:`SPIN_S` seconds before answering.
Every other answer is verified as usual.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from verirl.envs import get_env
from verirl.types import Problem, Verdict

SPIN_S = 120.0

Check = Callable[[object, Problem, str], Verdict]


def spin(path: str, seconds: float = SPIN_S) -> None:
    """Write this process's id to ``path``, then burn CPU for ``seconds``."""
    Path(path).write_text(str(os.getpid()))
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        sum(i * i for i in range(1000))


def spinning(check: Check) -> Check:
    def spinning_check(self: object, problem: Problem, answer: str) -> Verdict:
        if answer.startswith("spin:"):
            spin(answer.removeprefix("spin:"))
        return check(self, problem, answer)

    return spinning_check


_cls = type(get_env("addition"))
_cls.check = spinning(_cls.check)  # type: ignore[method-assign,assignment]
