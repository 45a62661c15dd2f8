"""Checked sandbox runs (``Sandbox.run_checked``): values cross as plain data only, the verdict
needs the checker's nonce-keyed report, the checker's text never reaches the program's
memory, and the code environments' harness cannot be forged — in every isolation mode this
machine has."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sandbox.attacks import (
    FORGE,
    attacks,
    available_modes,
    kill_everything,
    runs_as_other_user,
)
from verirl.envs import get_env
from verirl.envs.code.synthesis import HARNESS, score_tests
from verirl.sandbox import Limits, Sandbox

MODES = available_modes()


@pytest.fixture(scope="module", params=MODES)
def box(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    limits = Limits(cpu_s=2, wall_s=4, output_bytes=200_000)
    with Sandbox(1, mode=request.param, limits=limits) as sb:
        yield sb


def test_plain_values_cross_with_their_types(box: Sandbox) -> None:
    program = (
        "def f(x):\n"
        "    return (x, [1, 2.5, None, True], {3: 'x', (1, 2): b'\\x00\\xff'}, {1, 2},\n"
        "            frozenset({'a'}), 2 ** 200, -0.0, 1 + 2j, float('inf'))\n"
    )
    checker = (
        "r = candidate((7, [8]))\n"
        "assert type(r) is tuple and r[0] == (7, [8]) and type(r[0][1]) is list\n"
        "assert r[1] == [1, 2.5, None, True] and r[1][3] is True and type(r[1][0]) is int\n"
        "assert r[2] == {3: 'x', (1, 2): b'\\x00\\xff'} and r[3] == {1, 2}\n"
        "assert type(r[4]) is frozenset and r[5] == 2 ** 200 and str(r[6]) == '-0.0'\n"
        "assert r[7] == 1 + 2j and r[8] == float('inf')\n"
        "report('fine')\n"
    )
    run = box.run_checked(program, "f", checker)
    assert run.ok and run.checked is True and run.reports == ("fine",), run


def test_objects_that_equal_everything_do_not_cross(box: Sandbox) -> None:
    program = (
        "class Eq:\n    def __eq__(self, o):\n        return True\n"
        "class I(int):\n    def __eq__(self, o):\n        return True\n"
        "    __hash__ = int.__hash__\n"
        "def f(k):\n    return Eq() if k == 0 else I(5)\n"
    )
    checker = (
        "try:\n    candidate(0)\nexcept CandidateError as e:\n    report(str(e))\n"
        "r = candidate(1)\nreport([type(r).__name__, r == 6])\n"
    )
    run = box.run_checked(program, "f", checker)
    assert run.ok, run
    assert "cannot pass a value of type Eq" in run.reports[0]
    assert run.reports[1] == ["int", False]


def test_errors_load_errors_and_a_vanished_candidate(box: Sandbox) -> None:
    checker = (
        "for k in range(3):\n"
        "    try:\n        report(['ok', candidate(k)])\n"
        "    except CandidateLoadError as e:\n        report(['load', str(e)])\n        break\n"
        "    except CandidateGone as e:\n        report(['gone', str(e)])\n        break\n"
        "    except CandidateError as e:\n        report(['error', str(e)])\n"
    )
    run = box.run_checked("def f(k):\n    return 10 // k\n", "f", checker)
    assert run.checked and run.reports == (
        ["error", "ZeroDivisionError: integer division or modulo by zero"],
        ["ok", 10],
        ["ok", 5],
    )
    run = box.run_checked("x = 1 / 0\ndef f(k):\n    return k\n", "f", checker)
    assert run.reports == (["load", "ZeroDivisionError: division by zero"],)
    run = box.run_checked("def g(k):\n    return k\n", "f", checker)
    assert run.reports[0][0] == "load" and "'f'" in run.reports[0][1]
    run = box.run_checked("def f(k):\n    import os\n    os._exit(0)\n", "f", checker)
    assert run.reports == (["gone", "the program ended before answering"],)
    run = box.run_checked("def f(k:\n", "f", checker)
    assert run.reports[0][0] == "load" and run.reports[0][1].startswith("SyntaxError")


def test_a_checker_that_raises_is_not_checked(box: Sandbox) -> None:
    run = box.run_checked("def f():\n    return 1\n", "f", "report(1)\nassert candidate() == 2\n")
    assert run.checked is False and not run.ok and run.status == "error"
    assert run.reports == (1,)
    assert run.error_line == "AssertionError"


def test_cpu_limit_of_the_candidate_is_named(box: Sandbox) -> None:
    checker = "try:\n    candidate()\nexcept CandidateGone:\n    report('gone')\n"
    # a generous wall limit: on a loaded machine 1 CPU second can take many wall seconds
    run = box.run_checked(
        "def f():\n    while True:\n        pass\n", "f", checker, cpu_s=1, wall_s=60
    )
    assert run.status == "cpu_time" and not run.ok and run.reports == ("gone",), run
    run = box.run_checked("def f():\n    import time\n    time.sleep(60)\n", "f", checker, wall_s=1)
    assert run.status == "timeout" and not run.checked


def _memory_scan(needle_a: str, needle_b: str) -> str:
    """A program whose ``f()`` reads every readable mapping of its own process and says
    whether ``needle_a + needle_b`` occurs there (the two halves are never joined in its
    memory), and how many bytes it read."""
    return (
        "import ctypes, os\n"
        "ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)\n"  # dumpable, so /proc/self/mem opens
        f"A, B = {needle_a.encode()!r}, {needle_b.encode()!r}\n"
        "def f():\n"
        "    found, total = False, 0\n"
        "    fd = os.open('/proc/self/mem', os.O_RDONLY)\n"
        "    with open('/proc/self/maps') as fh:\n"
        "        maps = fh.read().splitlines()\n"
        "    for line in maps:\n"
        "        parts = line.split()\n"
        "        if parts[1][0] != 'r' or line.endswith(('[vvar]', '[vsyscall]')):\n"
        "            continue\n"
        "        if line.endswith('[vvar_vclock]'):\n"
        "            continue\n"
        "        lo, hi = (int(x, 16) for x in parts[0].split('-'))\n"
        "        pos = lo\n"
        "        while pos < hi:\n"
        "            try:\n"
        "                chunk = os.pread(fd, min(1 << 20, hi - pos) + 64, pos)\n"
        "            except OSError:\n"
        "                break\n"
        "            total += len(chunk)\n"
        "            i = chunk.find(A)\n"
        "            while i >= 0:\n"
        "                if chunk[i + len(A): i + len(A) + len(B)] == B:\n"
        "                    found = True\n"
        "                i = chunk.find(A, i + 1)\n"
        "            pos += 1 << 20\n"
        "    return [found, total]\n"
    )


def test_the_checkers_text_never_reaches_the_programs_memory(box: Sandbox) -> None:
    """The checker (for HumanEval: the test with its expected values) goes to the checker
    process only; the program, reading all of its own memory, finds no trace of it — not in
    this run, not in the next one of the same worker. The same scan finds what the request's
    ``data`` carries (which the program may see), so the scan can fail."""
    a, b = "verirl-checker-secret-", "7f3a91c2"
    checker = f"# {a}{b}\nSECRET = '{a}{b}'\nreport(candidate())\n"
    program = _memory_scan(a, b)
    for _ in range(2):
        run = box.run_checked(program, "f", checker, cpu_s=10, wall_s=30)
        assert run.checked, run
        found, total = run.reports[0]
        assert total > 1_000_000 and found is False
    control = box.run_checked(program, "f", checker, data=[a + b], cpu_s=10, wall_s=30)
    assert control.reports[0][0] is True


def test_no_process_outlives_a_checked_run(box: Sandbox) -> None:
    marker = f"verirl-checked-{os.getpid()}-{time.monotonic_ns()}"
    # Every path of the forked copies ends in os._exit: a fork or exec refused by the process
    # limit (earlier tests' programs still being reaped count against it) would otherwise let a
    # copy of the candidate go on to answer on its channel ("malformed answer", seen in CI).
    program = (
        "import os, sys\n"
        "try:\n    pid = os.fork()\nexcept OSError:\n    pid = -1\n"
        "if pid == 0:\n"
        "    try:\n"
        "        os.setsid()\n"
        "        if os.fork() == 0:\n"
        "            os.execv(sys.executable, [sys.executable, '-c', 'import time; "
        f"time.sleep(30)', {marker!r}])\n"
        "    finally:\n"
        "        os._exit(0)\n"
        "def f():\n    return 1\n"
    )
    run = box.run_checked(program, "f", "assert candidate() == 1\n")
    assert run.ok, run
    time.sleep(0.5)
    alive = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if marker.encode() in Path(f"/proc/{name}/cmdline").read_bytes():
                    alive.append(name)
            except OSError:
                pass
    assert alive == []


# ---- the code environments' harness ---------------------------------------------------------
@pytest.fixture(scope="module")
def inversions() -> tuple[object, object, list]:
    env = get_env("code_inversions")
    problem = env.generate(4, 2)
    return env, problem, env.hidden_tests(problem)


def _harness(box: Sandbox, code: str, tests: list) -> object:
    run = box.run_checked(
        code, "solve", HARNESS, data={"tests": [list(a) for a, _ in tests]}, output_bytes=4_000_000
    )
    return score_tests("solve", tests, run)


def test_code_harness_passes_a_correct_solution_in_every_mode(
    box: Sandbox, inversions: tuple
) -> None:
    env, problem, tests = inversions
    verdict = _harness(box, env.solve(problem), tests)
    assert verdict.correct and verdict.reward == 1.0, verdict
    printing = env.solve(problem) + (
        "\n_real = solve\ndef solve(*a):\n    print('noise' * 10000)\n    return _real(*a)\n"
    )
    assert _harness(box, printing, tests).correct  # its output is not read, nor bounded


def test_forged_harness_lines_with_the_right_values_do_not_pass(
    box: Sandbox, inversions: tuple
) -> None:
    """A program that *knows* every expected value and writes the harness's result lines on
    every descriptor (and in the shape of the checker's channel) and exits: the verdict does
    not read any of it."""
    _, _, tests = inversions
    lines = "".join(json.dumps({"i": i, "got": e}) + "\n" for i, (_, e) in enumerate(tests))
    program = (
        FORGE.replace('lines = "".join', f'lines = {lines!r} + "".join')
        + "_forge()\nimport os\nos._exit(0)\n"
    )
    verdict = _harness(box, program, tests)
    assert not verdict.correct and verdict.reward == 0.0, verdict


@pytest.mark.parametrize("name", sorted(attacks("solve", "xs", "0")))
def test_code_harness_attack_does_not_pass(box: Sandbox, inversions: tuple, name: str) -> None:
    _, _, tests = inversions
    verdict = _harness(box, attacks("solve", "xs", "0")[name], tests)
    # returning 0 is right for a sorted input: at most those tests pass, never all
    right_for_zero = sum(1 for _, e in tests if e == 0)
    assert not verdict.correct and verdict.reward <= right_for_zero / len(tests), (name, verdict)


def test_code_harness_kill_everything_does_not_pass(box: Sandbox, inversions: tuple) -> None:
    if not runs_as_other_user(box.mode):
        pytest.skip("rlimits without root runs programs as the caller's user (docs/security.md)")
    _, _, tests = inversions
    for name, code in kill_everything("solve", "xs").items():
        verdict = _harness(box, code, tests)
        assert not verdict.correct and verdict.reward == 0.0, (name, verdict)


def test_the_runners_stream_cannot_be_opened_through_proc(box: Sandbox) -> None:
    """The caller and the runner talk over a socket: even a process allowed to see the
    holder's descriptors (here the test itself, as the caller's user) cannot open it through
    /proc to write a forged reply, as it could a pipe."""
    box.run("pass")
    worker = box._workers[0]
    assert worker is not None
    opened = []
    for fd in (0, 1):
        path = f"/proc/{worker.proc.pid}/fd/{fd}"
        assert os.readlink(path).startswith("socket:")
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            opened.append(fd)
        except OSError:
            pass
    assert opened == []
