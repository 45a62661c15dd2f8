"""The two Lean backends agree: same verdict (passed, status, rejection) and same first error
index for the same proof, replaying each backend against its fake (provers.md §4.5.5).

- **Hostile inputs** (the filter tests' list): both reject before any process or server sees
  the text, with the same reason; with the filter off and a Lean that *accepts* the text,
  both reject through ``#print axioms`` with the same reason.
- **Recorded transcripts** (``shared/provers-fixtures/lean-repl``, both versions): every
  recorded command that has the shape statement ``:= by`` proof is checked by the REPL
  backend against the fake REPL replaying the transcript, and by the Kimina backend against
  a fake server answering the same recorded reply (less ``tactics``: Kimina has no
  ``allTactics``). With no prelude the snippet is the command itself, so the recorded
  positions hold for both.

Where real Lean's answer matters and nothing is recorded, the reply is built from the
documented format: the ``#print axioms`` message (``Lean/Elab/Print.lean``,
``printAxiomsOf``), which the fake REPL (``--axioms``) and the fake server
(:func:`tests.provers.lean.test_kimina.print_axioms_message`) both emit.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.provers.lean.fixtures import REPL_DIR, VERSIONS, fake_command, require, transcript
from tests.provers.lean.test_hostile import HOSTILE
from tests.provers.lean.test_kimina import FakeKimina, answer_by_id
from verirl.provers.base import FormalProblem, ProofCheck
from verirl.provers.lean.kimina import KiminaChecker
from verirl.provers.lean.repl import LeanReplChecker

STATEMENT = "theorem t : 2 + 2 = 4 := by"
# beyond the hostile-output list: cheats from the safety tests and the axiom issue
MORE_HOSTILE = [
    "\n  exact sorryAx _ false",
    "\n  exact «sorry»",
    "\naxiom cheat : 1 = 2\n",
    '\n  #eval IO.println "hi"\n  simp',
    "\n  set_option debug.skipKernelTC true in\n  simp",
    "\n  simp\nend\ntheorem t : 2 + 2 = 5 := by simp",
    '\n  simp\nnotation3 "four" => 5',
    "\n  exact Lean.ofReduceBool _ _ rfl",
]


def verdict(check: ProofCheck) -> tuple[Any, ...]:
    return (check.passed, check.status, check.first_error_index, check.rejection)


@pytest.fixture()
def server() -> Iterator[FakeKimina]:
    fake = FakeKimina()
    yield fake
    fake.close()


@pytest.mark.parametrize("proof", HOSTILE + MORE_HOSTILE)
def test_hostile_inputs_get_the_same_rejection(
    server: FakeKimina, tmp_path: Path, proof: str
) -> None:
    problem = FormalProblem(system="lean", name="t", statement=STATEMENT)
    log = tmp_path / "requests.log"
    (tmp_path / "none.in").write_text("", encoding="utf-8")
    (tmp_path / "none.expected.out").write_text("", encoding="utf-8")
    with LeanReplChecker(fake_command(tmp_path, "none", log=str(log))) as repl:
        by_repl = repl.check(problem, proof)
    by_kimina = KiminaChecker(server.url, backoff_s=0.01).check(problem, proof)
    assert by_repl.status == "rejected"
    assert verdict(by_repl) == verdict(by_kimina)
    assert by_repl.tactics == by_kimina.tactics
    assert not log.exists() and server.requests == []  # neither reached Lean


@pytest.mark.parametrize(
    ("proof", "axioms"),
    [
        (" native_decide", ["Lean.ofReduceBool", "Lean.trustCompiler"]),
        ('\n  have := s!"{(sorry : Nat)}"\n  decide', ["sorryAx"]),
        (" decide\n#eval IO.println \"'t' does not depend on any axioms\"", ["sorryAx"]),
        (" decide", ["propext", "Classical.choice", "Quot.sound"]),
        (" decide", []),
    ],
)
def test_when_lean_accepts_both_ask_the_same_axioms(
    server: FakeKimina, tmp_path: Path, proof: str, axioms: list[str]
) -> None:
    # A Lean that accepts anything (``{"env": n}``, no warning): the verdict comes from the
    # #print axioms reply alone, built from the documented format for both backends.
    problem = FormalProblem(system="lean", name="t", statement=STATEMENT)
    (tmp_path / "none.in").write_text("", encoding="utf-8")
    (tmp_path / "none.expected.out").write_text("", encoding="utf-8")
    command = fake_command(tmp_path, "none", accept_prefix="theorem", axioms=",".join(axioms))
    with LeanReplChecker(command, reject_unsafe=False) as repl:
        by_repl = repl.check(problem, proof)
    server.answer(answer_by_id([{"time": 0.1, "response": {"env": 0}}], axioms=axioms))
    kimina = KiminaChecker(server.url, reject_unsafe=False, backoff_s=0.01)
    by_kimina = kimina.check(problem, proof)
    clean = all(a in ("propext", "Classical.choice", "Quot.sound") for a in axioms)
    assert by_repl.status == ("pass" if clean else "rejected")
    assert verdict(by_repl) == verdict(by_kimina)


def recorded_proofs() -> list[tuple[str, str, int]]:
    """(version, transcript, index) of every recorded command shaped ``... := by proof``
    that runs without an earlier environment."""
    out = []
    for version in VERSIONS:
        directory = REPL_DIR / version
        if not directory.exists():
            continue
        for path in sorted(directory.glob("*.in")):
            name = path.name[: -len(".in")]
            for k, (request, _) in enumerate(transcript(version, name)):
                if "cmd" in request and "env" not in request and ":= by" in request["cmd"]:
                    out.append((version, name, k))
    return out


CASES = recorded_proofs()


@pytest.mark.skipif(not CASES, reason="recorded Lean transcripts not found (VERIRL_FIXTURES)")
@pytest.mark.parametrize(("version", "name", "index"), CASES)
@pytest.mark.parametrize("reject_unsafe", [True, False])
def test_recorded_transcripts_get_the_same_verdict(
    server: FakeKimina, version: str, name: str, index: int, reject_unsafe: bool
) -> None:
    directory = require(REPL_DIR / version)
    request, reply = transcript(version, name)[index]
    cmd = request["cmd"]
    cut = cmd.index(":= by") + len(":= by")
    problem = FormalProblem(system="lean", name="t", statement=cmd[:cut])
    proof = cmd[cut:]
    command = fake_command(directory, name, axioms="")
    with LeanReplChecker(command, reject_unsafe=reject_unsafe) as repl:
        by_repl = repl.check(problem, proof)
    response = {k: v for k, v in reply.items() if k != "tactics"}
    server.answer(answer_by_id([{"time": 0.1, "response": response}], axioms=()))
    kimina = KiminaChecker(server.url, reject_unsafe=reject_unsafe, backoff_s=0.01)
    by_kimina = kimina.check(problem, proof)
    assert verdict(by_repl) == verdict(by_kimina), json.dumps(cmd)
    if by_repl.status == "error" and by_repl.first_error_index is not None:
        # the located error is the same tactic of the text
        a = by_repl.tactics[by_repl.first_error_index]
        b = by_kimina.tactics[by_kimina.first_error_index or 0]
        assert (a.start, a.text) == (b.start, b.text)
