"""The C memory allocator a CPU run trains under (``run.allocator``).

Every CPU tensor is a ``malloc``. A learner step allocates and frees gigabytes of activations
and temporaries, and glibc's ``malloc`` serves that badly either way it is set: at its defaults
its heap keeps the freed blocks and fragments (the default job: +1.7 GB of RSS per update),
and told to map each large block on its own (``run.release_memory``) it hands every block back
and page-faults a fresh one in at the next allocation (the default job: an update 22 → 31 s).
TCMalloc (gperftools) keeps per-size free lists that it reuses and releases gradually: the
default job's 3 steps measured 20–21 s an update at a 3.0 GB peak, against 21–23 s at up to
3.8 GB (glibc, heap kept) and 30–33 s at 2.9 GB (glibc, blocks returned); sampling was faster
too (``docs/memory.md``). PyTorch's CPU launcher preloads it (``torch.backends.xeon.run_cpu
--enable-tcmalloc``), and vLLM's CPU backend preloads it into its workers.

An allocator has to be loaded before the process's first ``malloc``, so ``verirl train``
(the console command, never a library call) starts itself again under ``LD_PRELOAD`` when the
config asks for TCMalloc and it is installed but not loaded (:func:`relaunch_under`). The
relaunched process puts ``LD_PRELOAD`` back as it was, so subprocesses it starts — proof
checkers, sandboxed code — run as they would have; forked workers share the allocator.
"""

from __future__ import annotations

import ctypes.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from verirl.errors import UserInputError

Allocator = Literal["glibc", "tcmalloc", "jemalloc", "other"]

# the relaunched process's marker, and the LD_PRELOAD it had before (restored at once)
_RELAUNCHED = "VERIRL_ALLOCATOR_RELAUNCHED"
_PRELOAD_BEFORE = "VERIRL_LD_PRELOAD_BEFORE"
INSTALL_HINT = "apt-get install libtcmalloc-minimal4 (Debian/Ubuntu), dnf install gperftools-libs"


def allocator_in_use(maps: str | None = None) -> Allocator:
    """Which ``malloc`` this process runs on, read from the libraries it has mapped
    (``/proc/self/maps``; ``maps``: that text, for tests). ``other``: not Linux/glibc."""
    if maps is None:
        try:
            maps = Path("/proc/self/maps").read_text()
        except OSError:
            return "other"
    if "libtcmalloc" in maps:
        return "tcmalloc"
    if "libjemalloc" in maps:
        return "jemalloc"
    return "glibc" if "libc.so.6" in maps or "libc-" in maps else "other"


def find_tcmalloc() -> str | None:
    """The TCMalloc shared library the dynamic loader can preload, or None."""
    for name in ("tcmalloc_minimal", "tcmalloc"):
        found = ctypes.util.find_library(name)
        if found:
            return found
    return None


def after_relaunch() -> bool:
    """In a process :func:`relaunch_under` started: restore ``LD_PRELOAD`` for its
    subprocesses and drop the marker; returns whether this process is such a relaunch."""
    if os.environ.pop(_RELAUNCHED, None) is None:
        return False
    before = os.environ.pop(_PRELOAD_BEFORE, "")
    if before:
        os.environ["LD_PRELOAD"] = before
    else:
        os.environ.pop("LD_PRELOAD", None)
    return True


def wanted(choice: str, device_type: str) -> bool:
    """Whether ``run.allocator`` asks for TCMalloc on this device: ``tcmalloc`` always,
    ``auto`` on a CPU run (a GPU run's tensors live in CUDA's own caching allocator)."""
    return choice == "tcmalloc" or (choice == "auto" and device_type == "cpu")


def relaunch_under(choice: str, device_type: str, relaunched: bool = False) -> str:
    """Start this command again under TCMalloc when ``run.allocator`` wants it here and it is
    installed but not loaded; otherwise return one line saying which allocator the run uses.
    ``relaunched``: :func:`after_relaunch`'s answer (a relaunch that still lacks TCMalloc —
    the loader refused it — is not relaunched again).

    ``run.allocator=tcmalloc`` where it cannot be had is a :class:`UserInputError`."""
    current = allocator_in_use()
    if not wanted(choice, device_type) or (choice == "auto" and current == "jemalloc"):
        # 'auto' leaves an allocator the user preloaded on purpose alone
        return f"memory allocator: {current} (run.allocator={choice})"
    if current == "tcmalloc":
        return "memory allocator: tcmalloc"
    lib = find_tcmalloc()
    why = None
    if lib is None:
        why = f"not installed ({INSTALL_HINT})"
    elif relaunched:
        why = "the dynamic loader did not preload it"
    elif sys.platform != "linux" or len(sys.orig_argv) < 2:
        why = "this process cannot be started again"
    if lib is None or why is not None:
        if choice == "tcmalloc":
            raise UserInputError(
                f"run.allocator=tcmalloc but TCMalloc: {why}; or set run.allocator=system"
            )
        return (
            f"memory allocator: glibc; TCMalloc {why} — updates run slower "
            "(docs/memory.md); run.allocator=system silences this"
        )
    env = dict(os.environ)
    env[_RELAUNCHED] = "1"
    env[_PRELOAD_BEFORE] = env.get("LD_PRELOAD", "")
    env["LD_PRELOAD"] = f"{lib}:{env[_PRELOAD_BEFORE]}" if env[_PRELOAD_BEFORE] else lib
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)
    raise AssertionError("unreachable: execve returned")  # pragma: no cover


# ---- what the program holds -----------------------------------------------------------------
class _MallInfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (glibc ≥ 2.33): every field a ``size_t``."""

    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd",
            "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost",
        )
    ]  # fmt: skip


def heap_in_use_bytes() -> int | None:
    """Bytes this process holds from ``malloc`` now — allocated and not yet freed — leaving
    out what the allocator keeps for reuse: TCMalloc's ``generic.current_allocated_bytes``,
    glibc's ``mallinfo2`` (in-use heap blocks plus mapped blocks). Unlike the RSS, this does
    not climb while the allocator fills its pools, so its growth from one step to the next is
    memory something still holds (a leak). None under another allocator."""
    reader = _heap_reader()
    return reader() if reader is not None else None


HeapReader = Callable[[], "int | None"]
_READER: list[HeapReader | None] = []  # [the reader, or None where there is none], on first use


def _heap_reader() -> HeapReader | None:
    if not _READER:
        _READER.append(_make_heap_reader(allocator_in_use()))
    return _READER[0]


def _make_heap_reader(allocator: Allocator) -> HeapReader | None:
    process = ctypes.CDLL(None)  # the symbols loaded into this process, preloads included
    if allocator == "tcmalloc":
        get = getattr(process, "MallocExtension_GetNumericProperty", None)
        if get is None:
            return None
        get.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_size_t)]
        get.restype = ctypes.c_int

        def tcmalloc() -> int | None:
            value = ctypes.c_size_t()
            ok = get(b"generic.current_allocated_bytes", ctypes.byref(value))
            return int(value.value) if ok else None

        return tcmalloc
    if allocator == "glibc":
        info = getattr(process, "mallinfo2", None)
        if info is None:
            return None
        info.restype = _MallInfo2

        def glibc() -> int | None:
            m = info()
            return int(m.uordblks + m.hblkhd)

        return glibc
    return None
