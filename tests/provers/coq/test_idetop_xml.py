"""The coqidetop XML encoding and the incremental reply parser, on recorded raw streams (no Coq
needed): the replies must come out the same however the byte stream is chopped."""

from __future__ import annotations

import os
import random
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from verirl.provers.coq.idetop import XmlReplies, richpp_text, xml_add, xml_edit_at

FIXTURES = Path(
    os.environ.get(
        "VERIRL_FIXTURES", Path(__file__).resolve().parents[4] / "shared" / "provers-fixtures"
    )
)


def raw(name: str) -> bytes:
    path = FIXTURES / "coq" / name
    if not path.exists():
        pytest.skip(f"fixtures not found at {path} (set VERIRL_FIXTURES)")
    return path.read_bytes()


def parse_chunked(data: bytes, rng: random.Random) -> list[ET.Element]:
    parser = XmlReplies()
    i = 0
    while i < len(data):
        step = rng.randint(1, 17)
        parser.feed(data[i : i + step])
        i += step
    return list(parser.elements)


@pytest.mark.parametrize("seed", range(5))
def test_third_tactic_failure_stream(seed: int) -> None:
    data = raw("coqidetop_raw_third_tactic_fails.out.xml")
    elements = parse_chunked(data, random.Random(seed))
    values = [e for e in elements if e.tag == "value"]
    assert len(values) == data.count(b"<value")
    assert len(elements) == data.count(b"<value") + data.count(b"<feedback ")
    fails = [v for v in values if v.get("val") == "fail"]
    assert len(fails) == 1
    fail = fails[0]
    assert (fail.get("loc_s"), fail.get("loc_e")) == ("95", "97")
    assert richpp_text(fail) == "The reference IH was not found in the current environment."
    assert values[0].find("state_id").get("val") == "1"  # type: ignore[union-attr]


def test_incomplete_qed_stream_has_no_location() -> None:
    data = raw("coqidetop_raw_incomplete_qed.out.xml")
    values = [e for e in parse_chunked(data, random.Random(7)) if e.tag == "value"]
    fail = next(v for v in values if v.get("val") == "fail")
    assert fail.get("loc_s") is None
    assert "Attempt to save an incomplete proof" in richpp_text(fail)


def test_multibyte_and_entities_split_across_reads() -> None:
    stream = (
        '<value val="fail" loc_s="1" loc_e="2"><state_id val="3"/><richpp><_><pp>'
        "∀&nbsp;x&nbsp;&lt;&nbsp;y&amp;z</pp></_></richpp></value>"
    ).encode()
    for cut in range(1, len(stream)):
        parser = XmlReplies()
        parser.feed(stream[:cut])
        parser.feed(stream[cut:])
        (value,) = parser.elements
        assert richpp_text(value) == "∀ x < y&z"


def test_add_call_encodes_one_sentence_exactly() -> None:
    xml = xml_add('idtac "<a> & b".\r\n', 7, 42)
    call = ET.fromstring(xml)
    assert call.get("val") == "Add"
    assert call.find(".//string").text == 'idtac "<a> & b".\r\n'  # type: ignore[union-attr]
    assert [i.text for i in call.iter("int")] == ["-1", "42", "0", "0"]
    assert call.find(".//state_id").get("val") == "7"  # type: ignore[union-attr]
    assert ET.fromstring(xml_edit_at(5)).find("state_id").get("val") == "5"  # type: ignore[union-attr]
