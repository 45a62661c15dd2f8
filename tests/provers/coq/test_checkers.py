"""Both Coq backends, live: the recorded scenarios, timeouts, crashes, restarts, limits, pool."""

from __future__ import annotations

import os
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.provers.coq.marks import needs_coq
from verirl.provers.base import FormalProblem, ProofCheck, ProofChecker
from verirl.provers.coq.attempt import CoqNotFoundError, CoqProblemError
from verirl.provers.coq.coqc import CoqcChecker
from verirl.provers.coq.idetop import CoqIdeChecker
from verirl.provers.coq.sentences import split_sentences

pytestmark = [
    pytest.mark.coq,
    needs_coq,
]
FIXTURES = Path(
    os.environ.get(
        "VERIRL_FIXTURES", Path(__file__).resolve().parents[4] / "shared" / "provers-fixtures"
    )
)

ADD_0_R = FormalProblem("coq", "add_0_r", "Theorem add_0_r : forall n : nat, n + 0 = n.")
VALID = """Proof.
  intros n.
  induction n as [| n IH].
  - reflexivity.
  - simpl. rewrite IH. reflexivity.
Qed."""
FAIL3 = VALID.replace("  - reflexivity.\n", "  rewrite IH.\n", 1)
LOOP_PROBLEM = FormalProblem(
    "coq", "t", "Theorem t : forall a b : nat, a + b = 0 -> True.", "Require Import Arith."
)
LOOP = "Proof.\n  intros a b H.\n  repeat rewrite Nat.add_comm in H.\n  exact I.\nQed."


@pytest.fixture(scope="module")
def ide() -> Iterator[CoqIdeChecker]:
    with CoqIdeChecker(workers=1) as checker:
        yield checker


@pytest.fixture(scope="module")
def coqc() -> CoqcChecker:
    return CoqcChecker()


@pytest.fixture(params=["coqc", "ide"])
def checker(request: pytest.FixtureRequest) -> ProofChecker:
    return request.getfixturevalue(request.param)


def split_fixture(name: str) -> tuple[FormalProblem, str]:
    """A recorded ``.v`` input as (problem, proof): the first sentence is the statement."""
    path = FIXTURES / "coq" / "v" / name
    if not path.exists():
        pytest.skip(f"fixtures not found at {path} (set VERIRL_FIXTURES)")
    text = path.read_text(encoding="utf-8")
    first = split_sentences(text)[0]
    return FormalProblem("coq", name, first.text), text[first.end :].lstrip()


# ---- the recorded scenarios -------------------------------------------------------------
# (fixture, status, first error index, text the message starts with / contains, failing span)
SCENARIOS = [
    ("valid.v", "pass", None, None, None),
    ("fail3.v", "error", 2, "The reference IH was not found", "rewrite IH."),
    ("incomplete.v", "incomplete", None, "Attempt to save an incomplete proof", None),
    ("incomplete_qed.v", "incomplete", None, "Attempt to save an incomplete proof", None),
    ("extra_tactic.v", "error", 1, "No such goal", "exact I."),
    ("syntax_err.v", "error", 0, "Syntax error", "intros n)."),
    ("unicode.v", "error", 2, "No such goal", "foo."),
    ("admitted.v", "rejected", None, "admit", None),
    ("admit_qed.v", "rejected", None, "admit", None),
]


@pytest.mark.parametrize(("name", "status", "first", "message", "span"), SCENARIOS)
def test_recorded_scenarios(
    checker: ProofChecker,
    name: str,
    status: str,
    first: int | None,
    message: str | None,
    span: str | None,
) -> None:
    problem, proof = split_fixture(name)
    started = time.perf_counter()
    res = checker.check(problem, proof)
    wall = time.perf_counter() - started
    assert res.status == status, res
    assert res.passed == (status == "pass")
    assert res.first_error_index == first
    if message is not None:
        assert any(message in m.text for m in res.messages), res.messages
    if span is not None:
        assert first is not None and res.tactics[first].text == span
    for t in res.tactics:  # spans are in the coordinates of the proof text
        assert proof[t.start : t.end] == t.text
    assert res.backend == checker.name and 0 < res.elapsed_s <= wall  # measured within the call


def test_error_offsets_are_characters_of_the_proof_text(checker: ProofChecker) -> None:
    problem = FormalProblem("coq", "t_e", "Theorem t_e : forall (n : nat), n = n.")
    proof = "intros n. (* ∀ αβγ *) rewrite foo. reflexivity."
    res = checker.check(problem, proof)
    assert res.status == "error" and res.first_error_index == 1
    msg = res.messages[0]
    assert msg.start is not None and msg.end is not None
    assert proof[msg.start : msg.end] == "foo"  # Coq points at the subterm, in bytes
    assert [t.text for t in res.tactics] == ["intros n.", "rewrite foo.", "reflexivity."]


def test_failing_bullet_is_charged_to_its_tactic(checker: ProofChecker) -> None:
    proof = "intros n. induction n. - simpl. - reflexivity. - simpl. rewrite IHn. reflexivity."
    res = checker.check(ADD_0_R, proof)
    # "- simpl." leaves "0 = 0" open, so the next bullet fails ("Wrong bullet"): the error
    # belongs to the span that starts with that bullet.
    assert res.status == "error"
    assert res.tactics[res.first_error_index or 0].text == "- reflexivity."


@pytest.mark.parametrize(
    "proof",
    [
        "",
        "....",
        "}",
        "{",
        "- - -",
        "(*",
        '"',
        "Qed.",
        "Proof.",
        "\n\n",
        "exact I.}",
        "intros n.\r\n  induction n.\r\n  reflexivity.\r\n",
        "ℕ ∀ x. ☃.",
        "intros ; ; .",
        'idtac "\x1b[31m".',
        "Proof. Qed. Qed.",
        "{ { { intros. } } }",
        "1: { } .",
    ],
)
def test_never_raises_on_garbage(checker: ProofChecker, proof: str) -> None:
    res = checker.check(ADD_0_R, proof, timeout_s=5)
    assert isinstance(res, ProofCheck) and not res.passed
    assert res.status in {"error", "incomplete", "rejected"}


def test_crlf_offsets(checker: ProofChecker) -> None:
    proof = "Proof.\r\n  intros n.\r\n  foo.\r\nQed."
    res = checker.check(ADD_0_R, proof)
    assert res.first_error_index == 1
    assert proof[res.messages[0].start or 0 : res.messages[0].end or 0] == "foo"


# ---- problems that are not the model's fault -------------------------------------------
def test_broken_problem_is_a_configuration_error(checker: ProofChecker) -> None:
    with pytest.raises(CoqProblemError):
        checker.check(FormalProblem("coq", "b", "Theorem b : undefined_thing = 0."), "auto.")
    with pytest.raises(CoqProblemError):
        checker.check(FormalProblem("coq", "b", "Theorem b : True.", 'Load "x".'), "auto.")
    with pytest.raises(CoqProblemError):
        checker.check(FormalProblem("coq", "b", "Axiom b : False."), "auto.")
    assert checker.check(ADD_0_R, VALID).passed  # and the checker still works


def test_missing_binaries_name_the_install() -> None:
    with pytest.raises(CoqNotFoundError, match="apt-get install coq"):
        CoqIdeChecker(coqidetop="/nonexistent/coqidetop.opt")
    with pytest.raises(CoqNotFoundError, match="apt-get install coq"):
        CoqcChecker(coqc="no-such-coqc-binary")


# ---- timeouts, interrupts, crashes, restarts -------------------------------------------
def test_loop_times_out_and_the_same_worker_goes_on(ide: CoqIdeChecker) -> None:
    assert ide.check(ADD_0_R, VALID).passed
    pid = ide._all[0].proc.pid  # type: ignore[union-attr]
    starts = ide.starts
    t0 = time.perf_counter()
    res = ide.check(LOOP_PROBLEM, LOOP, timeout_s=2.0)
    took = time.perf_counter() - t0
    assert res.status == "timeout" and res.timed_out and not res.passed
    assert res.first_error_index == 1  # the repeat rewrite was running
    assert took >= 2.0  # the deadline was kept, not cut short
    # Coq answered "User interrupt." and stays usable: same process, correct next answers (an
    # interrupt that failed ends in a kill after the grace period, and a restart).
    after = ide.check(ADD_0_R, VALID)
    assert after.passed
    bad = ide.check(ADD_0_R, FAIL3)
    assert bad.status == "error" and bad.first_error_index == 2
    assert ide._all[0].proc.pid == pid and ide.starts == starts  # type: ignore[union-attr]


def test_coqc_loop_times_out(coqc: CoqcChecker) -> None:
    # the loop never ends: an answer at all means the deadline stopped it
    res = coqc.check(LOOP_PROBLEM, LOOP, timeout_s=2.0)
    assert res.status == "timeout" and res.timed_out
    assert res.first_error_index == 1


def test_worker_killed_mid_proof_is_a_crash_then_restarts() -> None:
    with CoqIdeChecker(workers=1) as ide:
        assert ide.check(ADD_0_R, VALID).passed
        worker = ide._all[0]
        proc = worker.proc
        assert proc is not None
        uses = worker.uses

        def kill_mid_proof() -> None:
            # Kill only once the statement is loaded (``uses`` counts a started attempt): a
            # kill during loading is retried on a fresh process by design, which would make
            # the check a timeout instead of a crash on a slow machine.
            deadline = time.monotonic() + 60.0
            while worker.uses == uses and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.3)
            os.killpg(proc.pid, signal.SIGKILL)

        killer = threading.Thread(target=kill_mid_proof, daemon=True)
        killer.start()
        res = ide.check(LOOP_PROBLEM, LOOP, timeout_s=30.0)
        killer.join()
        assert res.status == "crash" and not res.passed
        assert ide.check(ADD_0_R, VALID).passed
        assert ide.starts == 2


def test_worker_restarts_after_max_uses() -> None:
    with CoqIdeChecker(workers=1, max_uses=3) as ide:
        for _ in range(7):
            assert ide.check(ADD_0_R, VALID).passed
        assert ide.starts == 3  # started on checks 1, 4 and 7


def test_worker_limits_environment_and_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERIRL_TEST_SECRET_TOKEN", "s3cr3t")
    with CoqIdeChecker(workers=1, memory_mb=2048) as ide:
        assert ide.check(ADD_0_R, VALID).passed
        pid = ide._all[0].proc.pid  # type: ignore[union-attr]
        limits = Path(f"/proc/{pid}/limits").read_text()
        line = next(ln for ln in limits.splitlines() if ln.startswith("Max address space"))
        assert str(2048 * 1024 * 1024) in line
        environ = Path(f"/proc/{pid}/environ").read_bytes()
        assert b"VERIRL_TEST_SECRET_TOKEN" not in environ and b"s3cr3t" not in environ
        cwd = os.readlink(f"/proc/{pid}/cwd")
        assert cwd.startswith(tempfile.gettempdir()) and "verirl-coqide-" in cwd
    assert not Path(f"/proc/{pid}").exists() or _is_zombie(pid)
    assert not Path(cwd).exists()  # the working directory is removed on close


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except FileNotFoundError:
        return True


def test_close_stops_the_pool() -> None:
    ide = CoqIdeChecker(workers=2)
    ide.check_batch([(ADD_0_R, VALID), (ADD_0_R, FAIL3)])
    procs = [w.proc for w in ide._all]
    ide.close()
    for p in procs:
        assert p is None or p.poll() is not None
    with pytest.raises(RuntimeError, match="closed"):
        ide.check(ADD_0_R, VALID)


def test_batch_keeps_order_and_uses_the_pool() -> None:
    proofs = [VALID, FAIL3, "intros n. lia.", "Proof. intros. Qed.", VALID, "admit."] * 2
    items = [(ADD_0_R, p) for p in proofs]
    with CoqIdeChecker(workers=2) as ide:
        batch = ide.check_batch(items)
        single = [ide.check(p, s) for p, s in items]
        assert ide.starts == 2
    assert [r.status for r in batch] == [r.status for r in single]
    assert [r.first_error_index for r in batch] == [r.first_error_index for r in single]
    assert [r.status for r in batch[:6]] == [
        "pass",
        "error",
        "error",
        "incomplete",
        "pass",
        "rejected",
    ]


def test_switching_problems_reuses_the_loaded_prelude() -> None:
    pre = "Require Import Arith Lia."
    p1 = FormalProblem("coq", "p1", "Theorem p1 : forall n, n + 1 = S n.", pre)
    p2 = FormalProblem("coq", "p2", "Theorem p2 : forall n, 2 * n = n + n.", pre)
    with CoqIdeChecker(workers=1) as ide:
        for _ in range(3):
            assert ide.check(p1, "intros. lia.").passed
            assert ide.check(p2, "intros. lia.").passed
            assert ide.check(p2, "intros. reflexivity.").status == "error"
        worker = ide._all[0]
        assert [s for s, _ in worker.loaded][:1] == ["Require Import Arith Lia."]


def test_memory_limit_stops_a_memory_bomb_and_the_pool_recovers() -> None:
    problem = FormalProblem("coq", "t", "Theorem t : True.", "Require Import List.")
    bomb = "Proof. let l := eval vm_compute in (List.repeat 0 100000000) in idtac. exact I. Qed."
    with CoqIdeChecker(workers=1, memory_mb=1000) as ide:
        res = ide.check(problem, bomb, timeout_s=30)
        assert res.status == "crash" and not res.passed
        assert res.first_error_index == 0  # the tactic that was running
        assert ide.check(problem, "exact I.").passed
        assert ide.starts == 2


def test_the_pool_hands_a_check_to_the_worker_that_holds_its_header() -> None:
    nats = "Require Import Arith.\nOpen Scope nat_scope."
    ints = "Require Import ZArith.\nOpen Scope Z_scope."
    n1 = FormalProblem("coq", "n1", "Theorem n1 : forall x : nat, x + 0 = x.", nats)
    n2 = FormalProblem("coq", "n2", "Theorem n2 : forall x : nat, x * 1 = x.", nats)
    z1 = FormalProblem("coq", "z1", "Theorem z1 : forall x : Z, x + 0 = x.", ints)
    with CoqIdeChecker(workers=2) as ide:
        assert ide.check(n1, "intros; ring.").passed
        assert ide.check(z1, "intros; ring.").passed  # the Arith worker is idle: a new one
        before = ide.sentences_loaded
        assert before == 6  # two headers of two sentences, two statements
        # the worker released last holds ZArith; n2 must go to the one that holds Arith
        assert ide.check(n2, "intros; ring.").passed
        assert ide.sentences_loaded == before + 1  # only n2's statement was added
        assert ide.starts == 2
        heads = sorted(tuple(s for s, _ in w.loaded)[:1] for w in ide._all)
        assert heads == [("Require Import Arith.",), ("Require Import ZArith.",)]
