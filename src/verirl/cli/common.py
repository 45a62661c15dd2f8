"""What the command groups share: the console, splitting ``[CONFIG] key=value`` arguments,
keeping a failed run's traceback."""

from __future__ import annotations

import argparse
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
