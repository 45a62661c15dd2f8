"""verirl inside verl 0.9.1, on verl's own DataProto batches (verl's own environment:
``./run.sh test`` runs this file in ``.venv-verl``; verl pins transformers<5.11)."""

from __future__ import annotations

import asyncio
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("verl", reason="the verl integration needs verl==0.9.1 (extra 'verl')")
import numpy as np
import torch
from omegaconf import OmegaConf
from verl import DataProto
from verl.experimental.reward_loop.reward_manager import get_reward_manager_cls
from verl.trainer.ppo.core_algos import get_adv_estimator_fn
from verl.utils.dataset.rl_dataset import collate_fn

import verirl.integrations.verl.plugin  # noqa: F401  (registers managers and estimators)
from verirl.credit.base import CreditInput
from verirl.credit.process import ProcessParams, process, tactic_scores
from verirl.credit.spans import step_token_starts
from verirl.credit.tcpo import TCPOParams, tcpo
from verirl.envs import get_env
from verirl.errors import UserInputError
from verirl.integrations.problems import identity_columns
from verirl.integrations.verl.data import CurriculumDataset
from verirl.integrations.verl.scoring import (
    compute_score,
    decode_tactic_scores,
    encode_tactic_scores,
    encode_turn_scores,
    turn_spans,
)
from verirl.types import Problem, Rollout, Span, Turn, Verdict

pytestmark = pytest.mark.verl
ENVS = ["addition", "sort_list"]
PROMPT_WIDTH, RESPONSE_WIDTH = 4, 48


@pytest.fixture(scope="module")
def tokenizer(tiny_model_dir: Path) -> Any:
    from verirl.models import load_tokenizer

    return load_tokenizer(str(tiny_model_dir))


def _texts(problems: list[Problem]) -> list[str]:
    rng = random.Random(0)
    out = []
    for i, p in enumerate(problems):
        env = get_env(p.env)
        right = env.solve(p)
        out.append(
            [f"\\boxed{{{right}}}", f"\\boxed{{{env.corrupt(p, right, rng)}}}", right][i % 3]
        )
    return out


def _batch(
    tokenizer: Any,
    problems: list[Problem | None],
    texts: list[str],
    masks: list[list[int]] | None = None,
    token_ids: list[list[int]] | None = None,
    **non_tensor: Any,
) -> DataProto:
    """A DataProto laid out as verl's rollout produces it: left-padded prompts, right-padded
    responses, attention over both, verirl identity in extra_info."""
    n = len(texts)
    responses = torch.full((n, RESPONSE_WIDTH), tokenizer.pad_token_id, dtype=torch.long)
    attention = torch.zeros(n, PROMPT_WIDTH + RESPONSE_WIDTH, dtype=torch.long)
    response_mask = torch.zeros(n, RESPONSE_WIDTH, dtype=torch.long)
    attention[:, :PROMPT_WIDTH] = 1
    for i, t in enumerate(texts):
        ids = token_ids[i] if token_ids else tokenizer.encode(t, add_special_tokens=False)
        ids = ids[:RESPONSE_WIDTH]
        responses[i, : len(ids)] = torch.tensor(ids)
        attention[i, PROMPT_WIDTH : PROMPT_WIDTH + len(ids)] = 1
        response_mask[i, : len(ids)] = torch.tensor(masks[i] if masks else [1] * len(ids))
    prompts = torch.ones(n, PROMPT_WIDTH, dtype=torch.long)
    extra = [identity_columns(p) if p else {} for p in problems]
    gts = [p.answer if p else "7" for p in problems]
    sources = [f"verirl/{p.env}" if p else "openai/gsm8k" for p in problems]
    return DataProto.from_dict(
        tensors={
            "prompts": prompts,
            "responses": responses,
            "attention_mask": attention,
            "response_mask": response_mask,
            "input_ids": torch.cat([prompts, responses], dim=1),
        },
        non_tensors={
            "data_source": np.array(sources, dtype=object),
            "reward_model": np.array([{"ground_truth": g} for g in gts], dtype=object),
            "extra_info": np.array(extra, dtype=object),
            **{k: np.array(v, dtype=object) for k, v in non_tensor.items()},
        },
    )


def _run_manager(name: str, tokenizer: Any, batch: DataProto, **settings: Any) -> Any:
    """What verl's RewardLoopWorker does: one run_single per sample, all gathered."""
    cls = get_reward_manager_cls(name)
    config = OmegaConf.create({"reward": {"verirl": settings}})
    manager = cls(config=config, tokenizer=tokenizer, compute_score=None)

    async def all_samples() -> list[dict[str, Any]]:
        return list(
            await asyncio.gather(*(manager.run_single(batch[i : i + 1]) for i in range(len(batch))))
        )

    outputs = manager.loop.run_until_complete(all_samples())  # the worker's own loop
    rm = cls.assemble_rm_scores(batch, [o["reward_score"] for o in outputs])
    return manager, outputs, rm


# ---- compute_score ------------------------------------------------------------------------------
def test_compute_score_is_the_environment_verifier() -> None:
    problems = [get_env(ENVS[i % 2]).generate(1, i) for i in range(6)]
    texts = _texts(problems)
    for p, t in zip(problems, texts, strict=True):
        got = compute_score(f"verirl/{p.env}", t, p.answer, identity_columns(p))
        want = get_env(p.env).verify(p, t)
        assert got == {
            "score": want.reward,
            "acc": float(want.correct),
            "verirl_correct": float(want.correct),
        }
    scores = {
        compute_score("verirl/x", t, None, identity_columns(p))["score"]
        for p, t in zip(problems, texts, strict=True)
    }
    assert len(scores) >= 2


def test_compute_score_rule_judges_other_rows_and_refuses_bad_ones() -> None:
    assert compute_score("openai/gsm8k", "so \\boxed{\\frac{1}{2}}", "0.5")["score"] == 1.0
    assert compute_score("openai/gsm8k", "\\boxed{3}", "0.5")["score"] == 0.0
    # a data source named like an environment is still a free-form row
    assert compute_score("addition", "\\boxed{3}", "3")["score"] == 1.0
    with pytest.raises(UserInputError, match="verirl_env"):
        compute_score("verirl/addition", "\\boxed{3}", "3", {})
    with pytest.raises(UserInputError, match="not registered"):
        compute_score(
            "x", "1", "1", {"verirl_env": "nope", "verirl_difficulty": 0, "verirl_seed": 0}
        )


# ---- the reward manager on a DataProto batch ----------------------------------------------------
def test_reward_manager_scores_a_dataproto_batch_in_one_verification(tokenizer: Any) -> None:
    problems: list[Problem | None] = [get_env(ENVS[i % 2]).generate(0, i) for i in range(6)]
    problems.append(None)  # a free-form row in the same batch
    texts = [*_texts([p for p in problems if p]), "\\boxed{7}"]
    batch = _batch(tokenizer, problems, texts)
    manager, outputs, rm = _run_manager("verirl", tokenizer, batch)
    for i, (p, out) in enumerate(zip(problems, outputs, strict=True)):
        decoded = tokenizer.decode(batch.batch["responses"][i], skip_special_tokens=True)
        want = get_env(p.env).verify(p, decoded).reward if p else 1.0
        assert out["reward_score"] == want
        length = int(batch.batch["attention_mask"][i, PROMPT_WIDTH:].sum())
        assert rm[i, length - 1] == want and rm[i].abs().sum() == abs(want)  # last token only
    assert manager.batcher.calls == 1  # every sample of the batch verified together
    assert {o["reward_extra_info"]["verirl_correct"] for o in outputs} == {0.0, 1.0}


# ---- the curriculum dataset ---------------------------------------------------------------------
def _data_config(**verirl: Any) -> Any:
    return OmegaConf.create(
        {
            "train_batch_size": 2,
            "dataloader_num_workers": 0,
            "verirl": {"environments": ["addition"], **verirl},
        }
    )


def test_curriculum_dataset_updates_from_a_verl_batch(tokenizer: Any) -> None:
    data = CurriculumDataset("verirl:train", tokenizer, None, _data_config(tau_num=4, window=1))
    rows = [data[i] for i in range(2)]
    assert [r["extra_info"]["verirl_difficulty"] for r in rows] == [0, 0]
    batch = DataProto.from_single_dict(collate_fn(rows)).repeat(2, interleave=True)
    problems = [data.store.from_row(info) for info in batch.non_tensor_batch["extra_info"]]
    right = [f"\\boxed{{{get_env(p.env).solve(p)}}}" for p in problems]
    scored = _batch(tokenizer, problems, right)
    _, outputs, _ = _run_manager("verirl", tokenizer, scored)
    infos = [o["reward_extra_info"] for o in outputs]
    batch.non_tensor_batch.update(
        {k: np.array([x[k] for x in infos]) for k in ("acc", "verirl_correct")}
    )
    assert data.curriculum.window("addition") == (0, 0)
    data.on_batch_end(batch=batch)  # what verl's RayPPOTrainer.fit calls after each step
    assert data.curriculum.window("addition") == (1, 1)
    assert data[2]["extra_info"]["verirl_difficulty"] == 1  # the next row uses the new window
    # wrong answers do not move it again (4 outcomes at h = 1, none correct)
    wrong = batch.select_idxs([0, 1, 2, 3])
    wrong.non_tensor_batch["extra_info"] = np.array(
        [{**i, "verirl_difficulty": 1} for i in wrong.non_tensor_batch["extra_info"]], dtype=object
    )
    wrong.non_tensor_batch["verirl_correct"] = np.zeros(4)
    data.on_batch_end(batch=wrong)
    assert data.curriculum.window("addition") == (1, 1)
    assert data.curriculum.metrics()["curriculum/addition/last_check_acc"] == 0.0


def test_curriculum_dataset_refuses_workers_and_missing_feedback(tokenizer: Any) -> None:
    bad = _data_config()
    bad.dataloader_num_workers = 4
    with pytest.raises(UserInputError, match="dataloader_num_workers"):
        CurriculumDataset("verirl:train", tokenizer, None, bad)
    with pytest.raises(UserInputError, match=r"data\.verirl"):
        CurriculumDataset("verirl:train", tokenizer, None, _data_config(tau_num=0))
    data = CurriculumDataset("verirl:train", tokenizer, None, _data_config())
    for i in range(6):
        data[i]
    with pytest.raises(RuntimeError, match="use_v1=false"):
        data[6]
    ev = CurriculumDataset("verirl:eval", tokenizer, None, _data_config(eval_size=3))
    assert len(ev) == 3 and ev[0]["extra_info"]["verirl_seed"] >= 2**31  # held-out seeds


# ---- the advantage estimators -------------------------------------------------------------------
def _proof_rollouts(tokenizer: Any) -> list[Rollout]:
    """Two groups of proofs with tactic spans: passes, first errors at various tactics, a
    rejected proof, a timeout and one with no tactics."""
    texts = ["intro n. simpl. reflexivity.", "intro n. auto. lia. done.", "induction n. auto."]
    spans = [
        (Span(0, 8), Span(9, 15), Span(16, 28)),
        (Span(0, 8), Span(9, 14), Span(15, 19), Span(20, 25)),
        (Span(0, 12), Span(13, 18)),
    ]
    cases = [  # (text idx, correct, first_failed, status)
        (0, True, None, "pass"), (1, False, 2, "error"), (2, False, 0, "error"),
        (1, False, None, "rejected"), (0, True, None, "pass"), (2, False, None, "timeout"),
        (1, True, None, "pass"), (0, False, None, "incomplete"),
    ]  # fmt: skip
    problem = Problem("p", 0, 0, "q", "a")
    out = []
    for i, (k, ok, first, status) in enumerate(cases):
        ids = tuple(tokenizer.encode(texts[k], add_special_tokens=False))
        verdict = Verdict(
            1.0 if ok else 0.0, ok, "", steps=spans[k], first_failed_step=first,
            extra={"status": status},
        )  # fmt: skip
        out.append(
            Rollout(
                problem, i // 4, (1,), ids, (0.0,) * len(ids), texts[k], "stop", verdict=verdict
            )
        )
    return out


def test_process_estimator_equals_verirls_process(tokenizer: Any) -> None:
    rollouts = _proof_rollouts(tokenizer)
    params = ProcessParams()
    want = process(CreditInput.from_rollouts(rollouts, tokenizer=tokenizer), params)
    t = want.shape[1]
    rows, masks = [], []
    for r in rollouts:
        v = r.verdict
        assert v is not None
        starts = step_token_starts(r.text, r.response_ids, v.steps, tokenizer)
        phi = tactic_scores(len(starts), passed=v.correct, status=v.extra["status"],
                            first_failed=v.first_failed_step, params=params)  # fmt: skip
        rows.append(encode_tactic_scores(t, len(r.response_ids), starts, phi, v.correct))
        masks.append([1.0] * len(r.response_ids) + [0.0] * (t - len(r.response_ids)))
    rewards, mask = torch.stack(rows), torch.tensor(masks)
    index = np.array([f"uid-{r.group}" for r in rollouts], dtype=object)
    got, returns = get_adv_estimator_fn("verirl_process")(
        token_level_rewards=rewards, response_mask=mask, index=index, config=None
    )
    assert torch.allclose(got, want, atol=1e-6) and torch.equal(got, returns)
    assert want.abs().sum() > 0 and len({round(float(x), 4) for x in want.flatten()}) > 4
    # a passed proof without tactics keeps only its outcome advantage
    assert decode_tactic_scores(encode_tactic_scores(5, 3, [], [], True), 3) == (True, [], [])


def _turn_rollouts(tokenizer: Any) -> list[Rollout]:
    problem = Problem("p", 0, 0, "q", "a")
    episodes = [[0.0, 1.0], [0.0, 0.0, 1.0], [1.0], [0.5, 0.0], [0.0, 1.0, 1.0], [0.0]]
    out = []
    for i, scores in enumerate(episodes):
        ids: list[int] = []
        mask: list[int] = []
        turns = []
        for k, r in enumerate(scores):
            turn_ids = [5 + k] * (2 + (i + k) % 3)
            turns.append(Turn(len(ids), len(ids) + len(turn_ids), "", r, r >= 1.0))
            ids += turn_ids
            mask += [1] * len(turn_ids)
            if k + 1 < len(scores):  # feedback glue between turns
                ids += [9, 9]
                mask += [0, 0]
        verdict = Verdict(scores[-1], scores[-1] >= 1.0)
        out.append(Rollout(problem, i // 3, (1,), tuple(ids), (0.0,) * len(ids), "", "stop",
                           loss_mask=tuple(mask), turns=tuple(turns), verdict=verdict))  # fmt: skip
    return out


def test_tcpo_estimator_equals_verirls_tcpo(tokenizer: Any) -> None:
    rollouts = _turn_rollouts(tokenizer)
    inp = CreditInput.from_rollouts(rollouts)
    want = tcpo(inp, TCPOParams(counterfactual=False))
    t = want.shape[1]
    mask = inp.response_mask
    rows = []
    for i, r in enumerate(rollouts):
        spans = turn_spans(mask[i], len(r.response_ids))
        assert spans == [(turn.start, turn.end) for turn in r.turns]
        rows.append(encode_turn_scores(t, spans, [turn.score for turn in r.turns]))
    index = np.array([f"uid-{r.group}" for r in rollouts], dtype=object)
    got, _ = get_adv_estimator_fn("verirl_tcpo")(
        token_level_rewards=torch.stack(rows), response_mask=mask, index=index, config=None
    )
    assert torch.allclose(got, want, atol=1e-6) and want.abs().sum() > 0


def test_turns_manager_scores_each_turn_of_a_multi_turn_sample(tokenizer: Any) -> None:
    p = get_env("addition").generate(0, 3)
    right = get_env("addition").solve(p)
    turn1, glue, turn2 = "\\boxed{0}", " Not right, try again. ", f"\\boxed{{{right}}}"
    ids = [tokenizer.encode(x, add_special_tokens=False) for x in (turn1, glue, turn2)]
    mask = [1] * len(ids[0]) + [0] * len(ids[1]) + [1] * len(ids[2])
    batch = _batch(tokenizer, [p], [""], [mask], token_ids=[ids[0] + ids[1] + ids[2]])
    _, outputs, rm = _run_manager("verirl_turns", tokenizer, batch)
    a, b = len(ids[0]), len(mask)
    assert rm[0, a - 1] == 0.0 and rm[0, b - 1] == 1.0 and rm[0].sum() == 1.0
    assert outputs[0]["reward_extra_info"]["verirl_turns"] == 2.0


@pytest.mark.coq
@pytest.mark.skipif(shutil.which("coqidetop.opt") is None and shutil.which("coqidetop") is None,
                    reason="needs Coq (coqidetop) on PATH")  # fmt: skip
def test_process_manager_with_the_coq_checker_feeds_the_estimator(tokenizer: Any) -> None:
    env = get_env("coq_proofs")
    problems = [env.generate(0, s) for s in (0, 0, 1, 1)]
    rng = random.Random(0)
    texts = [env.solve(problems[0]), env.corrupt(problems[1], env.solve(problems[1]), rng),
             env.solve(problems[2]), "```coq\nProof.\n  admit.\nAdmitted.\n```"]  # fmt: skip
    batch = _batch(tokenizer, list(problems), texts)
    _, outputs, rm = _run_manager("verirl_process", tokenizer, batch)
    correct = [o["reward_extra_info"]["verirl_correct"] for o in outputs]
    assert correct[0] == 1.0 and correct[2] == 1.0 and correct[1] == 0.0 and correct[3] == 0.0
    mask = batch.batch["response_mask"].float()
    index = np.array(["a", "a", "b", "b"], dtype=object)
    got, _ = get_adv_estimator_fn("verirl_process")(rm, mask, index=index)
    # the same through verirl: verdicts from the checker, spans → token starts, process()
    decoded = [tokenizer.decode(batch.batch["responses"][i, : int(mask[i].sum())],
                                skip_special_tokens=True) for i in range(4)]  # fmt: skip
    from verirl.verification.batch import BatchVerifier

    verdicts = BatchVerifier().verify(problems, decoded)
    rollouts = []
    for i in range(4):
        ids = tuple(batch.batch["responses"][i, : int(mask[i].sum())].tolist())
        zeros = (0.0,) * len(ids)
        rollouts.append(Rollout(problems[i], i // 2, (1,), ids, zeros, decoded[i], "stop",
                                verdict=verdicts[i]))  # fmt: skip
    want = process(CreditInput.from_rollouts(rollouts, tokenizer=tokenizer), ProcessParams())
    assert torch.allclose(got[:, : want.shape[1]], want, atol=1e-6)


def test_the_example_config_composes_and_resolves_verirls_plugins(tokenizer: Any) -> None:
    """examples/verl/rlve_grpo.overrides against verl's own hydra config: every key exists,
    and verl's loaders find verirl's dataset, reward manager and estimators."""
    import verl
    from hydra import compose, initialize_config_dir
    from verl.trainer.ppo.reward import resolve_reward_manager_cls
    from verl.utils.dataset.rl_dataset import get_dataset_class

    root = Path(__file__).resolve().parents[3]
    lines = (root / "examples" / "verl" / "rlve_grpo.overrides").read_text().splitlines()
    overrides = [x.strip() for x in lines if x.strip() and not x.lstrip().startswith("#")]
    config_dir = Path(verl.__file__).parent / "trainer" / "config"
    with initialize_config_dir(config_dir=str(config_dir), version_base=None):
        cfg = compose(config_name="ppo_trainer", overrides=[*overrides, "trainer.nnodes=1"])
    assert resolve_reward_manager_cls(cfg) is get_reward_manager_cls("verirl")
    cls = get_dataset_class(cfg.data)
    assert cls is CurriculumDataset
    data = cls(cfg.data.train_files, tokenizer, None, cfg.data)
    assert data.curriculum.environments == tuple(cfg.data.verirl.environments)
    assert data[0]["raw_prompt"][0]["role"] == "system"
    assert len(cls(cfg.data.val_files, tokenizer, None, cfg.data)) == cfg.data.verirl.eval_size
    for name in ("verirl_process", "verirl_tcpo"):
        assert callable(get_adv_estimator_fn(name))


def test_the_curriculum_rides_along_in_verls_dataloader_checkpoint(tokenizer: Any) -> None:
    from torchdata.stateful_dataloader import StatefulDataLoader

    def loader() -> tuple[CurriculumDataset, Any]:
        data = CurriculumDataset("verirl:train", tokenizer, None, _data_config(tau_num=2, window=1))
        return data, StatefulDataLoader(data, batch_size=2, num_workers=0, collate_fn=collate_fn)

    data, dl = loader()
    it = iter(dl)
    next(it)
    data.curriculum.update([("addition", 0, True), ("addition", 0, True)])
    state = dl.state_dict()
    after = next(it)["extra_info"]
    fresh, dl2 = loader()
    dl2.load_state_dict(state)  # restored when the next iterator starts
    resumed = next(iter(dl2))["extra_info"]
    assert [r["verirl_difficulty"] for r in resumed] == [1, 1]
    assert [r["verirl_seed"] for r in resumed] == [r["verirl_seed"] for r in after]
    assert fresh.curriculum.state_dict() == data.curriculum.state_dict()


def test_compute_score_through_verls_own_naive_manager(tokenizer: Any) -> None:
    """reward.custom_reward_function.path=pkg://verirl.integrations.verl.scoring: verl loads
    compute_score itself and its 'naive' manager calls it on a DataProto batch."""
    import verl
    from hydra import compose, initialize_config_dir
    from verl.trainer.ppo.reward import load_reward_manager

    config_dir = Path(verl.__file__).parent / "trainer" / "config"
    overrides = [
        "reward.custom_reward_function.path=pkg://verirl.integrations.verl.scoring",
        "reward.custom_reward_function.name=compute_score",
    ]
    with initialize_config_dir(config_dir=str(config_dir), version_base=None):
        cfg = compose(config_name="ppo_trainer", overrides=overrides)
    manager = load_reward_manager(cfg, tokenizer)
    assert type(manager).__name__ == "NaiveRewardManager"
    problems: list[Problem | None] = [get_env("addition").generate(0, s) for s in range(3)]
    batch = _batch(tokenizer, problems, _texts([p for p in problems if p]))

    async def all_samples() -> list[dict[str, Any]]:
        return list(await asyncio.gather(*(manager.run_single(batch[i : i + 1]) for i in range(3))))

    for i, out in enumerate(manager.loop.run_until_complete(all_samples())):
        p = problems[i]
        assert p is not None
        decoded = tokenizer.decode(batch.batch["responses"][i], skip_special_tokens=True)
        want = get_env("addition").verify(p, decoded)
        assert out["reward_score"] == want.reward
        assert out["reward_extra_info"]["verirl_correct"] == float(want.correct)
