"""run.allocator: which malloc a process runs on, and the CLI's relaunch under TCMalloc."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from verirl import allocator
from verirl.allocator import after_relaunch, allocator_in_use, relaunch_under, wanted
from verirl.errors import UserInputError

GLIBC_MAPS = "7f00-7f01 r-xp 0 08:01 1 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
TCMALLOC_MAPS = GLIBC_MAPS + "7f02-7f03 r-xp 0 08:01 2 /usr/lib/libtcmalloc_minimal.so.4.5.10\n"


def test_the_allocator_is_read_from_the_mapped_libraries() -> None:
    assert allocator_in_use(GLIBC_MAPS) == "glibc"
    assert allocator_in_use(TCMALLOC_MAPS) == "tcmalloc"
    assert allocator_in_use(GLIBC_MAPS + "x /usr/lib/libjemalloc.so.2\n") == "jemalloc"
    assert allocator_in_use("") == "other"


def test_auto_wants_tcmalloc_on_a_cpu_only() -> None:
    assert wanted("auto", "cpu") and wanted("tcmalloc", "cuda") and wanted("tcmalloc", "cpu")
    assert not wanted("auto", "cuda") and not wanted("system", "cpu")


class Exec(Exception):
    pass


@pytest.fixture
def execs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[str], dict[str, str]]]:
    """os.execve recorded instead of run; this process reads as running on glibc."""
    seen: list[tuple[str, list[str], dict[str, str]]] = []

    def execve(path: str, argv: list[str], env: dict[str, str]) -> Any:
        seen.append((path, argv, env))
        raise Exec

    monkeypatch.setattr(allocator.os, "execve", execve)
    monkeypatch.setattr(allocator, "allocator_in_use", lambda maps=None: "glibc")
    monkeypatch.setattr(allocator.sys, "orig_argv", ["python", "/bin/verirl", "train", "x=1"])
    return seen


def test_a_cpu_run_starts_again_under_tcmalloc(
    execs: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(allocator, "find_tcmalloc", lambda: "libtcmalloc_minimal.so.4")
    monkeypatch.setenv("LD_PRELOAD", "libother.so")
    with pytest.raises(Exec):
        relaunch_under("auto", "cpu")
    (path, argv, env) = execs[0]
    assert path == sys.executable and argv == [sys.executable, "/bin/verirl", "train", "x=1"]
    assert env["LD_PRELOAD"] == "libtcmalloc_minimal.so.4:libother.so"
    # the relaunched process hands its subprocesses the LD_PRELOAD it was given
    monkeypatch.setattr(os, "environ", dict(env))
    assert after_relaunch() is True
    assert os.environ["LD_PRELOAD"] == "libother.so"
    assert "VERIRL_ALLOCATOR_RELAUNCHED" not in os.environ
    assert after_relaunch() is False  # its own children are not relaunches


def test_no_relaunch_where_it_is_not_wanted_or_cannot_help(
    execs: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "glibc" in relaunch_under("system", "cpu")
    monkeypatch.setattr(allocator, "allocator_in_use", lambda maps=None: "jemalloc")
    assert "jemalloc" in relaunch_under("auto", "cpu")  # preloaded on purpose: left alone
    monkeypatch.setattr(allocator, "allocator_in_use", lambda maps=None: "glibc")
    assert "glibc" in relaunch_under("auto", "cuda")
    monkeypatch.setattr(allocator, "find_tcmalloc", lambda: None)
    line = relaunch_under("auto", "cpu")
    assert "not installed" in line and "libtcmalloc-minimal4" in line
    monkeypatch.setattr(allocator, "find_tcmalloc", lambda: "libtcmalloc_minimal.so.4")
    # a relaunch the loader refused is not tried again
    assert "did not preload" in relaunch_under("auto", "cpu", relaunched=True)
    assert execs == []


def test_tcmalloc_asked_for_and_missing_is_an_error(
    execs: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(allocator, "find_tcmalloc", lambda: None)
    with pytest.raises(UserInputError, match=r"run.allocator=tcmalloc.*not installed"):
        relaunch_under("tcmalloc", "cpu")


@pytest.mark.skipif(allocator.find_tcmalloc() is None, reason="TCMalloc is not installed")
def test_the_relaunch_really_loads_tcmalloc_and_restores_the_environment() -> None:
    """The real execve: a process started on glibc ends up on TCMalloc, once, with its
    subprocesses' LD_PRELOAD as it was."""
    code = textwrap.dedent(
        """
        import os
        from verirl.allocator import after_relaunch, allocator_in_use, relaunch_under
        print("start", allocator_in_use(), flush=True)
        line = relaunch_under("auto", "cpu", after_relaunch())
        print(allocator_in_use(), os.environ.get("LD_PRELOAD", "-"), line)
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout.splitlines()
    assert out[0] == "start glibc"
    assert out[1] == "start tcmalloc"  # the relaunched process
    assert out[2].startswith("tcmalloc - memory allocator: tcmalloc")
    assert len(out) == 3


def test_heap_release_leaves_glibc_alone_under_another_allocator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from verirl.train import memory

    monkeypatch.setattr(memory, "allocator_in_use", lambda: "tcmalloc")
    assert memory.HeapRelease(True).libc is None
    monkeypatch.setattr(memory, "allocator_in_use", lambda: "glibc")
    assert memory.HeapRelease(True).libc is not None  # as every CPU Trainer in this session


def test_doctor_names_the_package_when_tcmalloc_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from verirl import doctor

    monkeypatch.setattr(allocator, "find_tcmalloc", lambda: None)
    finding = doctor.check_allocator()
    assert finding.status == "missing" and "libtcmalloc-minimal4" in finding.fix
    assert not finding.blocks_default_job
    monkeypatch.setattr(allocator, "find_tcmalloc", lambda: "libtcmalloc_minimal.so.4")
    assert doctor.check_allocator().status == "ok"


HELD = textwrap.dedent(
    """
    import torch
    from verirl.allocator import allocator_in_use, heap_in_use_bytes

    before = heap_in_use_bytes()
    kept = torch.ones(25_000_000)  # 100 MB held
    held = heap_in_use_bytes()
    del kept
    after = heap_in_use_bytes()
    print(allocator_in_use(), (held - before) / 1e6, (after - before) / 1e6)
    """
)


@pytest.mark.parametrize("preload", [False, True], ids=["glibc", "tcmalloc"])
def test_the_heap_in_use_counts_what_is_held_and_not_what_is_freed(preload: bool) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    if preload:
        lib = allocator.find_tcmalloc()
        if lib is None:
            pytest.skip(f"TCMalloc is not installed ({allocator.INSTALL_HINT})")
        env["LD_PRELOAD"] = lib
    out = subprocess.run(
        [sys.executable, "-c", HELD], capture_output=True, text=True, check=True, env=env
    ).stdout.split()
    assert out[0] == ("tcmalloc" if preload else "glibc")
    held, after = float(out[1]), float(out[2])
    assert 99 <= held <= 102 and abs(after) < 2
