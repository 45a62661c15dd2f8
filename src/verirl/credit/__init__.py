"""Credit estimators (scores → token-level advantages), registered by name; the built-in ones
are imported on the first lookup of :data:`CREDIT`, so a new estimator is a module and one
line in :func:`_builtins`."""

from __future__ import annotations

from verirl.credit.base import CREDIT, CreditEstimator, CreditInput


@CREDIT.builtins
def _builtins() -> None:
    from verirl.credit import multiturn, outcome, process, tcpo  # noqa: F401


__all__ = ["CREDIT", "CreditEstimator", "CreditInput"]
