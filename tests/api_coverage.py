"""Which third-party APIs verirl calls, and which tests call them: the lowest-versions stage's
test selection and its proof of coverage.

``./run.sh test`` runs the fast stage again on the lowest version of every dependency range
(``.venv-lowest``): that stage exists to catch a call that a lower bound does not support. It
needs the tests that reach every third-party API verirl calls — not the whole fast stage. This
module measures that set and chooses those tests:

1. **trace** — ``pytest -p tests.api_coverage`` with ``VERIRL_API_TRACE=DIR`` records, for every
   test, each function of a tracked package called directly from verirl's own code
   (``src/verirl``): Python functions through ``sys.setprofile``'s ``call`` events whose caller
   is a verirl frame, C functions through its ``c_call`` events from a verirl frame. Tracked: the
   packages whose locked version differs between ``requirements/constraints.txt`` and
   ``requirements/lowest-constraints.txt`` (torch is the same build in both). One JSON file per
   pytest process (xdist workers apart).
2. **select** — ``python -m tests.api_coverage select DIR --durations REPORT.xml`` picks tests
   by greedy weighted set cover (most newly covered APIs per second first, durations from a
   JUnit report of an untraced run) until every API seen in the fast stage is covered, and
   writes their ids to ``tests/lowest_versions.txt``.
3. **check** — ``python -m tests.api_coverage check DIR`` reports how many of the traced APIs the
   listed tests call (the selection's coverage; 100% when it was just selected) and which ones
   they miss.

``tests/conftest.py`` marks the listed tests ``lowest``; the lowest-versions stage runs
``-m lowest``. A listed test that no longer exists fails ``tests/test_api_coverage.py``.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import re
import sys
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = str(ROOT / "src" / "verirl")
SELECTION = ROOT / "tests" / "lowest_versions.txt"
LOCKS = (
    ROOT / "requirements" / "constraints.txt",
    ROOT / "requirements" / "lowest-constraints.txt",
)
NOT_CALLED_BY_VERIRL = {"pytest", "pytest-xdist", "hypothesis", "ruff", "build", "mypy"}


# ---- which packages ------------------------------------------------------------------------
def _locked(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.\-]+)==([^\s;]+)", line.strip())
        if match:
            out[match.group(1).lower().replace("_", "-")] = match.group(2)
    return out


def tracked_packages() -> set[str]:
    """Import names of the distributions whose lowest locked version is not the main lock's."""
    main, lowest = (_locked(p) for p in LOCKS)
    differ = {d for d, v in lowest.items() if main.get(d) != v} - NOT_CALLED_BY_VERIRL
    names: set[str] = set()
    for module, dists in importlib.metadata.packages_distributions().items():
        if any(d.lower().replace("_", "-") in differ for d in dists):
            names.add(module)
    return {n for n in names if not n.startswith("_")}


# ---- 1. trace --------------------------------------------------------------------------------
class Tracer:
    """A ``sys.setprofile`` function that collects ``package:qualified.name`` of the tracked
    packages' functions called from a verirl frame."""

    def __init__(self, packages: set[str]) -> None:
        self.packages = packages
        self.seen: set[str] = set()
        self._ours: dict[str, bool] = {}

    def _is_ours(self, filename: str) -> bool:
        ours = self._ours.get(filename)
        if ours is None:
            ours = self._ours[filename] = filename.startswith(SRC)
        return ours

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            caller = frame.f_back
            if caller is None or not self._is_ours(caller.f_code.co_filename):
                return
            module = frame.f_globals.get("__name__") or ""
            top = module.partition(".")[0]
            if top in self.packages:
                self.seen.add(f"{top}:{frame.f_code.co_qualname}")
        elif event == "c_call" and self._is_ours(frame.f_code.co_filename):
            module = getattr(arg, "__module__", None)
            if module is None:
                owner = getattr(arg, "__self__", None)
                module = type(owner).__module__ if owner is not None else ""
            top = (module or "").partition(".")[0]
            if top in self.packages:
                name = getattr(arg, "__qualname__", getattr(arg, "__name__", "?"))
                self.seen.add(f"{top}:{name}")


class TracePlugin:
    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.tracer = Tracer(tracked_packages())
        self.per_test: dict[str, list[str]] = {}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterable[None]:
        self.tracer.seen = set()
        sys.setprofile(self.tracer)
        threading.setprofile(self.tracer)
        try:
            yield
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]
            self.per_test[item.nodeid] = sorted(self.tracer.seen)

    def pytest_sessionfinish(self) -> None:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        (self.out_dir / f"trace-{worker}-{os.getpid()}.json").write_text(
            json.dumps(self.per_test, indent=0, sort_keys=True)
        )


def pytest_configure(config: pytest.Config) -> None:
    out = os.environ.get("VERIRL_API_TRACE")
    if out:
        config.pluginmanager.register(TracePlugin(Path(out)), "verirl-api-trace")


def read_traces(trace_dir: Path) -> dict[str, set[str]]:
    per_test: dict[str, set[str]] = {}
    for path in sorted(trace_dir.glob("trace-*.json")):
        for test, apis in json.loads(path.read_text()).items():
            per_test.setdefault(test, set()).update(apis)
    return per_test


# ---- 2. select, 3. check ---------------------------------------------------------------------
def durations(report: Path) -> dict[str, float]:
    """Seconds per test id from a JUnit XML report (``pytest --junitxml``)."""
    out = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        path = case.get("classname", "").replace(".", "/") + ".py"
        out[f"{path}::{case.get('name', '')}"] = float(case.get("time", 0.0))
    return out


def select(per_test: dict[str, set[str]], seconds: dict[str, float]) -> list[str]:
    """Greedy weighted set cover: the test with the most uncovered APIs per second (plus a
    quarter second of overhead each) until every API is covered."""
    left = set().union(*per_test.values()) if per_test else set()
    chosen: list[str] = []
    while left:
        best = max(
            per_test,
            key=lambda t: (len(per_test[t] & left) / (seconds.get(t, 1.0) + 0.25), t),
        )
        gain = per_test[best] & left
        if not gain:
            break
        chosen.append(best)
        left -= gain
    return sorted(chosen)


def listed() -> list[str]:
    """The test ids of :data:`SELECTION` (comments and blank lines skipped)."""
    if not SELECTION.is_file():
        return []
    lines = (ln.strip() for ln in SELECTION.read_text().splitlines())
    return [ln for ln in lines if ln and not ln.startswith("#")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_select = sub.add_parser("select", help="choose the tests; write tests/lowest_versions.txt")
    p_select.add_argument("traces", type=Path)
    p_select.add_argument("--durations", type=Path, required=True)
    p_check = sub.add_parser("check", help="the listed tests' coverage of the traced APIs")
    p_check.add_argument("traces", type=Path)
    args = parser.parse_args(argv)
    per_test = read_traces(args.traces)
    every = set().union(*per_test.values()) if per_test else set()
    if args.command == "select":
        seconds = durations(args.durations)
        chosen = select(per_test, seconds)
        total = sum(seconds.get(t, 0.0) for t in chosen)
        header = (
            "# The lowest-versions stage's tests (marked `lowest` by tests/conftest.py): they\n"
            f"# call every one of the {len(every)} third-party APIs (of the packages whose lowest\n"
            f"# version differs from the main lock) that the fast stage's {len(per_test)} tests\n"
            "# call from src/verirl. Chosen by `python -m tests.api_coverage select` (its\n"
            "# docstring says how to trace); rerun it when verirl calls something new.\n"
        )
        SELECTION.write_text(header + "\n".join(chosen) + "\n")
        print(f"{len(chosen)} tests ({total:.0f} s untraced) cover {len(every)} APIs")
        return 0
    chosen_ids = set(listed())
    covered = set().union(*(per_test.get(t, set()) for t in chosen_ids)) if chosen_ids else set()
    missing = sorted(every - covered)
    share = len(every & covered) / max(len(every), 1)
    print(
        f"{len(chosen_ids)} listed tests call {len(every & covered)} of {len(every)} APIs "
        f"({share:.1%}) that {len(per_test)} traced tests call"
    )
    for api in missing[:50]:
        print(f"  not covered: {api}")
    return 0 if not missing else 1


if __name__ == "__main__":
    raise SystemExit(main())
