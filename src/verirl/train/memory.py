"""Memory measured while a run goes: the peak of every step, as the step's metrics.

- ``memory/peak_rss_mb``: the peak resident memory of the whole process tree during the step
  (this process and its children: verifier workers, proof checkers, a vLLM engine process),
  in MB (10⁶ bytes). A sampler thread sums the tree's RSS every ``interval_s``; the main
  process's own high-water mark (Linux ``VmHWM``, reset at every step through
  ``/proc/self/clear_refs``) catches a spike between two samples, so the peak is
  ``max(sampled tree peak, main process peak + its children's RSS)``.
- ``memory/rss_mb``: the tree's RSS at the end of the step.
- ``memory/heap_in_use_mb``: what this process holds from ``malloc`` at the end of the step,
  without the allocator's reuse pools (:func:`verirl.allocator.heap_in_use_bytes`: TCMalloc
  or glibc); the run-health detector ``memory_growth`` reads it to tell a leak from an
  allocator settling. ``memory/cuda_allocated_mb``: on a CUDA device, torch's allocated
  memory at the end of the step (its counterpart there).
- ``memory/cuda_max_allocated_mb``, ``memory/cuda_max_reserved_mb``: on a CUDA device, torch's
  peak allocated and reserved memory during the step (reset at every step).

RSS counts a page shared by two processes (e.g. a forked worker's copy-on-write pages) in
both: the tree figure is what ``ps`` and a machine's memory limit see, an upper bound of the
memory the tree holds.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import torch

from verirl.allocator import allocator_in_use, heap_in_use_bytes

MB = 1e6
_CLEAR_REFS = Path("/proc/self/clear_refs")
_STATUS = Path("/proc/self/status")


def tree_rss_bytes(root: psutil.Process | None = None) -> tuple[int, int]:
    """``(tree, children)``: resident bytes of ``root`` (this process) plus all its
    descendants, and of the descendants alone. Processes that end while being read count 0."""
    proc = root or psutil.Process()
    own = proc.memory_info().rss
    children = 0
    for child in proc.children(recursive=True):
        with contextlib.suppress(psutil.Error):
            children += child.memory_info().rss
    return own + children, children


def _main_peak_bytes() -> int | None:
    """This process's RSS high-water mark since the last reset (Linux), else None."""
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _reset_main_peak() -> None:
    with contextlib.suppress(OSError):
        _CLEAR_REFS.write_text("5")  # "5": reset the peak RSS (VmHWM) to the current RSS


class MemoryMonitor:
    """Samples the process tree's RSS in a daemon thread; :meth:`step_metrics` returns the
    peak since the last call (and starts the next window). ``device``: the training device
    (CUDA peaks are read from torch's allocator there)."""

    def __init__(self, device: torch.device | str = "cpu", interval_s: float = 0.02) -> None:
        self.device = torch.device(device)
        self.interval_s = interval_s
        self._proc = psutil.Process()
        self._lock = threading.Lock()
        self._peak = 0
        self._children = 0
        self.run_peak = 0  # bytes: the tree's peak since the monitor started
        self._stop = threading.Event()
        self.reset()
        self._thread = threading.Thread(target=self._run, name="verirl-memory", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def sample(self) -> int:
        """Read the tree once (also called by the sampler thread); returns its RSS."""
        try:
            tree, children = tree_rss_bytes(self._proc)
        except psutil.Error:
            return 0
        with self._lock:
            self._peak = max(self._peak, tree)
            self.run_peak = max(self.run_peak, tree)
            self._children = children
        return tree

    def reset(self) -> None:
        """Start a new window: peaks forgotten (torch's CUDA peak counters too)."""
        _reset_main_peak()
        with self._lock:
            self._peak = 0
        self.sample()
        if self.device.type == "cuda" and torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats(self.device)

    def step_metrics(self) -> dict[str, float]:
        """The window's peaks as ``memory/*`` metrics (MB), then :meth:`reset`."""
        now = self.sample()
        with self._lock:
            peak, children = self._peak, self._children
        main_peak = _main_peak_bytes()
        if main_peak is not None:
            peak = max(peak, main_peak + children)
        self.run_peak = max(self.run_peak, peak)
        out = {"memory/peak_rss_mb": peak / MB, "memory/rss_mb": now / MB}
        held = heap_in_use_bytes()
        if held is not None:
            out["memory/heap_in_use_mb"] = held / MB
        if self.device.type == "cuda" and torch.cuda.is_available():
            out["memory/cuda_allocated_mb"] = torch.cuda.memory_allocated(self.device) / MB
            out["memory/cuda_max_allocated_mb"] = torch.cuda.max_memory_allocated(self.device) / MB
            out["memory/cuda_max_reserved_mb"] = torch.cuda.max_memory_reserved(self.device) / MB
        self.reset()
        return out

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=1.0)


# glibc's malloc parameters (mallopt(3)): M_TRIM_THRESHOLD -1, M_MMAP_THRESHOLD -3.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
RETURN_TO_OS_BYTES = 1 << 20
# glibc's own ceiling for its dynamic mmap threshold on 64-bit (mallopt refuses more).
FAST_MMAP_BYTES = 32 << 20


def _libc() -> Any:
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        libc.mallopt, libc.malloc_trim  # noqa: B018 - glibc only
    except (OSError, AttributeError):
        return None
    return libc


def return_freed_memory_to_the_os(threshold: int = RETURN_TO_OS_BYTES) -> bool:
    """Make glibc hand memory back to the OS when torch frees a CPU tensor of ``threshold``
    bytes or more (Linux/glibc only; returns whether it applied).

    By default glibc serves allocations under a *dynamic* threshold (it grows to 32 MB after
    the first large free) from its heap, where freed blocks stay resident and fragment: a
    learner step's activations (a few MB each) leave the process ~1.7 GB larger after every
    backward pass on the default job (measured: peak RSS of one update 5.17 GB → 3.48 GB with
    this set). Fixing ``M_MMAP_THRESHOLD`` at 1 MB maps every tensor of 1 MB or more on its
    own and unmaps it when freed, and ``M_TRIM_THRESHOLD`` trims the heap top at the same
    size. Applies to the whole process; see :class:`HeapRelease` for how the Trainer uses it."""
    libc = _libc()
    return libc is not None and _set_thresholds(libc, threshold)


def _set_thresholds(libc: Any, nbytes: int) -> bool:
    """Map allocations of ``nbytes`` or more on their own and trim the heap top at that size."""
    ok = libc.mallopt(_M_MMAP_THRESHOLD, nbytes) == 1
    return bool(ok and libc.mallopt(_M_TRIM_THRESHOLD, nbytes) == 1)


class HeapRelease:
    """``run.release_memory`` on a CPU run: glibc returns freed tensors to the OS during the
    learner's update, and keeps its fast heap while sampling.

    Mapping every tensor of 1 MB or more on its own (:func:`return_freed_memory_to_the_os`)
    costs a fresh mapping, and its page faults, per allocation. The learner's update is where
    that buys memory (its activations are the step's peak); generation allocates a little
    more KV cache at every token, and mapped on its own each costs the rollout about half
    again its time (the default job, measured: 13–16 s a step at glibc's defaults, 17–24 s
    mapped). So the heap is trimmed and the 1 MB threshold set when an update begins
    (:meth:`learning`), and the threshold goes back to glibc's 32 MB ceiling when it ends.
    Under TCMalloc (``run.allocator``) it does nothing: TCMalloc reuses freed memory without
    this trade-off."""

    def __init__(self, enabled: bool) -> None:
        # under another allocator (TCMalloc: run.allocator) glibc's malloc holds no tensors
        self.libc = _libc() if enabled and allocator_in_use() == "glibc" else None
        if self.libc is not None:
            _set_thresholds(self.libc, FAST_MMAP_BYTES)

    @contextlib.contextmanager
    def learning(self) -> Iterator[None]:
        if self.libc is None:
            yield
            return
        self.libc.malloc_trim(0)  # what sampling left free in the heap goes back first
        _set_thresholds(self.libc, RETURN_TO_OS_BYTES)
        try:
            yield
        finally:
            _set_thresholds(self.libc, FAST_MMAP_BYTES)


def wait_and_measure(proc: Any, interval_s: float = 0.02) -> tuple[int, int]:
    """Wait for ``proc`` (a :class:`subprocess.Popen`) and sample its process tree meanwhile;
    ``(exit code, peak tree RSS in bytes)`` — how benchmarks and the memory plan's test
    measure a run from outside it."""
    import time

    peak = 0
    try:
        root = psutil.Process(proc.pid)
    except psutil.Error:
        return proc.wait(), 0
    while proc.poll() is None:
        with contextlib.suppress(psutil.Error):
            peak = max(peak, tree_rss_bytes(root)[0])
        time.sleep(interval_s)
    return proc.wait(), peak
