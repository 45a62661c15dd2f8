"""What the command groups share: the console, the run config of ``[CONFIG] key=value``
arguments (no CONFIG: the default job), the long phases' lines on the console, keeping a
failed run's traceback."""

from __future__ import annotations

import argparse
import logging
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:
    from verirl.config import TrainConfig

console = Console(stderr=True)

DEFAULT_JOB = "default"  # a command given no config runs examples/default.yaml (./run.sh train)


def run_config(args: Sequence[str], checkpoint: str | None = None) -> TrainConfig:
    """The checked config of ``[CONFIG] key=value ...``: CONFIG (a file or a bundled example's
    name), else the config.yaml of ``checkpoint``'s run, else :data:`DEFAULT_JOB`."""
    from verirl.assembly import load_config

    path, overrides = split_args(args)
    if path is None and checkpoint and (Path(checkpoint).parent / "config.yaml").is_file():
        path = str(Path(checkpoint).parent / "config.yaml")
    return load_config(path or DEFAULT_JOB, overrides)


def under_allocator(cfg: TrainConfig, relaunch: bool) -> str:
    """Run under ``run.allocator``'s allocator, as training does (:mod:`verirl.allocator`):
    ``relaunch`` (the process's own command line) starts it again under TCMalloc where wanted
    and installed. Returns the line saying which allocator runs."""
    from verirl.allocator import after_relaunch, allocator_in_use, relaunch_under
    from verirl.device import resolve_device

    relaunched = after_relaunch()
    if not relaunch:
        return f"memory allocator: {allocator_in_use()}"
    return relaunch_under(cfg.run.allocator, resolve_device(cfg.model.device).type, relaunched)


@contextmanager
def phase_lines() -> Iterator[None]:
    """While the body runs, the long phases' lines (logger ``verirl.progress``: sampling,
    held-out evaluation, proof checking) go to stderr, as the console's other lines."""
    handler = logging.StreamHandler()
    logging.getLogger("verirl.progress").addHandler(handler)
    try:
        yield
    finally:
        logging.getLogger("verirl.progress").removeHandler(handler)


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


class IntsThenWords(argparse.Action):
    """``--pass-k 1 8 run.yaml key=value``: the integers are the option's values, the words
    after them the command's config and overrides (argparse alone gives a ``nargs="+"``
    option every word up to the next option, and then fails on ``run.yaml``). The words are
    kept in ``words_after_options``; :func:`verirl.cli.parse` adds them to ``args``."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[object] | None,
        option_string: str | None = None,
    ) -> None:
        items = [str(v) for v in (values if isinstance(values, list) else [values])]
        ints = []
        for i, item in enumerate(items):
            try:
                ints.append(int(item))
            except ValueError:
                if not ints:
                    parser.error(f"argument {option_string}: invalid int value: {item!r}")
                words = getattr(namespace, "words_after_options", None) or []
                namespace.words_after_options = [*words, *items[i:]]
                break
        setattr(namespace, self.dest, ints)
