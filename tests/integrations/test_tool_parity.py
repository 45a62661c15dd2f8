"""Every path, the same tool episode: the local loop (the tool_calls collector), ``verirl
serve`` (its OpenEnv WebSocket session, the reply carrying the native call) and TRL's
``environment_factory`` (a real GRPOTrainer's own tool loop) give the same tokens, the same
loss mask and the same reward for the same replies.

TRL fixes an environment class's tools at start-up, so it always offers the whole toolset;
the local loop and the server offer the apps a task needs. The episode here needs all four
apps, so every path offers the same tools.

The model family is Qwen2.5's (TRL's copy of its chat template; Hermes ``<tool_call>``
format, which TRL's response parser reads) on the tiny test model with SmolLM2's tokenizer.
The model's replies are scripted; everything else — prompts, tool schemas, tool calls, the
glue between turns, the verdicts — is each path's own.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from verirl.envs import TURN_SEPARATOR, get_env
from verirl.models import load_tokenizer
from verirl.rewards.stage import env_reward_stage
from verirl.rollout.base import Generation
from verirl.rollout.collect import COLLECTORS
from verirl.rollout.prompts import PromptFormatter
from verirl.tools import ParsedReply, get_format
from verirl.tools.bridge import ChatRenderer
from verirl.tools.calls import decode_transcript
from verirl.tools.episode import TokenEpisode
from verirl.types import SamplingParams

ctu = pytest.importorskip("trl.chat_template_utils", reason="TRL ships Qwen2.5's template")
if not hasattr(ctu, "qwen2_5_chat_template"):  # an older TRL (the lowest-versions stage)
    pytest.skip("this TRL ships no Qwen2.5 chat template", allow_module_level=True)
QWEN25 = ctu.qwen2_5_chat_template
HERMES = get_format("hermes")
ENV, DIFFICULTY, SEED = "tool_world", 6, 3  # four goals: every app offered, as TRL offers them


@pytest.fixture(scope="module")
def tok() -> Any:
    return load_tokenizer("smollm2-135m-instruct")


def replies(partial: bool) -> list[str]:
    """The model's replies: the reference calls (or only the first, then a wasted lookup),
    then a reply without a call."""
    env = get_env(ENV)
    plan = decode_transcript(env.solve(env.generate(DIFFICULTY, SEED)), TURN_SEPARATOR)
    calls = [HERMES.render(r) for r in plan]
    if partial:
        files = ParsedReply("Let me look first.", (plan[0].calls[0].__class__("files_list", {}),))
        calls = [calls[0], HERMES.render(files)]
    return [*calls, "All done."]


def sampled(tok: Any, text: str) -> list[int]:
    return [*tok.encode(text, add_special_tokens=False), tok.eos_token_id]


def turn_of(tok: Any, ids: Sequence[int]) -> int:
    return tok.decode(list(ids), skip_special_tokens=False).count("<|im_start|>assistant") - 1


class Engine:
    def __init__(self, tok: Any, texts: list[str]) -> None:
        self.tok, self.texts = tok, texts

    def sync_weights(self) -> None:
        return None

    def generate(
        self, prompts: Sequence[Sequence[int]], sampling: SamplingParams
    ) -> list[list[Generation]]:
        out = []
        for ids in prompts:
            text = self.texts[turn_of(self.tok, ids)]
            t = tuple(sampled(self.tok, text))
            out.append([Generation(t, (-0.5,) * len(t), text, "stop")] * sampling.n)
        return out


def local_episode(tok: Any, texts: list[str]) -> tuple[list[int], list[int], list[int], float]:
    collector = COLLECTORS.get("tool_calls").build(
        {"chat_template": QWEN25, "format": "hermes", "demonstration": False, "max_turns": 6}
    )
    problem = get_env(ENV).generate(DIFFICULTY, SEED)
    [ep] = collector.collect(
        [problem],
        Engine(tok, texts),
        PromptFormatter(tok),
        SamplingParams(n=1, temperature=1.0, max_new_tokens=128),
        score=env_reward_stage(),
    )
    assert ep.loss_mask is not None and ep.verdict is not None
    return list(ep.prompt_ids), list(ep.response_ids), list(ep.loss_mask), ep.verdict.reward


def served_episode(
    tok: Any, texts: list[str], tmp_path: Path
) -> tuple[list[int], list[int], list[int], float]:
    """A client of ``verirl serve``: the server reads the replies and runs the tools; the
    client renders the prompt from the observation and bridges with the same builder."""
    pytest.importorskip("openenv.core", reason="needs openenv-core (the 'serve' extra)")
    from fastapi.testclient import TestClient

    from verirl.curriculum import CurriculumConfig
    from verirl.registry import Plugin
    from verirl.serve.app import build_app
    from verirl.serve.gym import Gym
    from verirl.serve.settings import GymConfig
    from verirl.verification.settings import VerificationConfig

    config = GymConfig(
        curriculum=CurriculumConfig(environments=[ENV]),
        verification=VerificationConfig(executor=Plugin(name="inline"), timeout_s=10.0),
    )
    gym = Gym.from_config(config, state_path=str(tmp_path / "state.sqlite"))
    reward = None
    with TestClient(build_app(gym)) as client, client.websocket_connect("/ws") as ws:

        def send(kind: str, data: dict[str, Any]) -> dict[str, Any]:
            ws.send_text(json.dumps({"type": kind, "data": data}))
            return json.loads(ws.receive_text())["data"]

        start = send(
            "reset", {"env": ENV, "difficulty": DIFFICULTY, "seed": SEED, "tool_format": "hermes"}
        )["observation"]
        renderer = ChatRenderer(tok, QWEN25, tuple(start["tool_schemas"]))
        episode = TokenEpisode(
            renderer, [{"role": "user", "content": start["prompt"]}], "<|im_end|>", tok.eos_token_id
        )
        for text in texts:
            episode.add_turn(sampled(tok, text))
            out = send("step", {"answer": text})
            obs = out["observation"]
            if out["done"]:
                reward = out["reward"]
                break
            episode.close_turn(obs["assistant"], obs["tool_messages"])
    gym.close()
    assert reward is not None
    return list(episode.prompt), episode.response, episode.mask, reward


def trl_episode(
    tok: Any, texts: list[str], model_dir: Path, tmp_path: Path
) -> tuple[list[int], list[int], list[int], float]:
    """TRL's own GRPOTrainer tool loop with verirl's environment_factory; only the model's
    sampling is scripted (``_generate_single_turn``)."""
    import torch
    from trl import GRPOConfig, GRPOTrainer

    from verirl.curriculum import AdaptiveDifficulty
    from verirl.episodes.local import LocalEpisodes
    from verirl.integrations.trl import EnvironmentFactory

    class Scripted(GRPOTrainer):
        def _generate_single_turn(
            self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False
        ):  # type: ignore[no-untyped-def]
            return [sampled(tok, texts[turn_of(tok, ids)]) for ids in prompt_ids], None

    processing = load_tokenizer(str(model_dir))
    processing.chat_template = QWEN25
    factory = EnvironmentFactory(LocalEpisodes(AdaptiveDifficulty([ENV])), tools=True)
    args = GRPOConfig(
        output_dir=str(tmp_path / "trl"),
        use_cpu=True,
        model_init_kwargs={"dtype": torch.float32},
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=1024,
        max_tool_calling_iterations=6,
        beta=0.0,
        max_steps=1,
        report_to="none",
        save_strategy="no",
        disable_tqdm=True,
        seed=0,
    )
    trainer = Scripted(
        model=str(model_dir), args=args, processing_class=processing, environment_factory=factory
    )
    assert trainer.chat_template is None  # TRL found Qwen2.5's template prefix-preserving
    captured: dict[str, Any] = {}
    real = trainer._generate

    def spy(prompts: Any) -> Any:
        captured["out"] = real(prompts)
        return captured["out"]

    trainer._generate = spy  # type: ignore[method-assign]
    problem = get_env(ENV).generate(DIFFICULTY, SEED)
    row = {
        "prompt": [{"role": "user", "content": problem.prompt}],
        "verirl_env": ENV,
        "verirl_difficulty": DIFFICULTY,
        "verirl_seed": SEED,
    }
    trainer.train_dataset = None
    trainer._generate_and_score_completions([dict(row), dict(row)])
    prompt_ids, completion_ids, tool_mask = (captured["out"][i][0] for i in range(3))
    envs = trainer.environments
    rewards = {e.last_outcome.reward for e in envs if e.last_outcome is not None}
    assert len(rewards) == 1
    return list(prompt_ids), list(completion_ids), list(tool_mask), rewards.pop()


@pytest.mark.slow
@pytest.mark.parametrize("partial", [False, True], ids=["task_done", "half_done"])
def test_local_serve_and_trl_give_the_same_tokens_and_reward(
    tok: Any, tiny_model_dir: Path, tmp_path: Path, partial: bool
) -> None:
    texts = replies(partial)
    local = local_episode(tok, texts)
    served = served_episode(tok, texts, tmp_path)
    trl = trl_episode(tok, texts, tiny_model_dir, tmp_path)
    prompt, response, mask, reward = local
    assert reward == (0.25 if partial else 1.0)
    assert sum(mask) == sum(len(sampled(tok, t)) for t in texts)  # every model token, once
    for name, other in (("serve", served), ("trl", trl)):
        assert other[0] == prompt, f"{name}: prompt tokens differ"
        assert other[1] == response, f"{name}: episode tokens differ"
        assert other[2] == mask, f"{name}: loss mask differs"
        assert other[3] == reward, f"{name}: reward differs"
