"""verirl's gym over OpenEnv: the one episode layer in-process (over a LocalGym), and a real
``verirl serve`` process on loopback driven by openenv-core's own client classes
(GenericEnvClient, EnvClient) and by :class:`OpenEnvEpisodes`."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("openenv.core", reason="needs openenv-core==0.3.0 (extra 'openenv')")

import requests
from openenv.core import GenericEnvClient

from tests.serve.helpers import ServerProcess, gym_server
from verirl.curriculum import AdaptiveDifficulty
from verirl.envs import get_env
from verirl.episodes.local import LocalEpisodes
from verirl.errors import UserInputError
from verirl.integrations.openenv import (
    OpenEnvEpisodes,
    RemoteSession,
    VerirlAction,
    VerirlEnvClient,
    VerirlEnvironment,
)
from verirl.sources.server import GymClient, GymServerError


def build_source(
    envs: list[str], *, tau_num: int = 128, tau_acc: float = 0.9, max_turns: int = 1
) -> LocalEpisodes:
    """An in-process gym over an RLVE curriculum of ``envs``."""
    return LocalEpisodes(
        AdaptiveDifficulty(envs, tau_num=tau_num, tau_acc=tau_acc), max_turns=max_turns
    )


def _right(env: str, difficulty: int, seed: int) -> str:
    e = get_env(env)
    return e.answer_format.render(e.solve(e.generate(difficulty, seed)))


def _wrong(env: str, difficulty: int, seed: int) -> str:
    e = get_env(env)
    p = e.generate(difficulty, seed)
    return e.answer_format.render(e.corrupt(p, e.solve(p), random.Random(0)))


# ---- in-process: the openenv Environment subclass -------------------------------------------
def test_environment_verdicts_match_the_environment_and_feed_the_curriculum() -> None:
    source = build_source(["addition"], tau_num=2, tau_acc=0.5)
    env = VerirlEnvironment(source)
    for _ in range(2):
        obs = env.reset()
        assert obs.env == "addition" and obs.difficulty == 0 and not obs.done
        assert obs.prompt == get_env("addition").generate(0, obs.seed).prompt
        step = env.step(VerirlAction(answer=_right("addition", 0, obs.seed)))
        assert step.done and step.correct and step.reward == 1.0
    # two fully correct episodes at h = 0 with tau_num = 2: the window moved to [0, 1]
    assert env.state.window == [0, 1]
    obs = env.reset(env="addition", difficulty=3, seed=5, curriculum="default")
    bad = env.step(VerirlAction(answer=_wrong("addition", 3, 5)))
    want = get_env("addition").verify(get_env("addition").generate(3, 5), _wrong("addition", 3, 5))
    assert (bad.reward, bad.correct, bad.done) == (want.reward, False, True)


def test_refinement_gives_feedback_until_max_turns_and_finish_ends_it() -> None:
    source = LocalEpisodes(AdaptiveDifficulty(["addition"], tau_num=1000), max_turns=3)
    env = VerirlEnvironment(source)
    env.reset(env="addition", difficulty=2, seed=1, curriculum="default")
    first = env.step(VerirlAction(answer="no answer here"))
    assert not first.done and first.reward == -1.0 and first.feedback  # feedback, next turn
    second = env.step(VerirlAction(answer=_wrong("addition", 2, 1)))
    assert not second.done and second.turn == 2 and not second.correct
    ended = env.step(VerirlAction(finish=True))
    assert ended.done and ended.reward == second.reward
    assert source.curriculum is not None and source.curriculum.counters("addition") == (0, 0)
    assert source.episodes_finished == 1  # recorded once, at difficulty 2 (not at h = 0)
    with pytest.raises(UserInputError, match="after the episode ended"):
        env.step(VerirlAction(answer="x"))


def test_an_episode_without_a_verdict_is_not_counted() -> None:
    source = build_source(["addition"], tau_num=1000)
    env = VerirlEnvironment(source)
    env.reset()
    env.close()  # openenv's HTTP /reset: a fresh environment, closed without a step
    env.reset()
    env.reset()  # left without a verdict again
    assert source.episodes_finished == 0
    env.step(VerirlAction(answer="no answer"))  # max_turns 1: a verdict ends it
    env.reset()
    assert source.episodes_finished == 1
    assert source.curriculum is not None and source.curriculum.counters("addition") == (0, 1)


def test_bad_resets_name_what_is_wrong() -> None:
    env = VerirlEnvironment(build_source(["addition"]))
    with pytest.raises(UserInputError, match="missing: seed"):  # the sessions' reset
        build_source(["addition"]).session().reset("addition", 1, None)
    with pytest.raises(UserInputError, match="unknown environment 'nope'"):
        env.reset(env="nope", difficulty=1, seed=0)
    with pytest.raises(UserInputError, match="max_difficulty"):
        env.reset(env="addition", difficulty=10**6, seed=0)
    with pytest.raises(UserInputError, match="unknown reset field"):
        env.reset(colour="red")
    with pytest.raises(UserInputError, match="step before reset"):
        VerirlEnvironment(build_source(["addition"])).step(VerirlAction(answer="1"))


# ---- over the wire: openenv-core's server and clients ----------------------------------------
@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    state = tmp_path_factory.mktemp("gym") / "state.sqlite"
    with gym_server(state, ["addition", "tool_world"], tau_num=2, tau_acc=0.5) as url:
        yield url


@pytest.mark.slow
def test_http_routes_of_openenv_core(server_url: str) -> None:
    assert requests.get(f"{server_url}/health", timeout=120).json()["status"] == "healthy"
    schema = requests.get(f"{server_url}/schema", timeout=120).json()
    assert {"answer", "finish"} <= set(schema["action"]["properties"])
    assert {"prompt", "correct", "detail", "tools"} <= set(schema["observation"]["properties"])
    # openenv-core 0.3.0's HTTP /reset builds a fresh environment per request
    reset = requests.post(
        f"{server_url}/reset", json={"env": "addition", "difficulty": 2, "seed": 4}, timeout=120
    ).json()
    assert reset["observation"]["prompt"] == get_env("addition").generate(2, 4).prompt
    assert reset["done"] is False


@pytest.mark.slow
def test_generic_client_runs_an_episode(server_url: str) -> None:
    async def episode() -> tuple[dict, dict]:
        async with GenericEnvClient(base_url=server_url) as client:
            start = await client.reset(env="addition", difficulty=1, seed=9)
            result = await client.step({"answer": _right("addition", 1, 9)})
            return start.observation, {
                "reward": result.reward,
                "done": result.done,
                **result.observation,
            }

    start, result = asyncio.run(episode())
    assert start["prompt"] == get_env("addition").generate(1, 9).prompt
    assert result["reward"] == 1.0 and result["done"] and result["correct"] is True


@pytest.mark.slow
def test_typed_client_tool_world_one_native_reply_per_step(server_url: str) -> None:
    from verirl.envs.agents.tool_world import TURN_SEPARATOR
    from verirl.tools import get_format
    from verirl.tools.calls import decode_transcript

    env = get_env("tool_world")
    replies = decode_transcript(env.solve(env.generate(2, 3)), TURN_SEPARATOR)
    assert len(replies) >= 2
    smol = get_format("chatml_tools")
    with VerirlEnvClient(base_url=server_url).sync() as client:
        start = client.reset(env="tool_world", difficulty=2, seed=3).observation
        assert "files_list" in start.tools and start.tool_format == "chatml_tools"
        results = [client.step(VerirlAction(answer=smol.render(r))) for r in replies]
        results.append(client.step(VerirlAction(answer="Done.")))
        state = client.state()
    assert [r.done for r in results] == [False] * len(replies) + [True]
    assert results[-1].observation.correct and results[-1].reward == 1.0
    assert results[0].observation.tool_messages[0]["content"] == "ok"  # the call's result
    assert results[0].reward is not None and results[0].reward < 1.0
    assert state.step_count == len(replies) + 1 and state.env == "tool_world"


@pytest.mark.slow
def test_remote_source_feeds_the_server_curriculum(server_url: str) -> None:
    session = OpenEnvEpisodes(server_url).session()
    try:
        seen: list[tuple[str, int]] = []
        raised = False
        for _ in range(40):
            start = session.reset()  # drawn by the server's curriculum
            seen.append((start.env, start.difficulty))
            if start.env != "addition":
                session.finish()  # a failed tool_world episode (no call)
                continue
            out = session.step(_right(start.env, start.difficulty, start.seed))
            assert out.correct and out.done
            if start.difficulty == 1:
                raised = True
                break
        # the server's addition window rose after 2 correct episodes at h = 0 (tau_num = 2)
        assert raised, seen
    finally:
        session.close()


TOKEN = "an-openenv-token-of-32-characters"


@pytest.mark.slow
def test_remote_source_reaches_a_server_that_requires_a_token(tmp_path: Path) -> None:
    """A non-loopback server always has a token: the source sends it on its HTTP calls and
    on the /ws session's URL; without it (or with a wrong one) it is refused, and the
    refusal never shows the token."""
    proc = ServerProcess(
        tmp_path / "state.sqlite",
        "--token",
        TOKEN,
        "curriculum.environments=[addition]",
        "verification.executor.name=threads",
    ).start()
    try:
        with pytest.raises(GymServerError, match="token"):
            OpenEnvEpisodes(proc.url, curriculum="tok").session()
        wrong = "a-wrong-token-of-32-characters-xx"
        with pytest.raises(ConnectionError) as refused:
            RemoteSession(proc.url, curriculum="tok", token=wrong)
        assert wrong not in str(refused.value) and "***" in str(refused.value)
        session = OpenEnvEpisodes(proc.url, curriculum="tok", token=TOKEN).session()
        try:
            start = session.reset()
            assert start.env == "addition"
            out = session.step(_right(start.env, start.difficulty, start.seed))
            assert out.correct and out.done
        finally:
            session.close()
        client = GymClient(proc.url, TOKEN)
        try:
            summary = client.get("/curricula/tok")
        finally:
            client.close()
        assert "addition" in str(summary)
    finally:
        proc.kill()
