"""LeanReplChecker against a fake REPL process that replays recorded transcripts
and against a real REPL when one is configured."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.provers.lean.fixtures import REPL_DIR, VERSIONS, fake_command, require
from verirl.provers.base import FormalProblem, ProofChecker
from verirl.provers.lean.repl import REPL_ENV_VAR, LeanReplChecker, LeanReplError

MATHLIB = "import Mathlib"


def problem(statement: str, prelude: str = "") -> FormalProblem:
    return FormalProblem(system="lean", name="t", statement=statement, prelude=prelude)


def logged(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.fixture()
def synthetic_dir(tmp_path: Path) -> Path:
    """A transcript we wrote ourselves (synthetic=True): the paper's main case, a tactic that
    fails mid-proof, in command mode with allTactics. Its shape follows the reply in the Kimina
    documentation: the error covers the failing tactic and its continuation line,
    no "unsolved goals" follows, and allTactics lists only the tactics before the failure."""
    statement = "theorem t (a b : ℝ) (h : 0 ≤ a) : 0 ≤ a + b ^ 2 := by"
    proof = (
        "\n  have hb : 0 ≤ b ^ 2 := sq_nonneg b\n"
        "  nlinarith [sq_nonneg (a - b),\n    sq_nonneg (a + b)]\n"
        "  simp\n  linarith"
    )
    requests = [{"cmd": statement + proof, "env": 0, "allTactics": True}]
    replies = [
        {
            "tactics": [
                {
                    "tactic": "have hb : 0 ≤ b ^ 2 := sq_nonneg b",
                    "proofState": 0,
                    "pos": {"line": 2, "column": 2},
                    "goals": "a b : ℝ\nh : 0 ≤ a\n⊢ 0 ≤ a + b ^ 2",
                    "endPos": {"line": 2, "column": 36},
                }
            ],
            "messages": [
                {
                    "severity": "error",
                    "pos": {"line": 3, "column": 2},
                    "endPos": {"line": 4, "column": 22},
                    "data": "linarith failed to find a contradiction\ncase a\n⊢ False\nfailed",
                }
            ],
            "env": 1,
        }
    ]
    (tmp_path / "mid_error.in").write_text(
        "\n\n".join(json.dumps(r, ensure_ascii=False) for r in requests) + "\n", encoding="utf-8"
    )
    (tmp_path / "mid_error.expected.out").write_text(
        "\n\n".join(json.dumps(r, ensure_ascii=False, indent=1) for r in replies) + "\n\n",
        encoding="utf-8",
    )
    (tmp_path / "meta.json").write_text(
        json.dumps({"synthetic": True, "statement": statement, "proof": proof})
    )
    return tmp_path


def synthetic_case(directory: Path) -> tuple[str, str]:
    meta = json.loads((directory / "meta.json").read_text())
    return meta["statement"], meta["proof"]


# ---- replaying the recorded transcripts through a process ---------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_recorded_transcripts_through_the_fake_process(version: str, tmp_path: Path) -> None:
    directory = require(REPL_DIR / version)
    log = tmp_path / "requests.log"
    command = fake_command(
        directory,
        "all_tactics",
        "incomplete",
        "have_by_sorry",
        "no_goal_sorry",
        log=str(log),
        axioms="",  # `#print axioms` in Lean's documented format: no recording holds one
    )
    with LeanReplChecker(command, reject_unsafe=False, memory_limit_mb=2048) as checker:
        assert isinstance(checker, ProofChecker)
        ok = checker.check(problem("def f : Nat := by"), " have t := 37; exact t")
        assert (ok.passed, ok.status, [t.text for t in ok.tactics]) == (
            True,
            "pass",
            ["have t := 37", "exact t"],
        )
        inc = checker.check(problem("def f : Nat := by"), " apply Nat.succ")
        assert (inc.passed, inc.status, inc.first_error_index) == (False, "incomplete", None)
        bad = checker.check(
            problem("example : True := by"), "\n  have h : set Nat := by sorry\n  sorry"
        )
        assert (bad.status, bad.first_error_index, len(bad.tactics)) == ("error", 0, 2)
        assert checker.restarts == 0
    sent = logged(log)
    assert [r["cmd"] for r in sent] == [
        "def f : Nat := by have t := 37; exact t",
        "#print axioms f",  # only after the pass, in the environment the proof produced
        "def f : Nat := by apply Nat.succ",
        "example : True := by\n  have h : set Nat := by sorry\n  sorry",
    ]
    assert sent[1] == {"cmd": "#print axioms f", "env": 0}
    proofs = [sent[0], *sent[2:]]
    assert all(r["allTactics"] is True and "env" not in r for r in proofs)  # no prelude


@pytest.mark.parametrize("version", VERSIONS)
def test_sorry_is_never_a_pass(version: str, tmp_path: Path) -> None:
    directory = require(REPL_DIR / version)
    log = tmp_path / "requests.log"
    stmt = problem("theorem foo (x : Int) : x = x := by")
    proof = "\n  have h : x = 1 := by sorry"
    with LeanReplChecker(fake_command(directory, "have_by_sorry", log=str(log))) as checker:
        rejected = checker.check(stmt, proof)
    assert (rejected.passed, rejected.status) == (False, "rejected")
    assert rejected.rejection is not None and "sorry" in rejected.rejection
    assert [t.text for t in rejected.tactics] == ["have h : x = 1 := by sorry"]
    assert logged(log) == []  # the filter stopped it before the process saw it
    # with the filter off, Lean's own answer (a sorry inside the `have`) fails it too
    command = fake_command(directory, "have_by_sorry")
    with LeanReplChecker(command, reject_unsafe=False) as checker:
        replayed = checker.check(stmt, proof)
    assert (replayed.passed, replayed.status, replayed.first_error_index) == (False, "error", 0)


def test_mid_proof_error_is_located_at_the_failing_tactic(synthetic_dir: Path) -> None:
    statement, proof = synthetic_case(synthetic_dir)
    log = synthetic_dir / "requests.log"
    command = fake_command(synthetic_dir, "mid_error", accept_prefix="import", log=str(log))
    with LeanReplChecker(command) as checker:
        check = checker.check(problem(statement, MATHLIB), proof)
    assert (check.passed, check.status) == (False, "error")
    # Lean listed only the tactic before the failure; the credited tactics come from the
    # layout split so that the two tactics after the error exist (and can receive d2)
    assert [t.text for t in check.tactics] == [
        "have hb : 0 ≤ b ^ 2 := sq_nonneg b",
        "nlinarith [sq_nonneg (a - b),\n    sq_nonneg (a + b)]",
        "simp",
        "linarith",
    ]
    assert check.first_error_index == 1
    assert all(proof[t.start : t.end] == t.text for t in check.tactics)
    error = check.messages[0]
    assert (error.start, error.end) == (check.tactics[1].start, check.tactics[1].end)
    sent = logged(log)
    assert sent[0] == {"cmd": MATHLIB}  # the header, once, without env
    assert sent[1]["env"] == 0 and sent[1]["allTactics"] is True


# ---- deadlines, crashes, restarts ------------------------------------------------------------


def test_timeout_kills_the_process_and_the_next_request_works(synthetic_dir: Path) -> None:
    statement, proof = synthetic_case(synthetic_dir)
    log = synthetic_dir / "requests.log"
    command = fake_command(
        synthetic_dir, "mid_error", accept_prefix="import", hang_on="HANG", log=str(log)
    )
    with LeanReplChecker(command) as checker:
        hung = checker.check(problem(statement, MATHLIB), "\n  simp -- HANG", timeout_s=1.0)
        assert (hung.passed, hung.status, hung.timed_out) == (False, "timeout", True)
        assert hung.elapsed_s >= 0.9  # the deadline was kept; the fake hangs for ever
        assert [t.text for t in hung.tactics] == ["simp"]  # layout spans for the credit
        assert checker._proc is None  # killed, not left hanging
        after = checker.check(problem(statement, MATHLIB), proof, timeout_s=10.0)
        assert (after.status, after.first_error_index) == ("error", 1)
        assert checker.restarts == 1
    headers = [r for r in logged(log) if r == {"cmd": MATHLIB}]
    assert len(headers) == 2  # the header was re-sent to the fresh process


def test_killed_process_is_gone(synthetic_dir: Path) -> None:
    command = fake_command(synthetic_dir, "mid_error", hang_on="HANG")
    with LeanReplChecker(command) as checker:
        checker.check(problem("theorem t : True := by"), " trivial", timeout_s=5.0)
        assert checker._proc is not None
        pid = checker._proc.proc.pid
        checker.check(problem("theorem t : True := by"), " trivial -- HANG", timeout_s=0.5)
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@pytest.mark.parametrize(
    ("flag", "word", "detail"),
    [
        ("die_on", "DIE", "closed its output"),
        ("garbage_on", "GARBAGE", "not JSON"),
    ],
)
def test_crash_or_garbage_then_restart(
    synthetic_dir: Path, flag: str, word: str, detail: str
) -> None:
    statement, proof = synthetic_case(synthetic_dir)
    command = fake_command(synthetic_dir, "mid_error", accept_prefix="import", **{flag: word})
    with LeanReplChecker(command) as checker:
        broken = checker.check(problem(statement, MATHLIB), f"\n  simp -- {word}")
        assert (broken.passed, broken.status) == (False, "crash")
        assert detail in broken.messages[0].text
        after = checker.check(problem(statement, MATHLIB), proof)
        assert (after.status, after.first_error_index) == ("error", 1)
        assert checker.restarts == 1


def test_max_uses_restarts_and_resends_the_header(synthetic_dir: Path) -> None:
    statement, proof = synthetic_case(synthetic_dir)
    log = synthetic_dir / "requests.log"
    command = fake_command(synthetic_dir, "mid_error", accept_prefix="import", log=str(log))
    with LeanReplChecker(command, max_uses=1) as checker:
        results = checker.check_batch([(problem(statement, MATHLIB), proof)] * 2)
        assert [r.first_error_index for r in results] == [1, 1]
        assert checker.restarts == 1
    assert [r == {"cmd": MATHLIB} for r in logged(log)] == [True, False, True, False]


def test_unknown_environment_reloads_the_header(synthetic_dir: Path) -> None:
    statement, proof = synthetic_case(synthetic_dir)
    log = synthetic_dir / "requests.log"
    command = fake_command(
        synthetic_dir, "mid_error", "--forget-env-once", accept_prefix="import", log=str(log)
    )
    with LeanReplChecker(command) as checker:
        check = checker.check(problem(statement, MATHLIB), proof)
        assert (check.status, check.first_error_index) == ("error", 1)
        assert checker.restarts == 1
    # header, refused proof, header again (fresh process), proof
    assert [("env" in r, r.get("cmd") == MATHLIB) for r in logged(log)] == [
        (False, True),
        (True, False),
        (False, True),
        (True, False),
    ]


def test_sandbox_memory_limit_and_temporary_directory(synthetic_dir: Path) -> None:
    command = fake_command(synthetic_dir, "mid_error")
    checker = LeanReplChecker(command, memory_limit_mb=1024)
    checker.check(problem("theorem t : True := by"), " trivial")
    assert checker._proc is not None
    pid = checker._proc.proc.pid
    limits = Path(f"/proc/{pid}/limits").read_text()
    line = next(x for x in limits.splitlines() if x.startswith("Max address space"))
    assert line.split()[3] == str(1024 * 1024 * 1024)
    workdir = os.readlink(f"/proc/{pid}/cwd")
    assert os.path.basename(workdir).startswith("verirl-lean-")
    checker.close()
    assert not os.path.exists(workdir)


# ---- configuration errors ----------------------------------------------------------------


def test_missing_binary_names_the_install_step(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(LeanReplError, match="lake build"):
        LeanReplChecker(["/nonexistent/repl"])
    monkeypatch.delenv(REPL_ENV_VAR, raising=False)
    with pytest.raises(LeanReplError, match=REPL_ENV_VAR):
        LeanReplChecker()


def test_failing_prelude_raises(synthetic_dir: Path) -> None:
    with (
        LeanReplChecker(fake_command(synthetic_dir, "mid_error")) as checker,
        pytest.raises(LeanReplError, match="prelude fails"),
    ):
        checker.check(problem("theorem t : True := by", "import NoSuchLibrary"), " trivial")


# ---- a real REPL, when there is one ----------------------------------------------------------


def _live_command() -> list[str] | None:
    configured = os.environ.get(REPL_ENV_VAR, "").strip()
    return configured.split() if configured else None


@pytest.mark.skipif(
    _live_command() is None,
    reason=(
        f"no Lean REPL: set {REPL_ENV_VAR} to its command line (e.g. 'lake env "
        "/opt/repl/.lake/build/bin/repl', with VERIRL_LEAN_PROJECT as the working directory)"
        + (
            "; lean/lake are on PATH but the REPL path is unknown"
            if shutil.which("lake") or shutil.which("lean")
            else ""
        )
    ),
)
def test_live_repl(tmp_path: Path) -> None:
    cwd = os.environ.get("VERIRL_LEAN_PROJECT")
    with LeanReplChecker(_live_command(), cwd=cwd, record_dir=str(tmp_path)) as checker:
        stmt = problem("theorem two : 1 + 1 = 2 := by")
        ok = checker.check(stmt, "\n  show 1 + 1 = 2\n  rfl", timeout_s=60)
        assert (ok.passed, ok.status) == (True, "pass")
        assert [t.text for t in ok.tactics] == ["show 1 + 1 = 2", "rfl"]  # Lean's ranges
        wrong = "\n  show 1 + 1 = 2\n  exact Nat.lt_irrefl 0\n  rfl"
        bad = checker.check(stmt, wrong, timeout_s=60)
        assert (bad.passed, bad.status, bad.first_error_index) == (False, "error", 1)
        inc = checker.check(stmt, "\n  show 1 + 1 = 2", timeout_s=60)
        assert (inc.passed, inc.status) == (False, "incomplete")
    assert (tmp_path / "session.expected.out").exists()
