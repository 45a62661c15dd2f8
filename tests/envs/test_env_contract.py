"""The contract every registered environment keeps (pure, deterministic), checked for all.

``VERIRL_CONTRACT_ON_DEMAND`` adds environments that register on demand (not in the default
catalogue): ``rg`` for every reasoning-gym task (``rg/<task>``), or a comma-separated list
of names; with ``VERIRL_CONTRACT_ON_DEMAND_ONLY=1`` only those are checked. Fixed test
difficulties above an environment's ``max_difficulty`` are clamped to it (reasoning-gym's
tasks have 3-36 levels; verirl's own all reach 30 or more).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.calibration import Budget, timed
from verirl.envs import env_names, get_env


def _on_demand_names() -> list[str]:
    wanted = os.environ.get("VERIRL_CONTRACT_ON_DEMAND", "").strip()
    if not wanted:
        return []
    if wanted == "rg":
        from verirl.integrations.reasoning_gym.tasks import register_reasoning_gym

        return register_reasoning_gym()
    return [n.strip() for n in wanted.split(",") if n.strip() and get_env(n.strip())]


# VERIRL_CONTRACT_ON_DEMAND_ONLY=1: check only the on-demand environments (the default
# catalogue is checked by the ordinary run)
ALL = ([] if os.environ.get("VERIRL_CONTRACT_ON_DEMAND_ONLY") else env_names()) + (
    _on_demand_names()
)
SEEDS = (0, 1, 2)


def _levels(name: str, difficulties: Sequence[int]) -> list[int]:
    """``difficulties`` clamped to the environment's ``max_difficulty`` (deduplicated)."""
    top = get_env(name).max_difficulty
    return sorted({min(d, top) for d in difficulties})


def _dump(name: str, difficulty: int, seed: int) -> str:
    return json.dumps(get_env(name).generate(difficulty, seed).to_dict(), sort_keys=True)


@pytest.fixture(scope="module")
def other_process_problems() -> dict[str, str]:
    """Every environment's problems generated in a fresh interpreter with another hash seed."""
    code = (
        "import json, sys; from verirl.envs import get_env\n"
        "def dump(n, d, s):\n"
        "    try:\n"
        "        return json.dumps(get_env(n).generate(d, s).to_dict(), sort_keys=True)\n"
        "    except Exception as exc:  # reported by the test of that environment only\n"
        "        return f'generation failed: {type(exc).__name__}: {exc}'\n"
        "out = {f'{n}/{d}/{s}': dump(n, d, s) for n in json.loads(sys.argv[1])"
        " for d in sorted({min(d, get_env(n).max_difficulty) for d in (0, 3, 7)})"
        " for s in (0, 11)}\n"
        "print(json.dumps(out))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    res = subprocess.run(
        [sys.executable, "-c", code, json.dumps(ALL)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=600,
    )
    return json.loads(res.stdout)


def test_registry_has_names_and_families() -> None:
    for name in ALL:
        env = get_env(name)
        assert env.name == name
        assert env.family and env.difficulty_scales


@pytest.mark.parametrize("name", ALL)
def test_deterministic_across_processes(name: str, other_process_problems: dict[str, str]) -> None:
    for d in _levels(name, (0, 3, 7)):
        for s in (0, 11):
            assert _dump(name, d, s) == other_process_problems[f"{name}/{d}/{s}"]


def _skip_without_prover(name: str) -> None:
    """Skip (with the reason) when ``name`` needs a proof assistant that is not installed:
    a missing Lean REPL / Coq is a configuration error, not an environment bug."""
    env = get_env(name)
    if env.prover is None:
        return
    try:
        env.verify(env.generate(0, 0), env.answer_format.render(env.solve(env.generate(0, 0))))
    except Exception as exc:
        pytest.skip(f"{env.prover} checker unavailable: {type(exc).__name__}: {exc}"[:300])


@pytest.mark.parametrize("name", ALL)
def test_reference_solution_verifies_and_corruptions_do_not(name: str) -> None:
    _skip_without_prover(name)
    env = get_env(name)
    rng = random.Random(name)
    for difficulty in _levels(name, range(11)):
        for seed in SEEDS:
            problem = env.generate(difficulty, seed)
            json.dumps(problem.to_dict())  # data is JSON-serialisable
            solution = env.solve(problem)
            verdict = env.verify(problem, f"Reasoning...\n{env.answer_format.render(solution)}")
            assert verdict.correct and verdict.reward == 1.0, (difficulty, seed, solution, verdict)
            wrong = env.corrupt(problem, solution, rng)
            bad = env.verify(problem, env.answer_format.render(wrong))
            assert not bad.correct and bad.reward < 1.0, (difficulty, seed, wrong, bad)
            assert -1.0 <= bad.reward <= 1.0
            if len(problem.answer) >= 4:
                assert problem.answer not in bad.detail, "feedback must not reveal the answer"


@pytest.mark.parametrize("name", ALL)
def test_generated_answers_verify(name: str) -> None:
    """The generator's stored answer agrees with the verifier's own derivation (generators
    often use closed formulas or planted solutions, verifiers recurrences or search)."""
    _skip_without_prover(name)
    env = get_env(name)
    for difficulty in _levels(name, (0, 1, 2, 5, 9, 14, 20, 30)):
        for seed in range(4):
            problem = env.generate(difficulty, seed)
            assert env.verify(problem, env.answer_format.render(problem.answer)).correct, problem


# A generation may cost GENERATION_UNITS reference workloads (about 2 s on a 2-core CI machine,
# where the reference takes 5 ms), timed in this run: the bound scales with the machine
# (tests/calibration.py).
GENERATION_UNITS = 400.0


@pytest.fixture(scope="module")
def generation_budget() -> Budget:
    return Budget(GENERATION_UNITS * len(SEEDS))


@pytest.mark.parametrize("name", ALL)
def test_generation_at_difficulty_30_is_bounded(name: str, generation_budget: Budget) -> None:
    env = get_env(name)

    def generate_all() -> None:
        for seed in SEEDS:
            env.generate(min(30, env.max_difficulty), seed)

    over = generation_budget.overrun(generate_all, timed(generate_all))
    assert over is None, f"{over / len(SEEDS):.0f} reference workloads a problem"


@pytest.mark.parametrize("name", ALL)
def test_size_grows_with_difficulty(name: str) -> None:
    env = get_env(name)

    def mean_size(d: int) -> float:
        return sum(env.size(env.generate(d, s)) for s in range(8)) / 8

    top = min(30, env.max_difficulty)
    assert mean_size(0) < mean_size(top)
    assert mean_size(0) <= mean_size(min(10, top))


_FUZZ = st.one_of(
    st.just(""),
    st.text(max_size=300),
    st.text(alphabet="\\boxed{}<>/answer0123456789-, ", max_size=400),
    st.builds(lambda s: "\\boxed{" + s, st.text(max_size=50)),
    st.builds(lambda s: "\\boxed{" + s + "}", st.text(max_size=200)),
    st.builds(lambda s, n: ("\\boxed{" + s + "} ") * n, st.text(max_size=20), st.integers(1, 50)),
    st.builds(lambda n: "\\boxed{" + "9" * n + "}", st.integers(1, 20_000)),
    st.builds(lambda s: "<answer>" + s + "</answer>", st.text(max_size=200)),
    st.builds(lambda n: "{" * n + "\\boxed{" + "}" * n, st.integers(0, 500)),
)


@pytest.mark.parametrize("name", ALL)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(output=_FUZZ, difficulty=st.integers(0, 6), seed=st.integers(0, 3))
def test_verifier_never_raises_on_fuzzed_output(
    name: str, output: str, difficulty: int, seed: int
) -> None:
    env = get_env(name)
    verdict = env.verify(env.generate(min(difficulty, env.max_difficulty), seed), output)
    assert -1.0 <= verdict.reward <= 1.0
    assert isinstance(verdict.correct, bool)


# ---- answer forms, distinctness, growth, uniqueness ---------------------------------------
FORM_DIFFICULTIES = (0, 3, 8)
FORM_SEEDS = (0, 1)


@pytest.mark.parametrize("name", ALL)
def test_surface_forms_accepted_and_near_misses_rejected(name: str) -> None:
    """Every equivalent rendering the environment declares is accepted (a correct answer
    scored -1 is a wrong gradient), every near miss rejected (a separator never merges
    numbers, a near-equivalent expression is not equivalent)."""
    _skip_without_prover(name)
    env = get_env(name)
    for difficulty in _levels(name, FORM_DIFFICULTIES):
        for seed in FORM_SEEDS:
            problem = env.generate(difficulty, seed)
            forms = env.surface_forms(problem)
            assert forms, "surface_forms must give at least the plain answer"
            for form in forms:
                verdict = env.verify(problem, env.answer_format.render(form))
                assert verdict.correct, (difficulty, seed, form, verdict)
            for miss in env.near_misses(problem):
                verdict = env.verify(problem, env.answer_format.render(miss))
                assert not verdict.correct, (difficulty, seed, miss, verdict)
                assert -1.0 <= verdict.reward < 1.0


# Environments whose generators give fewer than half of 200 seeds distinct at d = 0 or 4.
# Each must either widen its generator or document its small space with problem_space();
# strict xfail, so a fixed one must leave this list. Empty since every environment does one
# or the other; a generator found small later is listed here until it is fixed.
DISTINCT_BACKLOG: frozenset[str] = frozenset()


def _distinct_prompts(name: str, difficulty: int, seeds: int, enough: int) -> int:
    env, seen = get_env(name), set()
    for seed in range(seeds):
        seen.add(env.generate(difficulty, seed).prompt)
        if len(seen) >= enough:
            break
    return len(seen)


def _required_distinct(name: str, difficulty: int, seeds: int) -> int:
    """Half of the seeds, or 60% of a small problem space the environment documents."""
    space = get_env(name).problem_space(difficulty)
    return seeds // 2 if space is None else min(seeds // 2, max(1, int(0.6 * space)))


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="small problem space"))
        if n in DISTINCT_BACKLOG
        else n
        for n in ALL
    ],
)
def test_generated_problems_are_distinct(name: str) -> None:
    """At least half of 200 seeds give distinct prompts (or the environment documents a
    small problem space with :meth:`problem_space`); stops early once enough are seen."""
    for difficulty in _levels(name, (0, 4)):
        need = _required_distinct(name, difficulty, 200)
        got = _distinct_prompts(name, difficulty, 200, need)
        assert got >= need, f"d={difficulty}: {got} distinct prompts in 200 seeds (need {need})"


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        # the backlog's generators are known to be small at some level; not strict here,
        # since a level other than 0 and 4 may be wide enough
        pytest.param(n, marks=pytest.mark.xfail(strict=False, reason="small problem space"))
        if n in DISTINCT_BACKLOG
        else n
        for n in ALL
    ],
)
def test_generated_problems_are_distinct_at_every_level(name: str) -> None:
    for difficulty in _levels(name, (1, 2, 3, 5, 6, 8, 10, 15, 20)):
        need = _required_distinct(name, difficulty, 200)
        got = _distinct_prompts(name, difficulty, 200, need)
        assert got >= need, f"d={difficulty}: {got} distinct prompts in 200 seeds (need {need})"


UNIQUE = [n for n in ALL if get_env(n).unique_answer]


@pytest.mark.parametrize("name", UNIQUE)
def test_promised_unique_answer_is_unique(name: str) -> None:
    """Where the prompt promises one answer ("determine who is ..."), there is exactly one."""
    env = get_env(name)
    for difficulty in _levels(name, (0, 1, 2, 3, 5)):
        for seed in range(25):
            problem = env.generate(difficulty, seed)
            count = env.count_answers(problem, limit=2)
            assert count == 1, (difficulty, seed, count)
