"""A verifier worker loads every environment; it must not pull torch or transformers in (a
worker is ~90 MB without them, ~340 MB with them, and a run has several)."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
from verirl.envs import get_env, load_all
load_all()
for name in ("addition", "tool_world"):
    env = get_env(name)
    env.verify(env.generate(1, 7), "The answer is 42.")
heavy = sorted(m for m in ("torch", "transformers") if m in sys.modules)
print("heavy:", ",".join(heavy) or "none")
"""


def test_loading_and_verifying_every_environment_imports_neither_torch_nor_transformers() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    assert "heavy: none" in out.splitlines(), out


def test_the_command_line_module_imports_neither() -> None:
    """Workers started under the `verirl` console script re-import it as their main module
    (multiprocessing's forkserver re-imports a script run by path), so its import is part of
    every verifier worker's footprint."""
    probe = (
        "import sys, verirl.cli; "
        "print('heavy:', ','.join(m for m in ('torch', 'transformers') if m in sys.modules) "
        "or 'none')"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    assert "heavy: none" in out.splitlines(), out
