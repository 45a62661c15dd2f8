"""The run's ledger (verirl.train.ledger): records survive a torn write, and the audit finds,
from hand-written ledgers, the ways a resumed asynchronous run has lost or doubled data in
other trainers — prompts skipped after a resume (NeMo-RL: the data iterator had run ahead of
the trained steps), buffered rollouts dropped (OpenRLHF) — and counts a clean resume clean."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from verirl.train.ledger import LEDGER, Ledger, audit, audit_run, read_ledger
from verirl.types import Problem, Rollout


def _issued(batch: int, *groups: int, tag: str = "") -> dict[str, Any]:
    return {
        "event": "issued",
        "batch": batch,
        "groups": [[g, f"addition:0:{g}{tag}"] for g in groups],
    }


def _trained(step: int, *groups: int, filtered: tuple[int, ...] = ()) -> dict[str, Any]:
    return {
        "event": "trained",
        "step": step,
        "version": step,
        "groups": list(groups),
        "filtered": list(filtered),
    }


def _start(step: int, restored: tuple[int, ...] = ()) -> dict[str, Any]:
    return {"event": "start", "step": step, "restored": list(restored)}


END = {"event": "end", "step": 4}


def _straight() -> list[dict[str, Any]]:
    """Four steps of two groups each, k = 1: batch i + 1 is issued before step i trains."""
    return [
        _start(0),
        _issued(0, 0, 1),
        _issued(1, 2, 3),
        _trained(0, 0, 1),
        _issued(2, 4, 5),
        _trained(1, 2, 3),
        _issued(3, 6, 7),
        _trained(2, 4, 5),
        _trained(3, 6, 7),
        END,
    ]


def test_an_uninterrupted_run_trains_every_issued_problem_once() -> None:
    a = audit(_straight())
    assert (a.issued, a.trained, a.lost, a.trained_twice, a.reissued, a.resumes) == (
        8,
        8,
        0,
        0,
        0,
        0,
    )
    assert a.clean and a.ended and a.pending == 0


def test_a_resume_that_restores_the_buffer_and_reissues_the_rest_is_clean() -> None:
    """Killed after step 2's update, past checkpoint 2 (which holds batch 2, produced ahead)
    and after batch 3 was issued: the resume redoes step 2 on the checkpoint's batch 2 and
    issues batch 3 again — the same group ids naming the same problems."""
    records = [
        *_straight()[:7],  # … issued batch 3 (groups 6, 7)
        _trained(2, 4, 5),  # after checkpoint 2, then the kill
        _start(2, restored=(2,)),
        _trained(2, 4, 5),
        _issued(3, 6, 7),
        _trained(3, 6, 7),
        END,
    ]
    a = audit(records)
    assert (a.lost, a.trained_twice, a.changed) == (0, 0, 0)
    assert (a.issued, a.trained, a.reissued, a.retrained, a.restored, a.resumes) == (
        8,
        8,
        2,
        1,
        1,
        1,
    )
    assert a.clean


def test_prompts_skipped_after_a_resume_are_lost() -> None:
    """NeMo-RL's bug: the resumed producer continued after the batches it had issued before
    the kill (its iterator was saved ahead of the trained steps), so batch 3's problems were
    never trained; the resumed run issued new ids instead."""
    records = [
        *_straight()[:7],
        _start(2),
        _issued(2, 8, 9),  # should have been 4, 5 again (or restored)
        _trained(2, 8, 9),
        _issued(3, 10, 11),
        _trained(3, 10, 11),
        END,
    ]
    a = audit(records)
    assert a.lost == 4 and not a.clean  # groups 4-7: issued, never trained


def test_a_dropped_buffer_is_lost_and_a_doubled_batch_is_trained_twice() -> None:
    # OpenRLHF: the resumed run started past the buffered batch 2 (groups 4, 5)
    dropped = [*_straight()[:6], _start(2), _issued(3, 6, 7), _trained(2, 6, 7), END]
    assert audit(dropped).lost == 2
    # the other way: a checkpoint whose producer state was one batch behind: batch 1 twice
    doubled = [*_straight()[:6], _start(2), _issued(2, 2, 3), _trained(2, 2, 3), END]
    a = audit(doubled)
    assert a.trained_twice == 2 and a.lost == 2  # groups 4, 5 never came


def test_a_reissued_id_that_names_another_problem_is_changed() -> None:
    records = [*_straight()[:7], _start(3), _issued(3, 6, 7, tag="x"), _trained(3, 6, 7), END]
    assert audit(records).changed == 2


def test_filtered_groups_are_accounted_and_an_unfinished_run_has_pending_groups() -> None:
    records = [_start(0), _issued(0, 0, 1), _issued(0, 2), _trained(0, 0, 2, filtered=(1,))]
    records += [_issued(1, 3, 4)]
    a = audit(records)
    assert (a.trained, a.filtered, a.lost, a.pending, a.ended) == (2, 1, 0, 2, False)


def test_records_are_lines_a_torn_last_line_is_skipped_and_damage_elsewhere_named(
    tmp_path: Path,
) -> None:
    ledger = Ledger(tmp_path / "run" / LEDGER)  # the directory is made by the first record
    problem = Problem("addition", 2, 7, "1+1", "2")
    ledger.start(0, [])
    ledger.issued(0, 5, [problem])
    rollout = Rollout(problem, 5, (1,), (2,), (0.0,), "2", "stop")
    ledger.trained(0, 0, [rollout], [rollout])
    ledger.end(1)
    path = tmp_path / "run" / LEDGER
    lines = path.read_text().splitlines()
    assert [json.loads(x)["event"] for x in lines] == ["start", "issued", "trained", "end"]
    assert json.loads(lines[1])["groups"] == [[5, "addition:2:7"]]
    with path.open("a") as f:
        f.write('{"event": "trained", "st')  # a write cut short
    assert len(list(read_ledger(path))) == 4
    assert audit_run(tmp_path / "run").clean
    path.write_text("\n".join([lines[0], "garbage", *lines[1:]]) + "\n")
    with pytest.raises(ValueError, match="line 2 is not a ledger record"):
        list(read_ledger(path))
    assert Ledger(None).append("start", step=0) is None  # records nothing, anywhere
