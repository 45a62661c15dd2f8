"""Error types that separate bad input from bugs.

The command line prints a :class:`UserInputError` as one line and exits with status 2; any
other exception is an internal error: its traceback is shown (and written to the run
directory when there is one) and the exit status is 1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class UserInputError(ValueError):
    """Bad input from the user — a config value, a path, a name — described in one line."""


class CheckpointError(UserInputError):
    """A checkpoint that cannot be used (missing, damaged); the message names the file."""


class UnknownNameError(UserInputError, KeyError):
    """A registry lookup of a name nobody registered (an environment, estimator, engine...).

    A ``KeyError`` too, for callers that catch lookups that way."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class WorkerLostError(RuntimeError):
    """A distributed worker (a learner rank, a rollout replica) died during a step: the step
    did not happen; the run resumes from its last checkpoint."""


def format_errors(exc: ValidationError, prefix: str) -> str:
    """One line per error: ``field.path: message (got value)``."""
    lines = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err["loc"] if x not in ("function-after",))
        where = ".".join(x for x in (prefix, loc) if x)
        msg = err["msg"].removeprefix("Value error, ")
        got = err.get("input")
        shown = "" if isinstance(got, dict) or got is None else f" (got {got!r})"
        lines.append(f"{where}: {msg}{shown}" if where else f"{msg}{shown}")
    return "; ".join(lines)
