"""``coq_implication_chains``: generated theorems that keep growing, checked by real Coq."""

from __future__ import annotations

import random

from tests.provers.coq_marks import needs_coq
from verirl.envs import get_env

ENV = "coq_implication_chains"


def test_statements_are_new_per_seed_and_grow_with_difficulty() -> None:
    env = get_env(ENV)
    assert len({env.generate(3, s).data["statement"] for s in range(40)}) >= 35
    sizes = [sum(env.size(env.generate(d, s)) for s in range(6)) / 6 for d in (0, 5, 20, 50)]
    assert sizes == sorted(sizes) and sizes[-1] > 5 * sizes[0]  # no plateau (coq_proofs has one)


@needs_coq
def test_reference_proofs_pass_and_broken_ones_fail() -> None:
    env = get_env(ENV)
    rng = random.Random(0)
    for d in (0, 2, 7, 30):
        for seed in (0, 1):
            problem = env.generate(d, seed)
            good = env.verify(problem, problem.answer)
            assert good.correct and good.reward == 1.0, (d, seed, good)
            assert good.steps  # tactic spans for process credit
            assert not env.verify(problem, env.corrupt(problem, problem.answer, rng)).correct
            # skipping the chain: the start atom h0 does not prove the goal
            intros = problem.data["proof"].splitlines()[1].strip()
            wrong = f"```coq\nProof.\n  {intros}\n  exact h0.\nQed.\n```"
            assert not env.verify(problem, wrong).correct


@needs_coq
def test_any_accepted_proof_counts_not_only_the_reference() -> None:
    env = get_env(ENV)
    problem = env.generate(4, 3)
    assert env.verify(problem, "```coq\nProof.\n  tauto.\nQed.\n```").correct
    assert not env.verify(problem, "```coq\nProof.\n  admit.\nAdmitted.\n```").correct
