"""The ``lean_proofs`` environment: the bundled bank and the ``.lean`` loader, output format,
the safety filter before any checker call, verdicts from recorded REPL and Kimina transcripts
process-credit input, and a live REPL when ``$VERIRL_LEAN_REPL`` is set."""

from __future__ import annotations

import itertools
import json
import os
import random
import shlex
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, decoders, models, pre_tokenizers

from tests.envs.proofs.checkers import FixedProvers
from tests.provers.lean.fixtures import KIMINA_DIR, REPL_DIR, VERSIONS, fake_command, require
from tests.provers.lean.test_kimina import FakeKimina, answer_by_id
from verirl.credit import CREDIT
from verirl.credit.base import CreditInput
from verirl.credit.spans import step_token_starts
from verirl.envs import get_env
from verirl.envs.proofs.lean import LeanProofs, extract_lean_proof
from verirl.errors import UserInputError
from verirl.provers.bank import bundled_bank
from verirl.provers.base import FormalProblem, ProofCheck
from verirl.provers.lean.kimina import URL_ENV_VAR
from verirl.provers.lean.repl import REPL_ENV_VAR
from verirl.provers.lean.reply import LeanBackend, unchecked_result
from verirl.provers.lean.safety import lean_proof_violation
from verirl.provers.lean.text import split_lean_proof
from verirl.provers.lean.theorems import (
    LeanTheorem,
    LeanTheoremFileError,
    load_lean_file,
    parse_lean_theorems,
)
from verirl.provers.settings import LeanSettings, Provers, ProversConfig
from verirl.types import Problem, Rollout

ENV: LeanProofs = get_env("lean_proofs")  # type: ignore[assignment]


def problem_for(statement: str, prelude: str = "", name: str = "t") -> Problem:
    """A lean_proofs problem for a statement of a recorded transcript (not a bundled one)."""
    data = {"system": "lean4", "theorem": name, "statement": statement, "prelude": prelude}
    return Problem(env="lean_proofs", difficulty=0, seed=0, prompt="", answer="", data=data)


def logged(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.fixture()
def no_lean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REPL_ENV_VAR, raising=False)
    monkeypatch.delenv(URL_ENV_VAR, raising=False)


def repl_provers(version: str, *names: str, log: Path | None = None) -> Provers:
    """Provers built from config whose REPL is the fake process replaying ``names``."""
    directory = require(REPL_DIR / version)
    options = {"log": str(log)} if log else {}
    # `#print axioms` answered in Lean's documented format (no recording holds one)
    command = fake_command(directory, *names, axioms="", **options)
    return Provers(ProversConfig(lean=LeanSettings(command=command, memory_mb=2048)))


# ---- the bundled bank and the loader --------------------------------------------------------
def test_bank_loads_with_grades_and_reference_proofs() -> None:
    theorems = bundled_bank("lean").theorems
    assert len(theorems) >= 40
    assert len({t.name for t in theorems}) == len(theorems)
    groups = bundled_bank("lean").by_grade()
    assert list(groups) == list(range(7))  # grades 0..6, none missing
    prelude = theorems[0].prelude
    assert "def dbl" in prelude and "import" not in prelude  # core Lean only
    assert "grade:" not in prelude and "/-" not in prelude
    for t in theorems:
        assert t.proof is not None and t.proof.strip(), t.name
        assert t.statement.startswith("theorem ") and t.statement.endswith(":= by"), t.name
        assert t.prelude == prelude  # header mode: every theorem is independent
        assert lean_proof_violation(t.proof) is None, t.name  # the filter lets them through
        assert "sorry" not in t.proof and "native_decide" not in t.proof


def test_bank_difficulty_grows_with_the_grade() -> None:
    means = [
        sum(len(split_lean_proof(t.proof or "")) for t in group) / len(group)
        for group in bundled_bank("lean").by_grade().values()
    ]
    assert means[0] == 1.0  # grade 0: one tactic each
    assert all(a <= b for a, b in itertools.pairwise(means)), means
    assert means[-1] >= 4.5


USER_FILE = """\
/- My exercises. -/
def twice (n : Nat) : Nat := n + n

-- grade: 2
@[simp] theorem twice_zero : twice 0 = 0 := by
  rfl

theorem helper (n : Nat) : twice n = 2 * n := by
  unfold twice
  omega

theorem term_mode (n : Nat) : twice n = n + n := rfl

-- grade: 4
theorem twice_le (a b : Nat)
    (h : a ≤ b) : twice a ≤ twice b := by
  sorry

private theorem twice_mono : ∀ a b : Nat, a ≤ b → twice a ≤ twice b := by sorry
"""


def test_loader_reads_a_users_file(tmp_path: Path) -> None:
    path = tmp_path / "mine.lean"
    path.write_text(USER_FILE, encoding="utf-8")
    theorems = load_lean_file(path)
    assert [t.name for t in theorems] == ["twice_zero", "helper", "twice_le", "twice_mono"]
    zero, helper, le, mono = theorems
    assert (zero.grade, zero.proof, zero.line) == (2, "  rfl", 5)
    assert zero.statement == "@[simp] theorem twice_zero : twice 0 = 0 := by"
    assert helper.grade is None and helper.proof == "  unfold twice\n  omega"
    assert le.statement == "theorem twice_le (a b : Nat)\n    (h : a ≤ b) : twice a ≤ twice b := by"
    assert (le.proof, le.grade, le.line) == (None, 4, 15)  # a sorry stub
    assert mono.proof is None and mono.statement.startswith("private theorem twice_mono")
    # "preceding" prelude: everything before, the term-mode theorem included
    assert le.prelude.startswith("def twice") and "theorem term_mode" in le.prelude
    assert zero.prelude == "def twice (n : Nat) : Nat := n + n\n"
    assert all(t.source == str(path) for t in theorems)
    assert le.problem() == FormalProblem("lean", "twice_le", le.statement, le.prelude)
    assert [t.name for t in load_lean_file(path, only_stubs=True)] == ["twice_le", "twice_mono"]
    header = load_lean_file(path, prelude_mode="header")
    assert {t.prelude for t in header} == {zero.prelude}


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("def f := 1\n\ntheorem : 1 = 1 := by\n  rfl\n", 3, "without a name"),
        ("theorem a : 1 = 1 := by\n  rfl\n\ntheorem b : 2 = 2\n", 4, "no `:=`"),
        ("theorem a : 1 = 1 := by\n\ntheorem b : 2 = 2 := by rfl\n", 1, "is empty"),
        ("-- grade: easy\ntheorem a : 1 = 1 := by\n  rfl\n", 1, "whole number"),
        ("theorem a : 1 = 1 := by\n  rfl\n/- unclosed\ntheorem b : 2 = 2 := by rfl\n", 3, "never"),
        ("theorem a : 1 = 1 := by\n  rfl\ntheorem a : 1 = 1 := by\n  decide\n", 3, "line 1"),
        ("def f := 1\n-- no theorem here\n", 1, "no `theorem"),
    ],
)
def test_loader_rejects_malformed_files(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = tmp_path / "bad.lean"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LeanTheoremFileError, match=message) as info:
        load_lean_file(path)
    assert str(info.value).startswith(f"{path}:{line}: ")
    assert isinstance(info.value, UserInputError)


def test_loader_names_an_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(LeanTheoremFileError, match="cannot read"):
        load_lean_file(tmp_path / "missing.lean")


def test_bank_text_round_trips_through_the_parser() -> None:
    # a reference proof re-parsed as a file of its own gives the same statement and proof
    for t in bundled_bank("lean").theorems[::7]:
        (again,) = parse_lean_theorems(f"{t.statement}\n{t.proof}\n")
        assert (again.name, again.statement, again.proof) == (t.name, t.statement, t.proof)


# ---- generation -------------------------------------------------------------------------
def test_problems_are_deterministic_and_graded() -> None:
    groups = bundled_bank("lean").by_grade()
    top = max(groups)
    for d in (0, 2, top):
        p = ENV.generate(d, 3)
        assert p == ENV.generate(d, 3)
        assert p.data["grade"] == d and p.data["theorem"] in {t.name for t in groups[d]}
        assert p.data["statement"] in p.prompt and "```lean" in p.prompt
        assert "def dbl" in p.prompt  # the prelude is shown
    assert ENV.generate(top + 3, 0).data["grade"] == top
    assert len({ENV.generate(0, s).data["theorem"] for s in range(40)}) > 5
    code = (
        "import json; from verirl.envs import get_env; e = get_env('lean_proofs'); "
        "print(json.dumps([e.generate(d, s).to_dict() for d in (0, 4, 9) for s in (0, 5)]))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "4321"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout
    here = [ENV.generate(d, s).to_dict() for d in (0, 4, 9) for s in (0, 5)]
    assert json.loads(out) == json.loads(json.dumps(here))


def test_solve_size_and_corrupt() -> None:
    p = ENV.generate(5, 0)
    solution = ENV.solve(p)
    assert solution == p.answer and solution.startswith("```lean\n  ")
    text, _ = extract_lean_proof(solution) or ("", 0)
    assert ENV.size(p) == len(split_lean_proof(text)) >= 4
    assert ENV.size(ENV.generate(0, 0)) == 1.0
    for seed in range(6):
        wrong = ENV.corrupt(p, solution, random.Random(seed))
        proof, _ = extract_lean_proof(wrong) or ("", 0)
        tactics = [t.text for t in split_lean_proof(proof)]
        assert "fail" in tactics and len(tactics) == ENV.size(p) + 1
        assert lean_proof_violation(proof) is None  # reaches Lean, and fails there


# ---- extraction ---------------------------------------------------------------------------
STATEMENT = "theorem t (n : Nat) : n + 0 = n := by"
PRELUDE = "def dbl : Nat → Nat\n  | 0 => 0\n  | n + 1 => dbl n + 2\n"


@pytest.mark.parametrize(
    ("out", "expected"),
    [
        ("```lean\n  simp\n```", "\n  simp"),
        ("try:\n```lean\n  omega\n```\nbetter:\n```lean4\n  simp\n```\n", "\n  simp"),
        ("```\n  rfl\n```", "\n  rfl"),
        ("```python\nprint(1)\n```", None),
        ("```lean\n  intro h\n  sim", "\n  intro h\n  sim"),  # truncated generation
        ("```lean\n  -- only a comment\n```", None),
        ("no block: simp", None),
        (f"```lean\n{STATEMENT}\n  simp\n```", "\n  simp"),
        ("```lean\ntheorem t (n : Nat) :\n  n + 0 = n := by simp\n```", " simp"),
        (f"```lean\n-- restated\n{PRELUDE}\n{STATEMENT}\n  rfl\n```", "\n  rfl"),
        # another statement is not skipped (the filter then rejects `theorem`)
        (
            "```lean\ntheorem t (n : Nat) : n = n := by rfl\n```",
            "\ntheorem t (n : Nat) : n = n := by rfl",
        ),
    ],
)
def test_extraction(out: str, expected: str | None) -> None:
    got = extract_lean_proof(out, STATEMENT, PRELUDE)
    assert (got[0] if got else None) == expected
    if got:
        assert out[got[1] : got[1] + len(got[0])] == got[0]


# ---- verdicts without Lean (garbage and cheats: tests/envs/proofs/test_no_checker.py) ------
@pytest.mark.usefixtures("no_lean")
def test_missing_lean_is_a_configuration_error_naming_the_fields() -> None:
    env = LeanProofs()
    p = env.generate(0, 0)
    with pytest.raises(UserInputError, match=r"provers\.lean\.command") as info:
        env.verify(p, env.solve(p))
    assert "provers.lean.url" in str(info.value)
    kimina = Provers(ProversConfig(lean=LeanSettings(backend="kimina")))
    with pytest.raises(UserInputError, match=r"provers\.lean\.url"):
        env.verify_batch([p], [env.solve(p)], kimina)


class TimeoutChecker(LeanBackend):
    """Answers every proof it is sent with a timeout over the layout spans, and counts them."""

    name = "timeout"
    tactic_source = "layout"
    unsolved_goals = "skip_at_by"
    split_semicolons = False
    split_bullets = True
    reject_unsafe = True

    def __init__(self) -> None:
        self.sent: list[str] = []

    def check(self, problem: FormalProblem, proof: str, *, timeout_s: float = 15.0) -> ProofCheck:
        plan = self._plan(problem, proof)
        assert plan.rejection is None, "the environment must filter before the checker"
        self.sent.append(proof)
        return unchecked_result(plan, "timeout", backend=self.name, detail="no answer")

    def check_batch(
        self, items: Sequence[tuple[FormalProblem, str]], *, timeout_s: float = 15.0
    ) -> list[ProofCheck]:
        return [self.check(p, proof, timeout_s=timeout_s) for p, proof in items]

    def close(self) -> None:
        pass


_PIECES = [*"  \n\t\u00b7.;:=()[]{}\u27e8\u27e9|-/\"'`#@\u00ab\u00bb", "by", "sorry", "simp", "```"]
_LEANISH = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)
_OUTPUTS = st.one_of(
    st.text(max_size=200),
    st.builds(lambda a, b: f"{a}```lean\n{b}", st.text(max_size=30), _LEANISH),
    st.builds(lambda b, c: f"```lean\n{b}\n```{c}", _LEANISH, st.text(max_size=30)),
    st.builds(lambda b: f"```\n{STATEMENT}{b}\n```", _LEANISH),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(output=_OUTPUTS)
def test_verifier_never_raises_and_spans_stay_in_the_output(output: str) -> None:
    checker = TimeoutChecker()
    (v,) = ENV.verify_batch([problem_for(STATEMENT, PRELUDE)], [output], FixedProvers(checker))
    assert v.reward == 0.0 and not v.correct
    assert v.extra["status"] in {"format", "rejected", "incomplete", "timeout"}
    assert all(0 <= s.start < s.end <= len(output) for s in v.steps)
    assert list(v.steps) == sorted(v.steps, key=lambda s: s.start)
    assert (v.extra["status"] == "timeout") == bool(checker.sent)


# ---- verdicts from recorded transcripts --------------------------------------------------------
@pytest.mark.parametrize("version", VERSIONS)
def test_recorded_correct_proof_passes(version: str, tmp_path: Path) -> None:
    # all_tactics: `def f : Nat := by have t := 37; exact t`, with Lean's own tactic ranges
    log = tmp_path / "requests.log"
    p = problem_for("def f : Nat := by")
    out = "Use a local value.\n```lean\ndef f : Nat := by have t := 37; exact t\n```"
    with repl_provers(version, "all_tactics", log=log) as provers:
        (v,) = ENV.verify_batch([p], [out], provers)
    assert (v.reward, v.correct, v.extra["status"]) == (1.0, True, "pass")
    assert v.extra["backend"] == "lean-repl" and v.first_failed_step is None
    assert [out[s.start : s.end] for s in v.steps] == ["have t := 37", "exact t"]
    assert [r["cmd"] for r in logged(log)] == [
        "def f : Nat := by have t := 37; exact t",
        "#print axioms f",
    ]


@pytest.mark.parametrize("version", VERSIONS)
def test_recorded_wrong_proof_fails_at_the_first_failing_tactic(
    version: str, tmp_path: Path
) -> None:
    # incomplete (2nd command): `{ apply Nat.succ }` leaves the `pos` case open; Lean reports
    # it at the closing brace, inside the second tactic. A batch with a correct proof and a
    # cheat between them: only the two proofs reach the REPL.
    log = tmp_path / "requests.log"
    wrong_p = problem_for("def f (x : Bool) : Nat := by")
    wrong = "Case on x.\n```lean\n  by_cases x\n  { apply Nat.succ }\n```"
    ok_p = problem_for("def f : Nat := by")
    ok = "```lean\ndef f : Nat := by have t := 37; exact t\n```"
    cheat = "```lean\n  by_cases x\n  all_goals sorry\n```"
    with repl_provers(version, "all_tactics", "incomplete", log=log) as provers:
        verdicts = ENV.verify_batch([wrong_p, wrong_p, ok_p], [wrong, cheat, ok], provers)
    v, rejected, passed = verdicts
    assert (v.reward, v.correct, v.extra["status"]) == (0.0, False, "error")
    assert [wrong[s.start : s.end] for s in v.steps] == ["by_cases x", "{ apply Nat.succ }"]
    assert v.first_failed_step == 1
    assert "tactic 2" in v.detail and "unsolved goals" in v.detail
    assert rejected.extra["status"] == "rejected" and "sorry" in rejected.detail
    assert passed.correct
    sent = [r["cmd"] for r in logged(log)]
    assert sent == [
        "def f (x : Bool) : Nat := by\n  by_cases x\n  { apply Nat.succ }",
        "def f : Nat := by have t := 37; exact t",
        "#print axioms f",
    ]


def test_recorded_correct_proof_passes_through_kimina() -> None:
    recorded = json.loads((require(KIMINA_DIR) / "check_infotree_original.json").read_text())
    server = FakeKimina()
    try:
        server.answer(answer_by_id(recorded["expected_response_ignoring_time_env"]["results"]))
        config = ProversConfig(lean=LeanSettings(backend="kimina", url=server.url, timeout_s=20))
        p = problem_for("theorem onepp : 1+1 = 2:= by", name="onepp")
        out = "```lean\ntheorem onepp : 1+1 = 2:= by rfl\n```"
        with Provers(config) as provers:
            (v,) = ENV.verify_batch([p], [out], provers)
    finally:
        server.close()
    assert (v.correct, v.extra["status"], v.extra["backend"]) == (True, "pass", "kimina")
    assert [out[s.start : s.end] for s in v.steps] == ["rfl"]  # from the info tree
    _, _, body = server.requests[0]
    code = recorded["request"]["snippets"][0]["code"]
    assert body["snippets"][0]["code"] == code + "\n\n#print axioms onepp"
    assert body["timeout"] == 20


# ---- process credit ---------------------------------------------------------------------------
def byte_tokenizer() -> Tokenizer:
    """Byte-level BPE without merges: a character's token index is its UTF-8 byte offset."""
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    tok = Tokenizer(models.BPE(vocab={ch: i for i, ch in enumerate(sorted(alphabet))}, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return tok


@pytest.mark.parametrize("version", VERSIONS)
def test_process_credit_input_from_lean_verdicts(version: str) -> None:
    p = problem_for("def f (x : Bool) : Nat := by")
    wrong = "Case on x ⊢.\n```lean\n  by_cases x\n  { apply Nat.succ }\n```"
    cheat = "```lean\n  by_cases x\n  sorry\n```"
    with repl_provers(version, "incomplete") as provers:
        verdicts = ENV.verify_batch([p, p], [wrong, cheat], provers)
    tok = byte_tokenizer()
    rollouts, starts = [], []
    for text, verdict in zip([wrong, cheat], verdicts, strict=True):
        ids = tuple(tok.encode(text).ids)
        rollouts.append(
            Rollout(
                problem=p,
                group=0,
                prompt_ids=(1,),
                response_ids=ids,
                logprobs=(0.0,) * len(ids),
                text=text,
                finish_reason="stop",
                verdict=verdict,
            )
        )
        # what the trainer does (trainer.py): Verdict.steps → first-token indices
        starts.append(step_token_starts(text, ids, verdict.steps, tok))
    # byte tokens: the index of a tactic's first token is its byte offset (⊢ is 3 bytes)
    expected = [len(wrong[: s.start].encode()) for s in verdicts[0].steps]
    assert starts[0] == expected and len(starts[1]) == 2
    inp = CreditInput.from_rollouts(rollouts, starts)
    assert inp.first_failed_step == (1, None)
    assert inp.status == ("error", "rejected")
    adv = CREDIT.get("process")(inp)
    # an all-fail group: no outcome signal; d1 before the first error, d2 from it on, and
    # d2 on every tactic of the rejected proof
    nonzero = {(i, t): round(float(adv[i, t]), 4) for i, t in torch.nonzero(adv).tolist()}
    assert nonzero == {
        (0, starts[0][0]): -0.05,
        (0, starts[0][1]): -0.1,
        (1, starts[1][0]): -0.1,
        (1, starts[1][1]): -0.1,
    }


# ---- a real Lean REPL, when there is one ---------------------------------------------------------
def _live_command() -> list[str] | None:
    configured = os.environ.get(REPL_ENV_VAR, "").strip()
    return shlex.split(configured) if configured else None


@pytest.fixture()
def live_provers() -> Iterator[Provers]:
    command = _live_command()
    if command is None:
        pytest.skip(
            f"no Lean REPL: set {REPL_ENV_VAR} to a leanprover-community/repl command line "
            "(e.g. 'lake -d /opt/lean-project env /opt/repl/.lake/build/bin/repl') to check "
            "every bundled reference proof with Lean"
        )
    config = ProversConfig(lean=LeanSettings(command=command, timeout_s=60))
    with Provers(config) as provers:
        yield provers


def bundled_problem(theorem: LeanTheorem) -> Problem:
    """The problem the environment makes for a bundled theorem (without searching seeds)."""
    data = {
        "system": "lean4",
        "theorem": theorem.name,
        "statement": theorem.statement,
        "prelude": theorem.prelude,
        "grade": theorem.grade,
    }
    answer = f"```lean\n{theorem.proof}\n```"
    return Problem("lean_proofs", theorem.grade or 0, 0, "", answer, data)


def test_bundled_problem_matches_generation() -> None:
    p = ENV.generate(4, 2)
    assert bundled_problem(bundled_bank("lean").get(p.data["theorem"])).data == p.data
    assert ENV.solve(p) == p.answer


def test_live_repl_accepts_every_bundled_proof_and_locates_corruptions(
    live_provers: Provers,
) -> None:
    problems = [bundled_problem(t) for t in bundled_bank("lean").theorems]
    verdicts = ENV.verify_batch(problems, [ENV.solve(p) for p in problems], live_provers)
    rejected = {
        p.data["theorem"]: v.detail
        for p, v in zip(problems, verdicts, strict=True)
        if not v.correct
    }
    assert rejected == {}
    rng = random.Random(0)
    wrong = [ENV.corrupt(p, ENV.solve(p), rng) for p in problems]
    bad = ENV.verify_batch(problems, wrong, live_provers)
    for p, out, v in zip(problems, wrong, bad, strict=True):
        assert not v.correct and v.extra["status"] == "error", (p.data["theorem"], v.detail)
        assert v.first_failed_step is not None
        step = v.steps[v.first_failed_step]
        assert out[step.start : step.end] == "fail", (p.data["theorem"], v.detail)
