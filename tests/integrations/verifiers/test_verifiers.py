"""verirl's gym as a verifiers 0.4.0 taskset package: loaded through verifiers' own loader
(``vf.load_environment``, the path its eval/serve entry points and prime-rl take), tasks read
through its own views, rollouts scored by its own ``Task.score`` on verifiers ``Trace``s whose
assistant turns come from a stub policy."""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("verifiers.v1", reason="needs verifiers==0.4.0 (extra 'verifiers')")

import verifiers.v1 as vf
from verifiers.v1.envs.single_agent.env import SingleAgentEnvConfig

from verirl.envs import get_env
from verirl.integrations.verifiers import VerirlTask, VerirlTaskset


def _load(**taskset: object) -> vf.Env:
    return vf.load_environment(SingleAgentEnvConfig(taskset={"id": "verirl-gym", **taskset}))


def _trace(task: VerirlTask, reply: str) -> vf.Trace:
    """A finished single-turn rollout of ``task`` as verifiers records it."""
    prompt = task.data.prompt
    assert isinstance(prompt, str)
    return vf.Trace(
        task=vf.TraceTask(type=type(task).__name__, data=task.data, key=task.key),
        agent=vf.AgentInfo(config=vf.AgentConfig()),
        nodes=[
            vf.MessageNode(message=vf.UserMessage(content=prompt)),
            vf.MessageNode(message=vf.AssistantMessage(content=reply), sampled=True, parent=0),
        ],
    )


def _stub_policy(task: VerirlTask, right: bool, rng: random.Random) -> str:
    env = get_env(task.data.env)
    problem = env.generate(task.data.difficulty, task.data.seed)
    answer = env.solve(problem)
    if not right:
        answer = env.corrupt(problem, answer, rng)
    return f"Let me think.\n{env.answer_format.render(answer)}"


def test_the_loader_finds_the_taskset_and_its_views_work() -> None:
    env = _load(environments=["addition", "sort_list"], num_tasks=6)
    assert isinstance(env.taskset, VerirlTaskset)
    tasks = list(env.taskset)
    assert len(tasks) == 6 and len({t.key for t in tasks}) == 6
    for task in tasks:
        problem = get_env(task.data.env).generate(task.data.difficulty, task.data.seed)
        assert task.data.prompt == problem.prompt
    assert len(list(env.taskset.select(vf.SelectConfig(limit=2)))) == 2
    with pytest.raises(Exception, match="unknown environment"):
        _load(environments=["no_such_env"])


def test_rewards_are_the_verdicts_and_feed_the_curriculum() -> None:
    env = _load(environments=["addition"], num_tasks=None, tau_num=2, tau_acc=0.5)
    taskset = env.taskset
    assert isinstance(taskset, VerirlTaskset) and not taskset.bounded
    rng = random.Random(0)
    stream = iter(taskset)
    scored = []
    for i in range(4):
        task = next(stream)
        assert isinstance(task, VerirlTask)
        reply = _stub_policy(task, right=i % 2 == 0, rng=rng)
        trace = _trace(task, reply)
        asyncio.run(task.score(trace))
        problem = get_env("addition").generate(task.data.difficulty, task.data.seed)
        want = get_env("addition").verify(problem, reply)
        assert trace.rewards["verirl"] is not None
        assert trace.rewards["verirl"].score == want.reward
        assert trace.metrics["correct"] == float(want.correct)
        assert trace.reward == want.reward
        scored.append((task.data.difficulty, want.correct))
    # 1 correct of 2 at h = 0 (tau_acc 0.5): the window rose, so later tasks reach difficulty 1
    assert taskset.curriculum.window("addition")[1] >= 1
    later = [next(stream).data.difficulty for _ in range(20)]
    assert max(later) >= 1 and all(d <= taskset.curriculum.window("addition")[1] for d in later)
    # an empty or hostile reply is a verdict, not an error
    task = next(stream)
    for reply in ("", "\\boxed{" * 500, "\x00\udcff"):
        trace = _trace(task, reply)
        asyncio.run(task.score(trace))
        assert trace.rewards["verirl"] is not None and trace.rewards["verirl"].score == -1.0


@pytest.mark.slow
def test_the_verifiers_cli_resolves_the_taskset_by_id(tmp_path: Path) -> None:
    """``vf-eval verirl-gym ...`` (dry run: resolve and validate the config, no model)."""
    src = str(Path(__file__).resolve().parents[3] / "src")
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    code = "import sys; from verifiers.v1.cli.eval.main import main; sys.exit(main())"
    args = ["verirl-gym", "--env.taskset.environments", '["addition","sort_list"]']
    args += ["--env.taskset.num-tasks", "3", "--dry-run", "True"]
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    (resolved,) = tmp_path.glob("outputs/*/configs/resolved/eval.json")
    taskset = json.loads(resolved.read_text())["env"]["taskset"]
    assert taskset["id"] == "verirl-gym" and taskset["environments"] == ["addition", "sort_list"]
    assert taskset["num_tasks"] == 3 and taskset["tau_num"] == 128
