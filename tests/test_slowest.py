"""tests/slowest.py: test ids and seconds from the stages' JUnit reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.slowest import main, read

REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.train.test_a" name="test_x[1]" time="2.5" />
<testcase classname="" name="tests.integrations.verl.test_verl" time="0.25" />
</testsuite></testsuites>
"""


def test_ids_name_the_file_and_a_module_skipped_at_collection(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "slow.xml"
    report.write_text(REPORT)
    assert read(report) == [
        ("tests/train/test_a.py::test_x[1]", 2.5),
        ("tests/integrations/verl/test_verl.py", 0.25),
    ]
    main([str(report)])
    out = capsys.readouterr().out
    assert "slow: 3 s in tests; slowest files: tests/train/test_a.py 2 s" in out
    assert "/.py" not in out and " .py" not in out
