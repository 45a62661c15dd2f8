"""Where the recorded Lean transcripts are, and small readers for them (test helper).

The transcripts live only in ``shared/provers-fixtures`` (never copied into this repo):
``$VERIRL_FIXTURES`` or, by default, ``<repo>/../shared/provers-fixtures``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.provers.lean.fake_repl import reply_blocks, request_blocks

REPO = Path(__file__).resolve().parents[3]
FIXTURES = Path(os.environ.get("VERIRL_FIXTURES", REPO.parent / "shared" / "provers-fixtures"))
REPL_DIR = FIXTURES / "lean-repl"
KIMINA_DIR = FIXTURES / "kimina"
VERSIONS = ("v4.9.0-rc1", "HEAD")
FAKE_REPL = Path(__file__).with_name("fake_repl.py")


def require(path: Path) -> Path:
    """``path``, or skip the test saying which fixture is missing and how to point at it."""
    if not path.exists():
        pytest.skip(
            f"recorded prover fixtures not found at {path} "
            "(set VERIRL_FIXTURES to the shared/provers-fixtures directory)"
        )
    return path


def transcript(version: str, name: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(request, reply) pairs of ``lean-repl/<version>/<name>``, decoded."""
    directory = require(REPL_DIR / version)
    requests = request_blocks((directory / f"{name}.in").read_text(encoding="utf-8"))
    replies = reply_blocks((directory / f"{name}.expected.out").read_text(encoding="utf-8"))
    assert len(requests) == len(replies), f"{version}/{name}: requests and replies differ"
    return [
        (json.loads(q, strict=False), json.loads(r)) for q, r in zip(requests, replies, strict=True)
    ]


def transcript_names(version: str) -> list[str]:
    directory = REPL_DIR / version
    if not directory.exists():
        return []
    return sorted(p.name[: -len(".in")] for p in directory.glob("*.in"))


def fake_command(directory: Path, *names: str, **options: str) -> list[str]:
    """The command line that runs the fake REPL on ``directory/<names>`` transcripts;
    ``options`` become ``--hang-on`` style flags (underscores → dashes)."""
    argv = [sys.executable, str(FAKE_REPL), str(directory), *names]
    for flag, value in options.items():
        argv += [f"--{flag.replace('_', '-')}", value]
    return argv
