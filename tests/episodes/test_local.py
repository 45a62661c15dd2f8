"""The episode API the adapters share (:mod:`verirl.episodes`) over in-process episodes
(:mod:`verirl.episodes.local`): a session resets to a problem, steps take the model's output
and end with the environment's verdict, which the curriculum counts once; what cannot be sent
ends the episode as a wrong-format verdict; a reset names its problem whole or not at all."""

from __future__ import annotations

import pytest

from verirl.curriculum import AdaptiveDifficulty
from verirl.envs import WRONG_FORMAT, get_env
from verirl.episodes import MAX_OUTPUT_CHARS, explicit_task, tool_call_reply
from verirl.episodes.local import LocalEpisodes
from verirl.errors import UserInputError
from verirl.tools import get_format


def test_a_reset_names_its_problem_whole_or_not_at_all() -> None:
    assert explicit_task(None, None, None) is None
    assert explicit_task("addition", 2, 7) == ("addition", 2, 7)
    with pytest.raises(UserInputError, match="missing: difficulty, seed"):
        explicit_task("addition", None, None)
    with pytest.raises(UserInputError, match="seed must be an integer >= 0"):
        explicit_task("addition", 1, -1)
    with pytest.raises(UserInputError, match="difficulty must be an integer >= 0, got True"):
        explicit_task("addition", True, 1)  # type: ignore[arg-type]


def test_a_tool_call_reply_is_read_back_as_that_call() -> None:
    for fmt in ("hermes", "chatml_tools", "llama3_json", "mistral"):
        reply = get_format(fmt).parse(tool_call_reply("search", {"query": "x", "k": 2}, fmt))
        assert [(c.name, c.arguments) for c in reply.calls] == [("search", {"query": "x", "k": 2})]


@pytest.fixture
def episodes() -> LocalEpisodes:
    pytest.importorskip("openenv.core", reason="sessions are openenv-core Environments")
    return LocalEpisodes(AdaptiveDifficulty(["addition"], tau_num=1000))


def _counters(episodes: LocalEpisodes) -> tuple[int, int]:
    assert isinstance(episodes.curriculum, AdaptiveDifficulty)
    return episodes.curriculum.counters("addition")


def test_an_episode_ends_with_the_environment_s_verdict_counted_once(
    episodes: LocalEpisodes,
) -> None:
    session = episodes.session()
    start = session.reset("addition", 0, 4)
    env = get_env("addition")
    problem = env.generate(0, 4)
    assert (start.env, start.prompt, start.max_turns) == ("addition", problem.prompt, 1)
    right = session.step(env.answer_format.render(env.solve(problem)))
    assert (right.reward, right.correct, right.done, right.turn) == (1.0, True, True, 1)
    assert session.finish() is right  # already over: the same outcome, not counted again
    assert episodes.episodes_finished == 1 and _counters(episodes) == (1, 1)
    with pytest.raises(UserInputError, match="after the episode ended"):
        session.step("again")


def test_an_output_that_cannot_be_sent_ends_the_episode_as_wrong_format(
    episodes: LocalEpisodes,
) -> None:
    session = episodes.session()
    session.reset("addition", 0, 2)
    ended = session.step("9" * (MAX_OUTPUT_CHARS + 1))
    assert (ended.reward, ended.correct, ended.done) == (float(WRONG_FORMAT), False, True)
    assert "longer than" in ended.detail
    assert episodes.episodes_finished == 1 and _counters(episodes) == (0, 1)  # a failure, once
    with pytest.raises(UserInputError, match="step before reset"):
        episodes.session().step("1")
