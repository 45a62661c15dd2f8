"""The README's numbers of the default job are the measured table's (docs/experiments.md,
"Measured"): its accuracy before and after for each seed, its end-to-end time and its peak
memory. A README edited without the table, or a table remeasured without the README, fails."""

from __future__ import annotations

import math
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = re.compile(r"<!-- headline:.*?-->\n(.*?)<!-- /headline -->", re.DOTALL)


def headline_rows() -> list[dict[str, str]]:
    text = (ROOT / "docs" / "experiments.md").read_text()
    match = TABLE.search(text)
    assert match, "docs/experiments.md has no <!-- headline --> table"
    lines = [ln for ln in match.group(1).splitlines() if ln.startswith("|")]
    keys = ["seed", "main", "before", "after", "steps", "end_to_end", "peak", "run_dir"]
    rows = []
    for line in lines[2:]:  # the header and its rule
        cells = [c.strip().strip("`") for c in line.strip("|").split("|")]
        assert len(cells) == len(keys), line
        rows.append(dict(zip(keys, cells, strict=True)))
    assert len(rows) >= 2, "two seeds at least"
    return rows


def number(cell: str) -> float:
    found = re.match(r"[\d.]+", cell)
    assert found, cell
    return float(found.group())


def test_the_readme_quotes_the_measured_table() -> None:
    rows = headline_rows()
    readme = (ROOT / "README.md").read_text()
    before = {r["before"] for r in rows}
    assert len(before) == 1, "the same base model before training in every row"
    afters = " and ".join(r["after"] for r in rows)
    seeds = " and ".join(r["seed"] for r in rows)
    claim = f"from {before.pop()} to\n{afters} (seeds {seeds})"
    assert claim in readme or claim.replace("\n", " ") in readme, claim
    minutes = [number(r["end_to_end"]) for r in rows]
    quick = f"~{math.floor(min(minutes))}–{math.ceil(max(minutes))} min here"
    assert quick in readme.splitlines()[1], quick  # the first command's line
    peak = max(number(r["peak"]) for r in rows)
    assert f"peaks at {peak:.1f} GB" in readme


def test_every_row_names_the_commit_it_measured() -> None:
    for row in headline_rows():
        assert re.fullmatch(r"[0-9a-f]{7,40}", row["main"]), row
        assert row["seed"].isdigit(), row
