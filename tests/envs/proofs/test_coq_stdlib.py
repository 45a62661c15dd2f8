"""The ``coq_stdlib`` environment: on demand, split by file through the seed, difficulty = the
library proof's length, verdicts with tactic steps (live Coq for the verdicts)."""

from __future__ import annotations

import random

import pytest

from tests.provers.coq.marks import needs_coq
from verirl.curriculum import EVAL_SEED_BASE, eval_seed
from verirl.envs import env_names, get_env, is_env
from verirl.envs.proofs import coq_stdlib
from verirl.errors import UserInputError
from verirl.provers.coq.install import coq_version, stdlib_sources
from verirl.provers.coq.stdlib import file_split


def _available() -> str | None:
    if stdlib_sources() is None:
        return "the Coq stdlib sources are not installed"
    try:
        from verirl.provers.coq.stdlib_manifest import load_manifest

        load_manifest()
    except UserInputError as exc:
        return str(exc)
    return None


pytestmark = pytest.mark.skipif(_available() is not None, reason=str(_available()))


def test_it_is_on_demand_not_in_the_default_catalogue() -> None:
    assert "coq_stdlib" not in env_names()
    assert is_env("coq_stdlib") and get_env("coq_stdlib").name == "coq_stdlib"
    assert coq_stdlib.EVAL_SEED_BASE == EVAL_SEED_BASE


def test_training_seeds_draw_training_files_and_held_out_seeds_held_out_files() -> None:
    env = get_env("coq_stdlib")
    train = [env.generate(d, s) for d in (0, 2) for s in range(20)]
    held = [env.generate(d, eval_seed(k)) for d in (0, 2) for k in range(20)]
    assert {p.data["split"] for p in train} == {"train"}
    assert {p.data["split"] for p in held} == {"heldout"}
    assert all(file_split(p.data["file"]) == p.data["split"] for p in train + held)
    assert not {p.data["file"] for p in train} & {p.data["file"] for p in held}
    again = env.generate(2, 7)
    assert again.to_dict() == env.generate(2, 7).to_dict()
    assert "prelude" not in again.data and again.data["coq"] == coq_version()


def test_difficulty_is_the_library_proof_s_length() -> None:
    env = get_env("coq_stdlib")
    for d in (0, 1, 4):
        assert {env.generate(d, s).data["tactics"] for s in range(15)} == {d + 1}
    assert min(env.generate(40, s).data["tactics"] for s in range(15)) >= coq_stdlib.TOP_TACTICS
    problem = env.generate(3, 1)
    assert env.size(problem) == 4.0
    assert problem.data["file"] in problem.prompt and problem.data["statement"] in problem.prompt


@pytest.mark.coq
@needs_coq
def test_the_library_proof_verifies_a_broken_one_and_a_self_proof_do_not() -> None:
    env = get_env("coq_stdlib")
    rng = random.Random(0)
    for problem in (env.generate(0, 3), env.generate(2, 5), env.generate(1, eval_seed(4))):
        good = env.verify(problem, env.solve(problem))
        assert good.correct and good.steps, problem.data["theorem"]
        bad = env.verify(problem, env.corrupt(problem, env.solve(problem), rng))
        assert not bad.correct and bad.first_failed_step is not None
        cheat = env.verify(
            problem, f"```coq\nProof.\n  exact {problem.data['theorem']}.\nQed.\n```"
        )
        # the lemma itself is not there: the name is unknown, or it is another module's lemma
        # of that name with another statement
        assert not cheat.correct and cheat.first_failed_step == 0
        assert "not found" in cheat.detail or "has type" in cheat.detail
