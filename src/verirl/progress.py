"""Progress of the long phases of a run: a line at least every ``interval`` seconds.

A training step already prints its line (:mod:`verirl.train.metrics`). The phases between
steps — converting the default model, the held-out evaluations before and after training,
writing a checkpoint — run for seconds to many minutes; each runs inside :func:`phase`, which
logs when it starts, a heartbeat every ``interval`` seconds (what is done of the total and the
time so far), and when it ends. The lines go to the logger ``verirl.progress``, which reaches
``run.log`` and, when stdout is not a terminal, stdout (``verirl train > log``).

Work deep inside a phase reports itself with :func:`advance` — a rollout engine calls it as
sequences finish — without knowing which phase, if any, is running: outside a phase it does
nothing.

    with phase("held-out evaluation before training", total=450, unit="sequences"):
        evaluate(...)           # the engine calls progress.advance(k) as it goes
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

PROGRESS = logging.getLogger("verirl.progress")
"""Where the phase lines go (level INFO, set here so that they reach ``run.log`` whatever
level the ``verirl`` logger has)."""
PROGRESS.setLevel(logging.INFO)

INTERVAL_S = 30.0
"""The longest silence inside a phase, in seconds."""

_local = threading.local()


class Phase:
    """One running phase: ``done`` of ``total`` (None: not known) ``unit`` since ``start``."""

    def __init__(self, name: str, total: int | None, unit: str) -> None:
        self.name, self.total, self.unit = name, total, unit
        self.done = 0
        self.start = time.perf_counter()

    def advance(self, n: int = 1) -> None:
        self.done += n

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def line(self) -> str:
        """``name: done/total unit, elapsed s`` (the count left out when nothing counts)."""
        if self.total is not None:
            count = f"{self.done}/{self.total} {self.unit}".rstrip() + ", "
        elif self.done:
            count = f"{self.done} {self.unit}".rstrip() + ", "
        else:
            count = ""
        return f"{self.name}: {count}{self.elapsed:.0f} s"


@contextmanager
def phase(
    name: str,
    total: int | None = None,
    unit: str = "",
    interval: float = INTERVAL_S,
    quiet: bool = False,
) -> Iterator[Phase]:
    """Run the body as a phase named ``name``: a line when it starts, one every ``interval``
    seconds while it runs (from a daemon thread) and one when it ends (``done`` or
    ``failed``). ``quiet``: a phase that is usually short (a checkpoint write) says nothing
    unless it outlasts one ``interval`` (then it beats and ends as any other) or fails.
    Phases nest; :func:`advance` counts in the innermost one of this thread."""
    current = Phase(name, total, unit)
    stack: list[Phase] = _local.__dict__.setdefault("stack", [])
    stack.append(current)
    if not quiet:
        PROGRESS.info("%s: started%s", name, f" ({total} {unit})".rstrip() if total else "")
    stop = threading.Event()
    beats = 0

    def beat() -> None:
        nonlocal beats
        while not stop.wait(interval):
            beats += 1
            PROGRESS.info("%s", current.line())

    thread = threading.Thread(target=beat, name=f"progress: {name}", daemon=True)
    thread.start()
    ok = False
    try:
        yield current
        ok = True
    finally:
        stop.set()
        thread.join()
        stack.remove(current)
        if not (quiet and ok and beats == 0):
            PROGRESS.info("%s (%s)", current.line(), "done" if ok else "failed")


def advance(n: int = 1) -> None:
    """Count ``n`` more units of work in this thread's innermost phase (none: nothing)."""
    stack = getattr(_local, "stack", None)
    if stack:
        stack[-1].advance(n)
