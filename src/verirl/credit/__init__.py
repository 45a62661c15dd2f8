"""Credit estimators (scores → token-level advantages), registered by name.

Every module of this package is imported here so that its estimators register; a new
estimator only adds a module.
"""

from __future__ import annotations

import importlib
import pkgutil

from verirl.credit.base import (
    CREDIT,
    CreditEstimator,
    CreditInput,
    get_credit,
    register_credit,
)

__all__ = ["CREDIT", "CreditEstimator", "CreditInput", "get_credit", "register_credit"]

for _mod in pkgutil.iter_modules(__path__):
    if _mod.name != "base" and not _mod.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_mod.name}")
