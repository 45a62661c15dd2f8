"""Error types that separate bad input from bugs.

The command line prints a :class:`UserInputError` as one line and exits with status 2; any
other exception is an internal error: its traceback is shown (and written to the run
directory when there is one) and the exit status is 1.
"""

from __future__ import annotations


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
