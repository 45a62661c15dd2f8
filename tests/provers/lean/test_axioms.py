"""``#print axioms`` after a passing Lean proof (verirl.provers.lean.axioms), through both
backends, and the statement that is closed being the statement that was asked.

No public transcript holds a REPL or Kimina reply to ``#print axioms``, so every such reply
here is built from Lean's documented message format (``Lean/Elab/Print.lean``,
``printAxiomsOf``: ``'<name>' depends on axioms: [<a>, ...]`` or ``'<name>' does not depend
on any axioms``, one ``info`` message at the ``#print`` token). The fake REPL and the fake
Kimina server *accept* the hostile proofs below (``{"env": n}``, no sorry warning), so the
axiom check is what rejects them: a stronger position than real Lean, which would also warn
about a visible ``sorry``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.provers.lean.fixtures import fake_command
from tests.provers.lean.test_kimina import FakeKimina, answer_by_id, print_axioms_message
from verirl.provers.base import FormalProblem
from verirl.provers.lean.axioms import (
    DEFAULT_ALLOWED_AXIOMS,
    allowed_axioms_for,
    axioms_rejection,
    declared_name,
    parse_axioms_reply,
    prelude_axioms,
    theorem_constant,
    validate_allowed_axioms,
)
from verirl.provers.lean.kimina import KiminaChecker
from verirl.provers.lean.repl import LeanReplChecker
from verirl.provers.lean.reply import LeanMessage, LeanPos
from verirl.provers.lean.safety import lean_proof_violation, locate_lean_proof
from verirl.provers.settings import LeanSettings

WRITE = '#eval IO.FS.writeFile "pwned" "x"'


def lean_problem(statement: str, prelude: str = "") -> FormalProblem:
    return FormalProblem(system="lean", name="t", statement=statement, prelude=prelude)


def info(data: str, line: int = 1) -> LeanMessage:
    return LeanMessage("info", data, LeanPos(line, 0), LeanPos(line, 10))


def axioms_text(name: str, axioms: list[str]) -> str:
    if not axioms:
        return f"'{name}' does not depend on any axioms"
    return f"'{name}' depends on axioms: [{', '.join(axioms)}]"


# ---- reading Lean's reply ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("'foo' does not depend on any axioms", ("foo", ())),
        (
            "'Foo.bar' depends on axioms: [propext, Classical.choice, Quot.sound]",
            ("Foo.bar", ("propext", "Classical.choice", "Quot.sound")),
        ),
        # a prime inside the quoted name; the quotes are not escaped by Lean
        (
            "'Scope.fromBytes'_append' depends on axioms: [propext]",
            ("Scope.fromBytes'_append", ("propext",)),
        ),
        # a long list wraps (Lean pretty-prints the List Name)
        (
            "'t' depends on axioms: [propext,\n  sorryAx,\n  Classical.choice]",
            ("t", ("propext", "sorryAx", "Classical.choice")),
        ),
        (
            "'«my thm»' depends on axioms: [Lean.ofReduceBool, Lean.trustCompiler]",
            ("«my thm»", ("Lean.ofReduceBool", "Lean.trustCompiler")),
        ),
        ("  'x' does not depend on any axioms\n", ("x", ())),
    ],
)
def test_reply_format_is_read(text: str, expected: tuple[str, tuple[str, ...]]) -> None:
    assert parse_axioms_reply(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "'t' depends on axioms: []",
        "'t' depends on axioms: [propext] and more",
        "'t' depends on axioms: [propext, #eval]",
        "t depends on axioms: [propext]",
        "'t' does not depend on any axioms, trust me",
        "'' does not depend on any axioms",
        "declaration uses 'sorry'",
    ],
)
def test_other_texts_are_not_a_reply(text: str) -> None:
    assert parse_axioms_reply(text) is None


def test_rejection_rules() -> None:
    allowed = frozenset(DEFAULT_ALLOWED_AXIOMS)
    ok = [info(axioms_text("t", ["propext", "Quot.sound"]))]
    assert axioms_rejection(ok, "t", allowed) is None
    assert axioms_rejection([info(axioms_text("t", []))], "t", allowed) is None
    for bad in (["sorryAx"], ["propext", "Lean.ofReduceBool", "Lean.trustCompiler"], ["cheat"]):
        reason = axioms_rejection([info(axioms_text("t", bad))], "t", allowed)
        assert reason is not None and bad[-1] in reason and "allow-list" in reason
    # no reply, a reply about another constant only, two claims, an error: not confirmed
    assert "no reply" in (axioms_rejection([], "t", allowed) or "")
    assert "no reply" in (axioms_rejection([info(axioms_text("X.t", []))], "t", allowed) or "")
    two = [info(axioms_text("t", [])), info(axioms_text("t", ["sorryAx"]))]
    assert "2 replies" in (axioms_rejection(two, "t", allowed) or "")
    error = LeanMessage("error", "unknown constant 't'", LeanPos(1, 0))
    assert "failed" in (axioms_rejection([error, *ok], "t", allowed) or "")
    warning_claim = [LeanMessage("warning", axioms_text("t", []), LeanPos(1, 0))]
    assert axioms_rejection(warning_claim, "t", allowed) is not None  # only `info` counts
    assert "no usable constant name" in (axioms_rejection(ok, None, allowed) or "")
    # names compare component-wise, «» quotes removed
    quoted = [info(axioms_text("Foo.«bar»", []))]
    assert axioms_rejection(quoted, "Foo.bar", allowed) is None


# ---- the constant the statement declares --------------------------------------------------


@pytest.mark.parametrize(
    ("statement", "name"),
    [
        ("theorem foo (n : ℕ) : n + 0 = n := by", "foo"),
        ("lemma Nat.foo' : True := by", "Nat.foo'"),
        ("@[simp] protected theorem A.b : True := by", "A.b"),
        ("@[simp]\nnoncomputable def f : Nat := by", "f"),
        ("/-- doc: theorem fake -/\ntheorem real : True := by", "real"),
        ("theorem «my thm» : True := by", "«my thm»"),
        ("theorem foo.{u} (α : Sort u) : α → α := by", "foo"),
        ("instance (priority := low) instFoo : Inhabited Nat := by", "instFoo"),
        ("example : True := by", None),
        ("instance : Inhabited Nat := by", None),
        ("private theorem hidden : True := by", None),
        ("-- theorem nothing", None),
    ],
)
def test_declared_name(statement: str, name: str | None) -> None:
    assert declared_name(statement) == name


def test_theorem_constant_follows_the_prelude_namespace() -> None:
    prelude = (
        "import Mathlib\nnamespace A.B\ndef x := 1\nend B\nsection\nnamespace C\n"
        "axiom ax : True\nend C\nend\n-- namespace Fake\n"
    )
    stmt = "theorem t : True := by"
    assert theorem_constant(lean_problem(stmt, prelude)) == "A.t"
    assert theorem_constant(lean_problem("theorem _root_.t : True := by", prelude)) == "t"
    assert theorem_constant(lean_problem(stmt, "namespace A\nend A\n")) == "t"
    assert prelude_axioms(prelude) == {"A.C.ax"}
    allowed = allowed_axioms_for(
        lean_problem(stmt, prelude + "axiom sorryAx' : False"), ["propext"]
    )
    assert allowed == {"propext", "A.C.ax", "A.sorryAx'"}
    assert "sorryAx" not in allowed_axioms_for(lean_problem(stmt, "axiom sorryAx : False"), [])


def test_never_allowed_axioms_are_a_configuration_error() -> None:
    for name in ("sorryAx", "Lean.ofReduceBool", "Lean.trustCompiler"):
        with pytest.raises(ValueError, match="never be allowed"):
            validate_allowed_axioms(["propext", name])
    with pytest.raises(ValueError, match="not a Lean name"):
        validate_allowed_axioms(["a b"])
    assert LeanSettings().allowed_axioms == list(DEFAULT_ALLOWED_AXIOMS)
    assert LeanSettings(allowed_axioms=["propext"]).allowed_axioms == ["propext"]


# ---- through the REPL backend, with a fake REPL that accepts every proof -------------------


def write_transcript(directory: Path, pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """A transcript we wrote (synthetic: replies built from the documented formats)."""
    (directory / "session.in").write_text(
        "\n\n".join(json.dumps(q, ensure_ascii=False) for q, _ in pairs) + "\n", encoding="utf-8"
    )
    (directory / "session.expected.out").write_text(
        "\n\n".join(json.dumps(r, ensure_ascii=False, indent=1) for _, r in pairs) + "\n\n",
        encoding="utf-8",
    )


def axioms_reply(name: str, axioms: list[str], env: int = 2) -> dict[str, Any]:
    return {"messages": [{**_message(axioms_text(name, axioms), 1)}], "env": env}


def _message(data: str, line: int, severity: str = "info") -> dict[str, Any]:
    return {
        "severity": severity,
        "pos": {"line": line, "column": 0},
        "endPos": {"line": line, "column": 5},
        "data": data,
    }


# (statement, proof, the axioms Lean reports) for proofs a fake REPL accepts.
CHEATS = {
    "native_decide": (
        "theorem t_native : 2 + 2 = 4 := by",
        " native_decide",
        ["Lean.ofReduceBool"],
    ),
    "native_decide_head": (
        "theorem t_native2 : 2 + 2 = 4 := by",
        " native_decide",
        ["Lean.ofReduceBool", "Lean.trustCompiler"],  # Lean ≥ 4.2x adds trustCompiler
    ),
    "interpolated_sorry": (
        "theorem t_sorry : True := by",
        '\n  have := s!"{(sorry : Nat)}"\n  trivial',
        ["sorryAx"],
    ),
    "sorry_with_propext": ("theorem t_mixed : True := by", " exact sorry", ["propext", "sorryAx"]),
}


@pytest.fixture()
def cheat_dir(tmp_path: Path) -> Path:
    pairs = []
    for statement, proof, axioms in CHEATS.values():
        name = declared_name(statement)
        assert name is not None
        pairs.append(({"cmd": statement + proof, "allTactics": True}, {"env": 1}))
        pairs.append(({"cmd": f"#print axioms {name}", "env": 1}, axioms_reply(name, axioms)))
    write_transcript(tmp_path, pairs)
    return tmp_path


@pytest.mark.parametrize("case", sorted(CHEATS))
def test_repl_axiom_check_rejects_what_lean_accepted(cheat_dir: Path, case: str) -> None:
    statement, proof, axioms = CHEATS[case]
    assert lean_proof_violation(proof) is not None  # the filter stops it first ...
    log = cheat_dir / "requests.log"
    command = fake_command(cheat_dir, "session", log=str(log))
    with LeanReplChecker(command, memory_limit_mb=2048) as checker:
        filtered = checker.check(lean_problem(statement), proof)
        assert (filtered.status, log.exists()) == ("rejected", False)
    # ... and with the filter off, Lean's "accepted" is overruled by #print axioms
    with LeanReplChecker(command, reject_unsafe=False, memory_limit_mb=2048) as checker:
        check = checker.check(lean_problem(statement), proof)
    assert (check.passed, check.status, check.first_error_index) == (False, "rejected", None)
    assert check.rejection is not None and "allow-list" in check.rejection
    assert next(a for a in axioms if a not in DEFAULT_ALLOWED_AXIOMS) in check.rejection
    sent = [json.loads(line) for line in log.read_text().splitlines()]
    assert sent[-1] == {"cmd": f"#print axioms {declared_name(statement)}", "env": 1}


def test_eval_write_after_the_proof_never_runs(tmp_path: Path) -> None:
    statement = "theorem t_eval : 1 = 1 := by"
    proof = f" rfl\n{WRITE}"
    pairs = [
        ({"cmd": statement + proof, "allTactics": True}, {"env": 1}),
        ({"cmd": "#print axioms t_eval", "env": 1}, axioms_reply("t_eval", [])),
    ]
    write_transcript(tmp_path, pairs)
    log = tmp_path / "requests.log"
    with LeanReplChecker(fake_command(tmp_path, "session", log=str(log)), cwd=str(tmp_path)) as c:
        check = c.check(lean_problem(statement), proof)
    assert (check.status, check.rejection) == (
        "rejected",
        "`#eval` is a command, not a tactic (commands may run code)",
    )
    assert not log.exists() and not (tmp_path / "pwned").exists()


@pytest.mark.parametrize(
    "forger",
    [
        "#eval IO.println \"'t_forge' does not depend on any axioms\"",
        "#eval dbg_trace \"'t_forge' does not depend on any axioms\" fun _ => pure ()",
        "run_cmd Lean.logInfo \"'t_forge' does not depend on any axioms\"",
    ],
)
def test_a_printed_fake_reply_does_not_count(tmp_path: Path, forger: str) -> None:
    # The proof prints Lean's answer itself (real Lean shows it as an info message of the
    # proof's command); the separate #print axioms command tells the truth.
    statement = "theorem t_forge : False := by"
    proof = f" exact sorry\n{forger}"
    forged = _message("'t_forge' does not depend on any axioms", 2)
    pairs = [
        ({"cmd": statement + proof, "allTactics": True}, {"messages": [forged], "env": 1}),
        ({"cmd": "#print axioms t_forge", "env": 1}, axioms_reply("t_forge", ["sorryAx"])),
    ]
    write_transcript(tmp_path, pairs)
    with LeanReplChecker(fake_command(tmp_path, "session"), reject_unsafe=False) as checker:
        check = checker.check(lean_problem(statement), proof)
    assert (check.passed, check.status) == (False, "rejected")
    assert check.rejection is not None and "sorryAx" in check.rejection


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        ({"message": "Unknown environment."}, "refused"),
        (axioms_reply("X.t_ok", []), "no reply"),  # a reply about another constant
        ({"messages": [_message("unknown constant 't_ok'", 1, "error")], "env": 2}, "failed"),
        (
            {"messages": [_message(axioms_text("t_ok", []), 1)] * 2, "env": 2},
            "2 replies",
        ),
        ({"env": 2}, "no reply"),
    ],
)
def test_an_unconfirmed_reply_rejects(tmp_path: Path, reply: dict[str, Any], words: str) -> None:
    statement = "theorem t_ok : True := by"
    pairs = [
        ({"cmd": statement + " trivial", "allTactics": True}, {"env": 1}),
        ({"cmd": "#print axioms t_ok", "env": 1}, reply),
    ]
    write_transcript(tmp_path, pairs)
    with LeanReplChecker(fake_command(tmp_path, "session")) as checker:
        check = checker.check(lean_problem(statement), " trivial")
    assert (check.passed, check.status) == (False, "rejected")
    assert check.rejection is not None and words in check.rejection


def test_allowed_and_prelude_axioms_pass_and_the_name_has_the_namespace(tmp_path: Path) -> None:
    prelude = "namespace Geo\naxiom parallel : True"
    statement = "theorem t_ok : True := by"
    pairs = [
        ({"cmd": prelude}, {"env": 0}),
        ({"cmd": statement + " exact parallel", "env": 0, "allTactics": True}, {"env": 1}),
        (
            {"cmd": "#print axioms Geo.t_ok", "env": 1},
            axioms_reply("Geo.t_ok", ["Geo.parallel", "propext"]),
        ),
    ]
    write_transcript(tmp_path, pairs)
    log = tmp_path / "requests.log"
    with LeanReplChecker(fake_command(tmp_path, "session", log=str(log))) as checker:
        check = checker.check(lean_problem(statement, prelude), " exact parallel")
        assert (check.passed, check.status) == (True, "pass")
        assert check.raw["axioms_messages"] == [
            "'Geo.t_ok' depends on axioms: [Geo.parallel, propext]"
        ]
    pairs[2] = (pairs[2][0], axioms_reply("Geo.t_ok", ["Geo.parallel"]))
    write_transcript(tmp_path, pairs)
    with LeanReplChecker(fake_command(tmp_path, "session"), allowed_axioms=()) as strict:
        only_prelude = strict.check(lean_problem(statement, prelude), " exact parallel")
    assert only_prelude.status == "pass"  # the prelude's own axiom needs no allow-list entry
    pairs[2] = (pairs[2][0], axioms_reply("Geo.t_ok", ["Geo.parallel", "Classical.choice"]))
    write_transcript(tmp_path, pairs)
    with LeanReplChecker(fake_command(tmp_path, "session"), allowed_axioms=["propext"]) as strict:
        refused = strict.check(lean_problem(statement, prelude), " exact parallel")
    assert refused.status == "rejected" and "Classical.choice" in (refused.rejection or "")


def test_anonymous_statement_fails_closed_without_asking(tmp_path: Path) -> None:
    pairs = [({"cmd": "example : True := by trivial", "allTactics": True}, {"env": 1})]
    write_transcript(tmp_path, pairs)
    log = tmp_path / "requests.log"
    with LeanReplChecker(fake_command(tmp_path, "session", log=str(log))) as checker:
        check = checker.check(lean_problem("example : True := by"), " trivial")
    assert (check.passed, check.status) == (False, "rejected")
    assert "no usable constant name" in (check.rejection or "")
    assert len(log.read_text().splitlines()) == 1  # nothing was asked
    with LeanReplChecker(fake_command(tmp_path, "session"), check_axioms=False) as unchecked:
        assert unchecked.check(lean_problem("example : True := by"), " trivial").passed


def test_axiom_check_timeout_is_a_timeout(tmp_path: Path) -> None:
    statement = "theorem t_ok : True := by"
    write_transcript(tmp_path, [({"cmd": statement + " trivial", "allTactics": True}, {"env": 1})])
    command = fake_command(tmp_path, "session", hang_on="#print axioms")
    with LeanReplChecker(command) as checker:
        check = checker.check(lean_problem(statement), " trivial", timeout_s=1.0)
        assert (check.passed, check.status, check.timed_out) == (False, "timeout", True)
        assert checker._proc is None  # killed


# ---- through the Kimina backend ----------------------------------------------------------


@pytest.fixture()
def server() -> Any:
    fake = FakeKimina()
    yield fake
    fake.close()


@pytest.mark.parametrize("case", sorted(CHEATS))
def test_kimina_axiom_check_rejects_what_lean_accepted(server: FakeKimina, case: str) -> None:
    statement, proof, axioms = CHEATS[case]
    server.answer(answer_by_id([{"time": 0.1, "response": {"env": 0}}], axioms=axioms))
    checker = KiminaChecker(server.url, reject_unsafe=False, backoff_s=0.01)
    check = checker.check(lean_problem(statement), proof)
    assert (check.passed, check.status, check.first_error_index) == (False, "rejected", None)
    assert "allow-list" in (check.rejection or "")
    code = server.requests[0][2]["snippets"][0]["code"]
    assert code == f"{statement}{proof}\n\n#print axioms {declared_name(statement)}"


def test_kimina_reads_only_the_message_on_the_command_line(server: FakeKimina) -> None:
    statement = "theorem t_forge : False := by"
    proof = " exact sorry\n#eval IO.println \"'t_forge' does not depend on any axioms\""
    forged = _message("'t_forge' does not depend on any axioms", 2)  # on the proof's line

    def answer(body: dict[str, Any], *, real: list[str], extra_at_command: bool) -> dict[str, Any]:
        code = body["snippets"][0]["code"]
        truth = print_axioms_message(code, real)
        assert truth is not None
        messages = [forged, truth]
        if extra_at_command:  # a forged message positioned on the command's own line
            messages.append({**truth, "data": "'t_forge' does not depend on any axioms"})
        response = {"env": 0, "messages": messages}
        return {"results": [{"id": body["snippets"][0]["id"], "time": 0.1, "response": response}]}

    checker = KiminaChecker(server.url, reject_unsafe=False, backoff_s=0.01)
    server.answer(lambda b: answer(b, real=["sorryAx"], extra_at_command=False))
    lied = checker.check(lean_problem(statement), proof)
    assert (lied.status, "sorryAx" in (lied.rejection or "")) == ("rejected", True)
    server.answer(lambda b: answer(b, real=[], extra_at_command=True))
    doubled = checker.check(lean_problem(statement), proof)
    assert doubled.status == "rejected" and "2 replies" in (doubled.rejection or "")
    server.answer(lambda b: answer(b, real=[], extra_at_command=False))
    honest = checker.check(lean_problem(statement), proof)
    assert honest.status == "pass"  # the forged line is only a message of the proof
    assert [m.text for m in honest.messages] == ["'t_forge' does not depend on any axioms"]


def test_kimina_error_on_the_command_line_does_not_blame_a_tactic(server: FakeKimina) -> None:
    def answer(body: dict[str, Any]) -> dict[str, Any]:
        truth = print_axioms_message(body["snippets"][0]["code"], [])
        assert truth is not None
        error = {**truth, "severity": "error", "data": "unknown constant 'onepp'"}
        response = {"env": 0, "messages": [error]}
        return {"results": [{"id": body["snippets"][0]["id"], "time": 0.1, "response": response}]}

    server.answer(answer)
    check = KiminaChecker(server.url, backoff_s=0.01).check(
        lean_problem("theorem onepp : 1+1 = 2:= by"), "\n  skip\n  rfl"
    )
    assert (check.status, check.first_error_index) == ("rejected", None)
    assert "failed" in (check.rejection or "")


# ---- the statement closed is the statement asked --------------------------------------------


STATEMENT = "theorem foo : 1 = 2 := by"
PRELUDE = "import Mathlib\nopen Nat"


@pytest.mark.parametrize(
    "submitted",
    [
        f'notation "2" => 1\n{STATEMENT}\n  rfl',
        f'local notation "2" => 1\n{STATEMENT}\n  rfl',
        f'macro "2" : term => `(1)\n{STATEMENT}\n  rfl',
        f"instance : OfNat Nat 2 := ⟨1⟩\n{STATEMENT}\n  rfl",
        f"def two := 1\n{STATEMENT}\n  rfl",
        f"open Nat in\n{STATEMENT}\n  rfl",  # even a prelude-looking prefix
        f"set_option autoImplicit true\n{STATEMENT}\n  rfl",
        f"namespace X\n{STATEMENT}\n  rfl",
    ],
)
def test_nothing_the_model_writes_precedes_the_statement(submitted: str) -> None:
    loc = locate_lean_proof(submitted, STATEMENT, PRELUDE)
    assert loc.rejection is not None and "before the theorem statement" in loc.rejection


@pytest.mark.parametrize(
    "tail",
    [
        "theorem foo : 1 = 1 := rfl",  # a redefinition of the name
        "namespace X\ntheorem foo : True := trivial\nend X",
        "end",  # closing the prelude's scope
        'notation3 "two" => 1',
        "variable? [Group G]",
        "alias bar := foo",
        "add_decl_doc foo",
        "unif_hint (n : Nat) where n =?= 2 ⊢ 1 =?= n",
        "simproc reduceFoo (foo _) := fun _ => pure .continue",
        "seal foo",
        "unseal foo",
        "irreducible_def two : Nat := 1",
        "recall foo : 1 = 2",
        "nonrec theorem bar : True := trivial",
        'binder_predicate x " > " y:term => `($x > $y)',
        "grind_pattern foo => 1",
    ],
)
def test_commands_after_the_proof_are_rejected(tail: str) -> None:
    assert lean_proof_violation(f"\n  simp\n{tail}") is not None, tail


def test_the_snippet_is_prelude_statement_proof_on_both_backends(tmp_path: Path) -> None:
    # A full snippet repeating the prelude: the repetition is dropped, so what Lean sees is
    # exactly the problem's prelude, then the asked statement, then the model's proof.
    statement = "theorem t_ok : True := by"
    prelude = "import Mathlib"
    submitted = f"import Mathlib\n\n-- my proof\n{statement}\n  trivial"
    pairs = [
        ({"cmd": prelude}, {"env": 0}),
        ({"cmd": f"{statement}\n  trivial", "env": 0, "allTactics": True}, {"env": 1}),
    ]
    write_transcript(tmp_path, pairs)
    log = tmp_path / "requests.log"
    with LeanReplChecker(fake_command(tmp_path, "session", log=str(log), axioms="")) as checker:
        assert checker.check(lean_problem(statement, prelude), submitted).passed
    sent = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["cmd"] for r in sent] == [prelude, f"{statement}\n  trivial", "#print axioms t_ok"]
    server = FakeKimina()
    try:
        server.answer(answer_by_id([{"time": 0.1, "response": {"env": 0}}]))
        check = KiminaChecker(server.url, backoff_s=0.01).check(
            lean_problem(statement, prelude), submitted
        )
    finally:
        server.close()
    assert check.passed
    assert server.requests[0][2]["snippets"][0]["code"] == (
        f"{prelude}\n\n{statement}\n  trivial\n\n#print axioms t_ok"
    )
