"""The executors of the verification stage: every one maps in order and reports errors; the
process pool enforces deadlines."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from verirl.verification.executors import (
    EXECUTORS,
    InlineExecutor,
    ProcessExecutor,
    ThreadExecutor,
)


def _double(x: int) -> int:
    return 2 * x


def _slow_or_fail(x: float) -> float:
    if x < 0:
        raise ZeroDivisionError("negative input")
    time.sleep(x)
    return x


def _die(x: int) -> int:
    os._exit(3)


@pytest.mark.parametrize("name", ["inline", "threads", "processes"])
def test_every_executor_maps_in_order_and_reports_errors(name: str) -> None:
    with EXECUTORS.get(name).build({}) as ex:
        assert [o.value for o in ex.map(_double, [1, 2, 3])] == [2, 4, 6]
        out = ex.map(_slow_or_fail, [0.0, -1.0])
        assert out[0].ok and out[0].value == 0.0
        assert not out[1].ok and "ZeroDivisionError: negative input" in (out[1].error or "")


def _pid_then_sleep(path: str) -> int:
    """Write this worker's process id to ``path``, then sleep 30 s."""
    Path(path).write_text(str(os.getpid()))
    time.sleep(30.0)
    return os.getpid()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_processes_enforce_the_deadline_and_replace_the_worker(tmp_path: Path) -> None:
    marker = tmp_path / "worker.pid"
    with ProcessExecutor() as ex:
        out = ex.map(_pid_then_sleep, [str(marker)], timeout_s=1.0)
        assert out[0].timed_out and not out[0].ok
        # The 30 s call was stopped, not waited for: its worker was killed (a call that ends
        # leaves its worker serving the pool). The kill is reaped asynchronously: poll.
        pid = int(marker.read_text())
        for _ in range(600):
            if not _alive(pid):
                break
            time.sleep(0.05)
        assert not _alive(pid)
        assert [o.value for o in ex.map(_slow_or_fail, [0.0, 0.01], timeout_s=30.0)] == [0.0, 0.01]
        assert ex.map(_double, [5])[0].value == 10  # the pool still serves calls


def _registered_environments(_: int) -> int:
    """How many environments the worker has registered, without loading any itself."""
    from verirl.envs.base import ENVIRONMENTS

    return len(ENVIRONMENTS.names())


def test_process_workers_load_every_environment_before_their_first_call() -> None:
    """Loading the families costs seconds; inside a call it counted against the deadline."""
    from verirl.envs import env_names

    expected = len(env_names())
    with ProcessExecutor() as ex:
        assert [o.value for o in ex.map(_registered_environments, [0, 1])] == [expected] * 2


def test_a_worker_that_dies_costs_its_item_only() -> None:
    with ProcessExecutor() as ex:
        out = ex.map(_die, [1])
        assert not out[0].ok and "worker died" in (out[0].error or "")
        assert ex.map(_double, [4])[0].value == 8


def test_threads_and_inline_report_overruns() -> None:
    with ThreadExecutor() as ex:
        out = ex.map(_slow_or_fail, [2.0], timeout_s=0.2)
        assert out[0].timed_out
    out = InlineExecutor().map(_slow_or_fail, [0.3], timeout_s=0.1)
    assert out[0].timed_out  # reported after the fact (inline cannot stop a call)
