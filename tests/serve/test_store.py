"""The curriculum store: every change committed before it is reported; kill -9 safe."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from verirl.curriculum import CurriculumConfig, Task
from verirl.errors import UserInputError
from verirl.serve.store import CurriculumNotFound, CurriculumStore

REPO = Path(__file__).resolve().parents[2]
CFG = CurriculumConfig(environments=["addition", "multiplication"], tau_num=4, tau_acc=0.75)


def test_state_survives_reopen_and_only_issued_tasks_count(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    store = CurriculumStore(path, CFG)
    tasks = store.issue("run", 6)
    assert [t.seed for t in tasks] == list(range(6))
    # every issued problem at the top difficulty (0), all correct: 4 ≥ tau_num moves h up
    counted = store.record("run", [(t, True) for t in tasks])
    assert counted == [True] * 6
    forged = Task("addition", 0, 999)  # never issued
    changed = Task(tasks[0].env, tasks[0].difficulty + 1, tasks[0].seed)  # wrong difficulty
    assert store.record("run", [(forged, True), (changed, True)]) == [False, False]
    before = store.export("run")
    assert before["verdicts"] == 6
    assert any(w[1] >= 1 for w in store.summary("run")["windows"].values())
    store.close()

    again = CurriculumStore(path, CFG)
    after = again.export("run")
    assert after == before  # windows, counters, seed counter, RNG state
    assert again.issue("run", 1)[0].seed == 6  # never hands out a seed twice
    again.close()


def test_export_import_round_trip_and_bad_input(tmp_path: Path) -> None:
    store = CurriculumStore(tmp_path / "a.sqlite", CFG)
    store.create("src", {"environments": ["addition"], "tau_num": 2}, exist_ok=False)
    tasks = store.issue("src", 3)
    store.record("src", [(t, True) for t in tasks])
    exported = json.loads(json.dumps(store.export("src")))
    other = CurriculumStore(tmp_path / "b.sqlite", CFG)
    other.import_("copy", exported)
    assert other.export("copy")["state"] == exported["state"]
    assert other.issue("copy", 1)[0].seed == 3
    with pytest.raises(UserInputError, match="exists already"):
        store.create("src", None, exist_ok=False)
    with pytest.raises(UserInputError, match="curriculum name"):
        store.create("../etc", None, exist_ok=True)
    with pytest.raises(UserInputError, match="environments"):
        store.create("bad", {"environments": ["no_such_env"]}, exist_ok=True)
    broken = dict(exported, state={**exported["state"], "seed_counter": -1})
    with pytest.raises(UserInputError, match="state does not fit"):
        other.import_("broken", broken)
    with pytest.raises(CurriculumNotFound):
        store.record("missing", [])


_WRITER = """
import sys
from verirl.curriculum import CurriculumConfig
from verirl.serve.store import CurriculumStore
cfg = CurriculumConfig(environments=["addition", "multiplication"], tau_num=4, tau_acc=0.75)
store = CurriculumStore(sys.argv[1], cfg)
print("ready", flush=True)
i = 0
while True:
    tasks = store.issue("run", 2)
    store.record("run", [(t, (t.seed + i) % 3 != 0) for t in tasks])
    print(tasks[-1].seed, flush=True)  # reported only after both commits
    i += 1
"""


def test_kill_9_mid_write_loses_nothing_reported(tmp_path: Path) -> None:
    path = tmp_path / "k.sqlite"
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    reported = []
    t0 = time.monotonic()
    while len(reported) < 40 and time.monotonic() - t0 < 120:
        reported.append(int(proc.stdout.readline()))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert len(reported) >= 10

    store = CurriculumStore(path, CFG)
    state = store.export("run")
    # nothing the writer reported is lost: its seeds were committed, and so were its verdicts
    assert state["state"]["seed_counter"] >= reported[-1] + 1
    assert state["verdicts"] >= 2 * len(reported)
    # and the file is consistent: the counter is exactly past the last issued seed
    db = sqlite3.connect(path)
    (top,) = db.execute("SELECT MAX(seed) FROM issued WHERE curriculum = 'run'").fetchone()
    assert state["state"]["seed_counter"] == top + 1
    assert store.issue("run", 1)[0].seed == top + 1


def test_a_request_id_counts_once_is_kept_across_reopen_and_bounded(tmp_path: Path) -> None:
    from verirl.serve.store import RequestIdReused, request_digest

    path = tmp_path / "r.sqlite"
    store = CurriculumStore(path, CFG, keep_requests=3)
    tasks = store.issue("run", 5)
    calls: list[list[bool]] = []

    def reply(counted: list[bool]) -> list[dict[str, object]]:
        calls.append(counted)
        return [{"correct": True, "counted": c} for c in counted]

    digest = request_digest(["first"])
    first = store.record_request("run", "id-0", digest, [(tasks[0], True)], reply)
    again = store.record_request("run", "id-0", digest, [(tasks[0], True)], reply)
    assert first == again == [{"correct": True, "counted": True}]
    assert len(calls) == 1 and store.summary("run")["verdicts"] == 1  # counted once
    with pytest.raises(RequestIdReused, match="other items"):
        store.record_request("run", "id-0", request_digest(["other"]), [], reply)
    store.close()

    store = CurriculumStore(path, CFG, keep_requests=3)  # what kill -9 and a restart leave
    assert store.replay("run", "id-0", digest) == first
    assert store.record_request("run", "id-0", digest, [(tasks[0], True)], reply) == first
    assert store.summary("run")["verdicts"] == 1
    for k in range(1, 5):  # four more ids: only the newest three are kept
        store.record_request("run", f"id-{k}", digest, [(tasks[k], False)], reply)
    assert store.summary("run")["verdicts"] == 5
    assert store.replay("run", "id-0", digest) is None
    assert store.replay("run", "id-1", digest) is None
    assert all(store.replay("run", f"id-{k}", digest) is not None for k in (2, 3, 4))
    rows = sqlite3.connect(path).execute("SELECT count(*) FROM requests").fetchone()[0]
    assert rows == 3
    store.close()
