"""The learning half of a run: learner, loss, loss terms, producer, checkpoints, metrics.

The loss terms and token sources registered outside :mod:`verirl.train.terms` (on-policy
distillation's term and teachers) are imported on the first lookup of :data:`LOSS_TERMS` or
:data:`TOKEN_SOURCES`."""

from verirl.train.terms import LOSS_TERMS, TOKEN_SOURCES


@LOSS_TERMS.builtins
@TOKEN_SOURCES.builtins
def _distill() -> None:
    from verirl.train import distill  # noqa: F401


__all__ = ["LOSS_TERMS", "TOKEN_SOURCES"]
