"""The verirl command line: train, eval, preflight, memory, report, envs, config, serve, doctor.

Bad input (a config value, a path, a name) prints one line naming what is wrong and exits
with status 2, no traceback. A training run stopped by ``run.health.stop_on`` exits with
status 3. Anything else is an internal error: its traceback is printed (and
written to ``<run_dir>/error.txt`` for a training run) and the exit status is 1.

One module per command group (``train``, ``eval``, ``preflight``, ``memory``, ``report``, ``envs``,
``config``, ``doctor``, ``serve``), each adding its parser (``register``) and a thin handler
over the library; :func:`main` parses, dispatches and turns errors into exit statuses.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections import Counter
from collections.abc import Sequence

from verirl.cli import config, doctor, envs, eval, memory, preflight, report, serve, train
from verirl.cli.common import console
from verirl.config import ConfigError
from verirl.errors import UserInputError


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line parsed. A command's config and overrides may come before, between and
    after its options (``verirl eval run.yaml --checkpoint DIR eval.problems=4``): argparse
    alone gives a list positional only its first run of words."""
    parser = argparse.ArgumentParser(prog="verirl", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    for group in (train, eval, preflight, memory, report, envs, config, doctor, serve):
        group.register(sub)

    argv = list(sys.argv[1:] if argv is None else argv)
    ns, extra = parser.parse_known_args(argv)
    extra = [*(getattr(ns, "words_after_options", None) or []), *extra]
    words = isinstance(getattr(ns, "args", None), list)
    if extra and (not words or any(e.startswith("-") for e in extra)):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if extra:  # the config and overrides in the order they were typed (a later one wins)
        left = Counter([*ns.args, *extra])
        ordered = []
        for word in argv:
            if left[word] > 0:
                left[word] -= 1
                ordered.append(word)
        ns.args = ordered
    return ns


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (None: this process's own, ``sys.argv``)."""
    ns = parse(argv)
    ns.command_line = argv is None  # a command may then restart the process (verirl.allocator)
    try:
        code: int = ns.run(ns)
        return code
    except ConfigError as exc:
        console.print(f"[red]config error:[/red] {exc}", highlight=False, soft_wrap=True)
        return 2
    except UserInputError as exc:
        message = exc.args[0] if exc.args else str(exc)
        console.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
        return 2
    except KeyboardInterrupt:
        console.print("[red]interrupted[/red]")
        return 130
    except Exception as exc:  # a bug, not bad input: show everything
        traceback.print_exc()
        where = getattr(exc, "verirl_traceback_file", None)
        saved = f"; the traceback is also in {where}" if where else ""
        console.print(
            f"[red]internal error[/red] ({type(exc).__name__}): this is a bug in verirl or a "
            f"plugin, not bad input{saved}",
            highlight=False,
            soft_wrap=True,
        )
        return 1
