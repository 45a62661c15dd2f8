"""Functions the Ray tests send to verifier actors (importable in the actors' processes)."""

from __future__ import annotations

import os
import time


def sleep_then_echo(item: tuple[float, str]) -> tuple[str, int]:
    """Sleep ``item[0]`` seconds, then return ``item[1]`` and the worker's process id."""
    time.sleep(item[0])
    return item[1], os.getpid()


def fail(item: str) -> str:
    raise ValueError(f"bad item {item}")
