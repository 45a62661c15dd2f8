"""Verifier resources from the config: the ``sandbox:`` section sizes the code sandbox (the
``VERIRL_SANDBOX_*`` variables override it), and the server checks code and proof
environments with its own sandbox and provers."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from verirl.config import ConfigError, load_config
from verirl.curriculum import CurriculumConfig, Task
from verirl.envs import get_env
from verirl.errors import UserInputError
from verirl.registry import Plugin
from verirl.sandbox import (
    SandboxConfig,
    configure_sandbox,
    current_sandbox_config,
    default_sandbox,
)
from verirl.serve.gym import Gym
from verirl.serve.settings import GymConfig
from verirl.verification.settings import VerificationConfig


def test_sandbox_section_sizes_the_process_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VERIRL_SANDBOX_WORKERS", raising=False)
    monkeypatch.delenv("VERIRL_SANDBOX_MODE", raising=False)
    cfg = load_config(None, ["sandbox.workers=3", "sandbox.mode=rlimits", "sandbox.cpu_s=1.5"])
    assert cfg.sandbox.workers == 3
    try:
        configure_sandbox(cfg.sandbox)
        assert current_sandbox_config() == cfg.sandbox
        box = default_sandbox()
        assert (len(box._workers), box.mode, box.limits.cpu_s) == (3, "rlimits", 1.5)
        monkeypatch.setenv("VERIRL_SANDBOX_WORKERS", "1")  # the documented override
        assert SandboxConfig(mode="rlimits").resolved().workers == 1
        monkeypatch.setenv("VERIRL_SANDBOX_WORKERS", "many")
        with pytest.raises(UserInputError, match="VERIRL_SANDBOX_WORKERS"):
            SandboxConfig().resolved()
    finally:
        configure_sandbox(SandboxConfig())
    with pytest.raises(ConfigError, match=r"sandbox\.workers"):
        load_config(None, ["sandbox.workers=0"])


def _worker_sandbox(_: object) -> dict[str, object]:
    import os

    return {
        "config": current_sandbox_config().model_dump(),
        "env": sorted(k for k in os.environ if k.startswith("VERIRL_SANDBOX")),
    }


def test_worker_processes_get_the_sandbox_config_explicitly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The process pool hands its workers the configured sandbox as an initializer argument
    (no environment variable carries it)."""
    from verirl.verification.executors import PoolParams, ProcessExecutor

    for name in ("VERIRL_SANDBOX_WORKERS", "VERIRL_SANDBOX_MODE"):
        monkeypatch.delenv(name, raising=False)
    wanted = SandboxConfig(workers=1, mode="rlimits", cpu_s=1.5, memory_mb=300)
    try:
        configure_sandbox(wanted)
        pool = ProcessExecutor(PoolParams(workers=1))
        try:
            [out] = pool.map(_worker_sandbox, [None], 120.0)
        finally:
            pool.close()
    finally:
        configure_sandbox(SandboxConfig())
    assert out.value == {"config": wanted.model_dump(), "env": []}, out.error


def _gym(tmp_path: Path) -> Gym:
    gym = GymConfig(
        curriculum=CurriculumConfig(environments=["addition"]),
        verification=VerificationConfig(executor=Plugin(name="inline")),
        sandbox=SandboxConfig(workers=1),
    )
    return Gym.from_config(gym, state_path=str(tmp_path / "s.sqlite"))


def test_code_environment_is_run_in_the_servers_sandbox(tmp_path: Path) -> None:
    gym = _gym(tmp_path)
    try:
        env = get_env("code_count_primes")
        p = env.generate(1, 2)
        good = env.answer_format.render(env.solve(p))
        bad = env.answer_format.render("def solve(*a):\n    return -7\n")
        v = gym.verify([(Task(p.env, 1, 2), good), (Task(p.env, 1, 2), bad)])
        assert [x["correct"] for x in v] == [True, False]
    finally:
        gym.close()


@pytest.mark.coq
@pytest.mark.skipif(
    shutil.which("coqidetop") is None and shutil.which("coqidetop.opt") is None,
    reason="needs coqidetop",
)
def test_proof_environment_is_checked_by_the_servers_prover(tmp_path: Path) -> None:
    gym = _gym(tmp_path)
    try:
        env = get_env("coq_list_lengths")
        p = env.generate(0, 1)
        good = env.answer_format.render(env.solve(p))
        v = gym.verify([(Task(p.env, 0, 1), good), (Task(p.env, 0, 1), "```coq\nadmit.\n```")])
        assert [x["correct"] for x in v] == [True, False]
    finally:
        gym.close()
