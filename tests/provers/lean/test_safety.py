"""The Lean safety filter: one test per kind of cheat, plus proofs that must pass it."""

from __future__ import annotations

import pytest

from verirl.provers.lean.safety import lean_proof_violation, locate_lean_proof

STATEMENT = "theorem add_zero' (n : ℕ) : n + 0 = n := by"
PRELUDE = "import Mathlib\nimport Aesop\nset_option maxHeartbeats 400000\nopen BigOperators Real"


def rejected(proof: str, *reason_words: str) -> None:
    reason = lean_proof_violation(proof)
    assert reason is not None, f"not rejected: {proof!r}"
    for word in reason_words:
        assert word in reason, f"{reason!r} does not mention {word!r}"


@pytest.mark.parametrize(
    "proof",
    [
        "\n  intro x\n  simp [Nat.add_comm] at *\n  omega",
        "\n  -- we could write sorry here, but a comment is harmless\n  simp",
        '\n  have h : "admit" = "admit" := rfl\n  exact h',  # inside a string
        "\n  nlinarith [sq_nonneg (a - b), sq_nonneg (a + b)]",
        "\n  open Real in\n  simp [exp_pos]",
        "\n  set_option maxHeartbeats 400000 in\n  norm_num",
        "\n  set_option trace.Meta.Tactic.simp true in\n  simp",
        "\n  exact fun h' => h'.elim",
        "\n  rcases h with ⟨x, hx⟩\n  exact isOpen_univ",
        "\n  · simp\n  · decide",
    ],
)
def test_ordinary_proofs_pass(proof: str) -> None:
    assert lean_proof_violation(proof) is None


def test_sorry() -> None:
    rejected("\n  intro x\n  sorry", "sorry")


def test_sorry_quoted_with_guillemets() -> None:
    rejected("\n  exact «sorry»", "sorry")


def test_sorry_ax() -> None:
    rejected("\n  exact sorryAx _ false", "sorry")


def test_admit() -> None:
    rejected("\n  admit", "admit")


def test_axiom() -> None:
    rejected("\naxiom cheat : 1 = 2\n", "axiom")


def test_eval() -> None:
    rejected('\n  #eval IO.println "hi"\n  simp', "#eval")


def test_exit_command() -> None:
    rejected("\n  simp\n#exit", "#exit")


def test_run_cmd() -> None:
    rejected("\n  run_tac do pure ()", "run_tac")


def test_by_elab() -> None:
    rejected("\n  exact by_elab return default", "by_elab")


def test_unsafe() -> None:
    rejected("\n  exact unsafeCast ()", "unsafe")


def test_implemented_by() -> None:
    rejected("\n  exact (f : @[implemented_by g] Nat)", "implemented_by")


def test_extern() -> None:
    rejected('\n  exact (@[extern "c_fn"] x)', "extern")


def test_native_decide() -> None:
    rejected("\n  native_decide", "compiler")


def test_io() -> None:
    rejected('\n  exact (IO.FS.readFile "/etc/passwd")', "IO")


def test_lean_namespace() -> None:
    rejected("\n  exact Lean.Elab.Tactic.evalTactic", "Lean")


def test_root_lean_namespace() -> None:
    rejected("\n  exact _root_.Lean.Meta.mkFreshExprMVar", "Lean")


def test_open_lean_in() -> None:
    rejected("\n  open Lean Elab Tactic in\n  simp", "open Lean")


def test_bare_open() -> None:
    rejected("\n  simp\nopen Lean", "open")


def test_set_option_max_heartbeats_zero() -> None:
    rejected("\n  set_option maxHeartbeats 0 in\n  simp", "disables")


def test_set_option_above_cap() -> None:
    rejected("\n  set_option maxRecDepth 100000 in\n  simp", "cap")


def test_set_option_skip_kernel() -> None:
    rejected("\n  set_option debug.skipKernelTC true in\n  simp", "kernel")


def test_set_option_unknown() -> None:
    rejected("\n  set_option autoImplicit true in\n  simp", "not allowed")


def test_include_str() -> None:
    rejected('\n  exact include_str "secret.txt"', "files")


def test_new_declaration_after_the_proof() -> None:
    rejected("\n  simp\n\ntheorem other : False := by simp", "command keyword")


def test_macro_definition() -> None:
    rejected('\n  simp\nmacro "cheat" : tactic => `(tactic| simp)', "command keyword")


def test_attribute_change() -> None:
    rejected("\n  attribute [local simp] Nat.add_comm in\n  simp", "command keyword")


# ---- the statement -------------------------------------------------------------------------


def test_proof_alone_starts_at_zero() -> None:
    loc = locate_lean_proof("\n  simp", STATEMENT, PRELUDE)
    assert (loc.proof_start, loc.statement_start, loc.rejection) == (0, None, None)


def test_full_snippet_with_repeated_prelude_is_accepted() -> None:
    submitted = f"import Mathlib\nimport Aesop\n\n-- my proof\n{STATEMENT}\n  simp"
    loc = locate_lean_proof(submitted, STATEMENT, PRELUDE)
    assert loc.rejection is None
    assert loc.statement_start == submitted.index("theorem")
    assert submitted[loc.proof_start :] == "\n  simp"


def test_changed_statement_is_rejected() -> None:
    changed = "theorem add_zero' (n : ℕ) : n + 0 = n ∨ True := by\n  simp"
    loc = locate_lean_proof(changed, STATEMENT, PRELUDE)
    assert loc.statement_start is None
    assert loc.rejection is not None and "statement" in loc.rejection


def test_text_before_the_statement_is_rejected() -> None:
    sneaky = f"axiom cheat : False\n{STATEMENT}\n  exact cheat.elim"
    loc = locate_lean_proof(sneaky, STATEMENT, PRELUDE)
    assert loc.rejection is not None and "before the theorem statement" in loc.rejection


def test_statement_inside_a_comment_does_not_count() -> None:
    loc = locate_lean_proof(f"/- {STATEMENT} -/\n  simp", STATEMENT, PRELUDE)
    assert loc.statement_start is None and loc.rejection is None
