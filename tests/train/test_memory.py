"""Memory measured during a run: the step window's peak catches a spike the sampler never
sees, children count, a process tree is measured from outside, glibc returns freed tensors
to the OS once told to, and padding is counted as the learner runs it."""

from __future__ import annotations

import mmap
import subprocess
import sys
import textwrap
import time

import psutil
import pytest
import torch

from verirl.train.memory import HeapRelease, MemoryMonitor, tree_rss_bytes, wait_and_measure
from verirl.train.packing import padded_work
from verirl.types import Batch

MB = 1e6


def touched_then_unmapped(size: int) -> None:
    """Map ``size`` bytes, touch every page, unmap them: the process's RSS rises by ``size``
    and falls back at once, whatever the C allocator's thresholds (an earlier test may have
    told glibc to keep freed blocks, so a freed tensor would stay resident)."""
    buf = mmap.mmap(-1, size)
    try:
        view = memoryview(buf)
        page = mmap.PAGESIZE
        for offset in range(0, size, page):
            view[offset] = 1
        view.release()
    finally:
        buf.close()


def test_a_spike_between_samples_is_in_the_window_peak() -> None:
    monitor = MemoryMonitor(interval_s=60.0)  # the sampler thread never wakes in this test
    try:
        monitor.step_metrics()
        base = monitor.sample()
        touched_then_unmapped(300_000_000)  # a spike the allocator cannot keep
        out = monitor.step_metrics()
        assert out["memory/peak_rss_mb"] >= base / MB + 280
        assert out["memory/rss_mb"] < out["memory/peak_rss_mb"]
        # the next window starts afresh
        again = monitor.step_metrics()
        assert again["memory/peak_rss_mb"] < base / MB + 150
    finally:
        monitor.close()


def test_children_count_in_the_tree() -> None:
    code = "import time; x = bytearray(200_000_000); time.sleep(30)"
    child = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            tree, children = tree_rss_bytes()
            if children >= 200_000_000:
                break
            time.sleep(0.1)
        assert children >= 200_000_000
        assert tree >= psutil.Process().memory_info().rss + children - 5_000_000
    finally:
        child.kill()
        child.wait()


def test_wait_and_measure_sees_a_childs_peak_from_outside() -> None:
    code = textwrap.dedent(
        """
        import time
        x = bytearray(250_000_000)
        time.sleep(1.0)
        del x
        time.sleep(0.5)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code])
    status, peak = wait_and_measure(proc)
    assert status == 0
    assert 250_000_000 <= peak < 400_000_000


@pytest.mark.parametrize("release", [False, True])
def test_freed_tensors_go_back_to_the_os_once_glibc_is_told(release: bool) -> None:
    """Many 4 MB tensors freed: glibc keeps them in its heap by default (RSS stays up); with
    return_freed_memory_to_the_os each is mapped on its own and unmapped when freed."""
    code = textwrap.dedent(
        f"""
        import psutil, torch
        from verirl.train.memory import return_freed_memory_to_the_os
        if {release}:
            assert return_freed_memory_to_the_os()
        rss = lambda: psutil.Process().memory_info().rss
        warm = torch.ones(30_000_000 // 4); del warm  # raises glibc's dynamic threshold
        base = rss()
        xs = [torch.ones(1_000_000) for _ in range(100)]  # 100 x 4 MB
        last = xs[-1]  # still in use, at the top of the heap: nothing below it can be trimmed
        del xs
        print((rss() - base) / 1e6)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    kept_mb = float(out.stdout.strip().splitlines()[-1])
    if release:
        assert kept_mb < 50
    else:
        assert kept_mb > 150  # what the default leaves resident (the problem being solved)


@pytest.mark.parametrize("release", [False, True])
def test_the_trainers_heap_returns_freed_tensors_while_learning(release: bool) -> None:
    """HeapRelease: sampling keeps glibc's fast heap; entering ``learning()`` trims what it left
    free, and while learning, tensors beyond what the heap already held go back to the OS when
    freed (without it, the heap keeps all of them)."""
    code = textwrap.dedent(
        f"""
        import psutil, torch
        from verirl.train.memory import HeapRelease
        heap = HeapRelease({release})
        warm = torch.ones(30_000_000 // 4); del warm  # raises glibc's dynamic threshold
        rss = lambda: psutil.Process().memory_info().rss
        def churn(n):
            base = rss()
            xs = [torch.ones(1_000_000) for _ in range(n)]  # n x 4 MB
            last = xs[-1]  # still in use, at the top of the heap
            del xs
            return (rss() - base) / 1e6, last
        sampling, keep = churn(100)
        before = rss()
        with heap.learning():
            trimmed = (before - rss()) / 1e6
            _, keep2 = churn(200)
            grown = (rss() - before) / 1e6
        print(sampling, trimmed, grown)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    sampling, trimmed, grown = map(float, out.stdout.split())
    assert sampling > 150  # sampling keeps the heap (fast allocations)
    if release:
        assert trimmed > 150  # learning() gives it back first
        assert grown < 50  # the 100 tensors past the old heap went back to the OS
    else:
        assert trimmed < 50
        assert grown > 300  # the heap grew by them and kept them


def test_heap_release_off_changes_nothing() -> None:
    heap = HeapRelease(False)
    assert heap.libc is None
    with heap.learning():
        pass


def test_padded_work_counts_shared_prompts_once() -> None:
    # two rows share a prompt of 3 (padded to 4), one row has a prompt of 4; responses 2, 1, 2
    ids = torch.tensor([[0, 5, 6, 7, 1, 2], [0, 5, 6, 7, 3, 0], [8, 9, 9, 9, 4, 4]])
    attn = torch.tensor([[0, 1, 1, 1, 1, 1], [0, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1]])
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    zeros = torch.zeros(3, 2)
    batch = Batch(ids, attn, mask, zeros, zeros, torch.zeros(3), torch.zeros(3, dtype=torch.bool))
    # shared: 2 distinct prompts x width 4 + 3 rows x 2 response columns = 14 positions; real:
    # prompts 3 + 4, responses 2 + 1 + 2 = 12
    assert padded_work(batch, shared_prefix=True) == (14, 12)
    # unshared: 3 rows x 6 columns = 18; real: every row's prompt and response = 3+3+4+5 = 15
    assert padded_work(batch, shared_prefix=False) == (18, 15)
