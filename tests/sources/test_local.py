"""The ``local`` problem source: the run's own curriculum hands out problems and the
verification stage on the run's executor checks them in this process; the proof checkers of the
curriculum's environments start when the source is built (unless it only evaluates); a source
is chosen by ``envs.source`` from :data:`~verirl.sources.PROBLEM_SOURCES`."""

from __future__ import annotations

import pytest

from verirl.config import load_gym_config
from verirl.envs import get_env
from verirl.errors import UnknownNameError
from verirl.provers.settings import Provers
from verirl.sources import PROBLEM_SOURCES, build_source
from verirl.verification.executors import InlineExecutor

PLUGIN = "run.plugins=[tests.plugin_registries]"  # a Coq checker that checks nothing


def test_the_local_source_draws_from_the_run_s_curriculum_and_verifies_here() -> None:
    gym = load_gym_config(None, ["curriculum.environments=[addition]", "run.seed=3"])
    with InlineExecutor() as executor, Provers(gym.provers) as provers:
        source = build_source(gym, executor, provers)
        problems = source.tasks.sample(3)
        assert [(p.env, p.difficulty) for p in problems] == [("addition", 0)] * 3
        env = get_env("addition")
        right = env.answer_format.render(env.solve(problems[0]))
        verdicts = source.verifier.verify(problems[:2], [right, "no answer"])
        assert [(v.reward, v.correct) for v in verdicts if v is not None] == [
            (1.0, True),
            (-1.0, False),
        ]
        assert provers.started == []  # arithmetic needs no proof checker


@pytest.mark.parametrize(("start", "started"), [(True, ["coq"]), (False, [])])
def test_the_proof_checkers_start_with_the_source_unless_it_only_evaluates(
    start: bool, started: list[str]
) -> None:
    gym = load_gym_config(
        None, [PLUGIN, "curriculum.environments=[coq_proofs]", "provers.coq.backend=test_counting"]
    )
    with InlineExecutor() as executor, Provers(gym.provers) as provers:
        build_source(gym, executor, provers, start_checkers=start)
        assert provers.started == started


def test_sources_are_registered_by_name() -> None:
    assert {"local", "server"} <= set(PROBLEM_SOURCES.names())
    with pytest.raises(UnknownNameError, match=r"unknown problem source 'nowhere'; known: local"):
        PROBLEM_SOURCES.get("nowhere")
