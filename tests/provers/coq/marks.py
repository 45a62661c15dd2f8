"""The skip mark for tests that run Coq (test helper)."""

from __future__ import annotations

import shutil

import pytest

HAVE_COQ = shutil.which("coqc") is not None and shutil.which("coqidetop.opt") is not None
needs_coq = pytest.mark.skipif(not HAVE_COQ, reason="Coq not installed (apt-get install coq)")
