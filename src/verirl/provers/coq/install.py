"""What the installed Coq is and where its libraries live (asked of ``coqc`` once).

The benchmarks and the standard-library environment depend on the Coq they run on: a statement
that elaborates in one version may not in another, and the library's sources change between
releases. Their caches and manifests are keyed by :func:`coq_version`.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path


@functools.cache
def coq_where() -> Path | None:
    """Coq's library directory (``coqc -where``: ``/usr/lib/ocaml/coq`` on Debian), or
    ``None`` when ``coqc`` is not installed."""
    out = _ask("-where")
    return Path(out) if out else None


@functools.cache
def coq_version() -> str:
    """Coq's version (``8.16.1``), or ``"none"`` when ``coqc`` is not installed."""
    out = _ask("--print-version")
    return out.split()[0] if out else "none"


def stdlib_sources() -> Path | None:
    """The directory of the standard library's ``.v`` sources (``theories``), when the
    installed Coq ships them (Debian's ``libcoq-stdlib`` does), else ``None``."""
    where = coq_where()
    if where is None:
        return None
    theories = where / "theories"
    return theories if any(theories.glob("Init/*.v")) else None


def has_library(root: str) -> bool:
    """Whether a library is installed under Coq's ``user-contrib`` (``Coquelicot``,
    ``Hammer``, ``mathcomp``)."""
    where = coq_where()
    return where is not None and (where / "user-contrib" / root).is_dir()


def _ask(flag: str) -> str:
    binary = shutil.which("coqc")
    if binary is None:
        return ""
    try:
        done = subprocess.run(
            [binary, flag], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


__all__ = ["coq_version", "coq_where", "has_library", "stdlib_sources"]
