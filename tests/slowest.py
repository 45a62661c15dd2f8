"""The slowest tests of ``./run.sh test``'s pytest stages, read from their JUnit XML reports
(``python tests/slowest.py STAGE.xml ...``; the file name is the stage's name).

Printed at the end of the test command, after the stage times: the ``COUNT`` slowest tests
(setup, call and teardown together, as JUnit counts them) and, per stage, the files that
took longest — where to look first when the suite outgrows its budget."""

from __future__ import annotations

import argparse
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path


def read(report: Path) -> list[tuple[str, float]]:
    """``(test id, seconds)`` of every test case in a JUnit XML report."""
    out = []
    for case in ET.parse(report).getroot().iter("testcase"):
        seconds = float(case.get("time", 0.0))
        classname, name = case.get("classname", ""), case.get("name", "")
        if not classname:  # a module skipped at collection: its name is the module's
            out.append((name.replace(".", "/") + ".py", seconds))
            continue
        out.append((f"{classname.replace('.', '/')}.py::{name}", seconds))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="+", type=Path)
    parser.add_argument("--count", type=int, default=15)
    parser.add_argument("--files", type=int, default=5, help="slowest files per stage")
    args = parser.parse_args(argv)
    cases = [(r.stem, test, s) for r in args.reports if r.is_file() for test, s in read(r)]
    if not cases:
        return
    print(f"slowest tests (of {len(cases)}; seconds, stage):")
    for stage, test, seconds in sorted(cases, key=lambda c: -c[2])[: args.count]:
        print(f"  {seconds:7.1f}  {stage:<7} {test}")
    for report in args.reports:
        by_file: Counter[str] = Counter()
        for stage, test, seconds in cases:
            if stage == report.stem:
                by_file[test.split("::")[0]] += seconds
        if by_file:
            top = ", ".join(f"{f} {s:.0f} s" for f, s in by_file.most_common(args.files))
            print(f"  {report.stem}: {sum(by_file.values()):.0f} s in tests; slowest files: {top}")


if __name__ == "__main__":
    main()
