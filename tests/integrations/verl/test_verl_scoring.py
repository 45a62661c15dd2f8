"""The verl-free half of the verl integration (``compute_score``, the score encodings) and the
shared problem rows, in verirl's own environment."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from verirl.envs import get_env
from verirl.integrations.problems import identity_columns
from verirl.integrations.verl.scoring import (
    compute_score,
    decode_tactic_scores,
    encode_tactic_scores,
    encode_turn_scores,
    turn_spans,
)


def test_compute_score_without_verl_is_the_environment_verifier() -> None:
    env = get_env("multiplication")
    for seed in range(4):
        p = env.generate(1, seed)
        for text in (f"\\boxed{{{env.solve(p)}}}", "\\boxed{-1}", "no box"):
            want = env.verify(p, text)
            got = compute_score("verirl/multiplication", text, p.answer, identity_columns(p))
            assert got["score"] == want.reward and got["verirl_correct"] == float(want.correct)


def test_tactic_encoding_round_trips() -> None:
    row = encode_tactic_scores(10, 8, [0, 3, 5], [-0.05, -0.1, -0.1], False)
    assert decode_tactic_scores(row, 8) == (False, [0, 3, 5], pytest.approx([-0.05, -0.1, -0.1]))
    row = encode_tactic_scores(10, 8, [1, 4], [1.0, 1.0], True)
    assert decode_tactic_scores(row, 8) == (True, [1, 4], [1.0, 1.0])
    assert decode_tactic_scores(encode_tactic_scores(10, 8, [], [], False), 8) == (False, [], [])
    with pytest.raises(ValueError, match="outside"):
        encode_tactic_scores(10, 8, [9], [-0.1], False)


def test_turn_spans_and_scores() -> None:
    mask = torch.tensor([1, 1, 0, 0, 1, 1, 1, 0, 1, 0, 0])
    spans = turn_spans(mask, 9)
    assert spans == [(0, 2), (4, 7), (8, 9)]
    row = encode_turn_scores(11, spans, [0.0, 0.5, 1.0])
    assert row.tolist() == [0, 0, 0, 0, 0, 0, 0.5, 0, 1.0, 0, 0]


@pytest.mark.slow
def test_importing_the_verl_package_does_not_import_verl() -> None:
    code = (
        "import json, sys, verirl.integrations.verl, verirl.integrations.verl.scoring;"
        "print(json.dumps([m for m in ('verl', 'ray', 'trl') if m in sys.modules]))"
    )
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(root / "src"), "PATH": ""},
    )
    assert json.loads(out.stdout) == []
