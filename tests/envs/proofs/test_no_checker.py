"""Both proof environments (``coq_proofs``, ``lean_proofs``) give garbage and cheats their
verdict before any proof checker is called — no answer or no code block is a format verdict,
``admit`` / ``sorry`` / an axiom / a command smuggled into the proof is rejected with the
reason named — and a verdict never shows the reference proof."""

from __future__ import annotations

import pytest

from tests.envs.proofs.checkers import ExplodingChecker, FixedProvers
from verirl.envs import get_env

CASES = [
    ("coq_proofs", "", "format", ""),
    ("coq_proofs", "\\boxed{42}", "format", ""),
    ("coq_proofs", "```coq\nProof. intros. admit. Qed.\n```", "rejected", "admit"),
    ("coq_proofs", "```coq\nProof. Admitted.\n```", "rejected", "Admitted"),
    ("coq_proofs", "```coq\nQed. Theorem x : True. Proof. exact I. Qed.\n```", "rejected", ""),
    ("coq_proofs", "```coq\nProof. Qed.\n```", "incomplete", ""),
    ("coq_proofs", "```coq\nProof. intros. (* never closed\n```", "rejected", ""),
    ("coq_proofs", "```coq\n" + "idtac. " * 1000 + "\n```", "rejected", ""),
    ("lean_proofs", "", "format", ""),
    ("lean_proofs", "\\boxed{42}", "format", ""),
    ("lean_proofs", "```lean\n\n```", "format", ""),
    ("lean_proofs", "x" * 300_000, "format", ""),
    ("lean_proofs", "```lean\n  sorry\n```", "rejected", "sorry"),
    ("lean_proofs", "```lean\n  induction n\n  sorry\n```", "rejected", "sorry"),
    ("lean_proofs", "```lean\n  intro n\n  native_decide\n```", "rejected", "native_decide"),
    ("lean_proofs", '```lean\n  #eval IO.println "hello"\n  simp\n```', "rejected", "#eval"),
    ("lean_proofs", "```lean\n  run_tac IO.Process.exit 0\n```", "rejected", "run_tac"),
    ("lean_proofs", "```lean\n  admit\n```", "rejected", "admit"),
    ("lean_proofs", "```lean\n  simp\naxiom cheat : False\n```", "rejected", "axiom"),
    (
        "lean_proofs",
        "```lean\ntheorem t (n : Nat) : True := by trivial\n```",
        "rejected",
        "command keyword",
    ),
    (
        "lean_proofs",
        "```lean\n  set_option maxHeartbeats 0 in\n  simp\n```",
        "rejected",
        "maxHeartbeats",
    ),
]


@pytest.mark.parametrize(("env", "output", "status", "reason"), CASES, ids=lambda x: str(x)[:24])
def test_garbage_and_cheats_get_their_verdict_without_a_proof_checker(
    env: str, output: str, status: str, reason: str
) -> None:
    e = get_env(env)
    problem = e.generate(2, 0)
    text = "Plan.\n" + output
    (v,) = e.verify_batch([problem], [text], FixedProvers(ExplodingChecker()))
    assert (v.reward, v.correct, v.extra["status"]) == (0.0, False, status)
    assert v.detail and reason in v.detail and v.first_failed_step is None
    assert problem.answer not in v.detail  # the reference proof stays hidden
    assert all(0 <= s.start < s.end <= len(text) for s in v.steps)
