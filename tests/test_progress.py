from __future__ import annotations

import logging
import time

import pytest

from verirl import progress


def lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "verirl.progress"]


def test_a_phase_says_when_it_starts_beats_and_ends(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="verirl.progress")
    with progress.phase("evaluation", total=10, unit="samples", interval=0.05) as p:
        progress.advance(3)
        time.sleep(0.3)  # several heartbeats
        progress.advance(7)
    out = lines(caplog)
    assert out[0] == "evaluation: started (10 samples)"
    beats = out[1:-1]
    assert len(beats) >= 2
    assert all(b.startswith("evaluation: 3/10 samples, ") for b in beats)
    assert out[-1].startswith("evaluation: 10/10 samples, ") and out[-1].endswith("(done)")
    assert p.done == 10


def test_advance_counts_in_the_innermost_phase_and_nothing_outside() -> None:
    progress.advance(5)  # no phase: nothing to count, no error
    with progress.phase("outer", interval=60) as outer:
        with progress.phase("inner", total=2, interval=60) as inner:
            progress.advance(2)
        progress.advance(1)
    assert (outer.done, inner.done) == (1, 2)


def test_a_failing_phase_says_so(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="verirl.progress")
    with pytest.raises(RuntimeError), progress.phase("checkpoint", interval=60):
        raise RuntimeError("disk full")
    assert lines(caplog)[-1].endswith("(failed)")
    progress.advance(1)  # the failed phase left the stack


def test_a_quiet_phase_speaks_only_when_it_runs_long_or_fails(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="verirl.progress")
    with progress.phase("short write", quiet=True, interval=60):
        pass
    assert lines(caplog) == []
    with progress.phase("long write", quiet=True, interval=0.05):
        time.sleep(0.2)
    out = lines(caplog)
    assert out[0].startswith("long write: ") and out[-1].endswith("(done)")
    with pytest.raises(OSError), progress.phase("failed write", quiet=True, interval=60):
        raise OSError("disk full")
    assert lines(caplog)[-1].startswith("failed write: ") and "(failed)" in lines(caplog)[-1]
