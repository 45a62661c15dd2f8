"""What the command groups share: the console, splitting ``[CONFIG] key=value`` arguments,
keeping a failed run's traceback."""

from __future__ import annotations

import traceback
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

console = Console(stderr=True)


def keep_traceback(exc: BaseException, run_dir: Path) -> None:
    """Write the traceback of ``exc`` to ``run_dir/error.txt`` and remember where."""
    try:
        path = run_dir / "error.txt"
        path.write_text("".join(traceback.format_exception(exc)), encoding="utf-8")
        exc.verirl_traceback_file = str(path)  # type: ignore[attr-defined]
    except OSError:
        pass


def split_args(args: Sequence[str]) -> tuple[str | None, list[str]]:
    """``[CONFIG.yaml] key.sub=value ...`` → the config path (None: the default job) and the
    overrides."""
    path = None
    overrides = list(args)
    if overrides and "=" not in overrides[0]:
        path = overrides.pop(0)
    return path, overrides
