"""The typed training configuration: YAML files plus dotted ``key.sub=value`` overrides.

Every field says what it does, which paper it comes from and which value reproduces it.
This module is the schema only. A training config is a gym config
(:class:`~verirl.serve.settings.GymConfig`: curriculum, verification, provers, sandbox, serve,
envs) plus the training sections; :meth:`TrainConfig.gym` is the gym part on its own.

Pluggable parts (collector, reward source, credit estimator, policy loss, executor, health
detectors, placement, schedule) are named here and carry their own parameter models, registered
next to their code; :mod:`verirl.assembly` checks the names and ``params`` against those
registries, and what each part needs against what the others produce, so a typo in any of them
is reported before the run starts, naming the field (``credit.params.d1: ...``).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from verirl.errors import UserInputError, format_errors
from verirl.registry import Plugin, load_plugins
from verirl.serve.settings import EnvsConfig, GymConfig, GymRunConfig
from verirl.verification.settings import VerificationConfig

__all__ = [
    "ConfigError",
    "EnvsConfig",
    "GymConfig",
    "Plugin",
    "RunConfig",
    "TrainConfig",
    "VerificationConfig",
    "apply_override",
    "dump_config",
    "format_errors",
    "import_plugins",
    "load_config",
    "load_gym_config",
]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class HealthConfig(_Section):
    """Run health (:mod:`verirl.train.health`, docs/run-health.md): detectors that watch
    every step's metrics and warn once — console, run.log, health.jsonl, the report."""

    enabled: bool = Field(True, description="Run the health detectors after every step.")
    stop_on: list[str] = Field(
        default_factory=list,
        description="Detectors whose warning stops the run instead (after the step is logged; "
        "exit status 3), e.g. [non_finite, weight_mismatch]; 'all' for every detector. "
        "Names: truncation, no_signal, weight_mismatch, logprob_drift, reward_hacking, "
        "verifier_failures, non_finite, curriculum_stall, memory_growth.",
    )
    disable: list[str] = Field(
        default_factory=list, description="Detectors not to run (names as in stop_on)."
    )
    params: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Threshold overrides per detector, e.g. {truncation: {max_rate: 0.8}} "
        "(each detector's fields and defaults: docs/run-health.md).",
    )


class RunConfig(GymRunConfig):
    """The ``run:`` section: the gym's (seed, plugins) and the training run's settings."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)
    name: str | None = Field(
        None, description="Run name; the run directory is <dir>/<name> (None: a timestamp)."
    )
    dir: str = Field("runs", description="Parent directory of run directories.")
    steps: int = Field(
        25, ge=0, description="Number of training steps (rollout batches; the default job: 25)."
    )
    save_every: int = Field(
        10, ge=0, description="Write a checkpoint every this many steps (0: only at the end)."
    )
    keep_checkpoints: int = Field(
        1,
        ge=1,
        description="How many of the newest checkpoints (weights, optimizer state, RNGs, "
        "curriculum: what --resume needs) to keep; older ones are deleted after each save. "
        "1 is what resume needs; the final weights (final/) are written besides.",
    )
    loggers: list[Plugin] = Field(
        default_factory=list,
        description="Experiment trackers that receive every step's metrics besides "
        "metrics.jsonl (verirl.train.loggers): 'tensorboard' {dir} (event files in the run "
        "directory), 'wandb' {project, entity, mode: online|offline|disabled, group, tags} "
        "(Weights & Biases; offline: files under <run_dir>/wandb, no network), 'trackio' "
        "{project, space_id, group} (Hugging Face's local-first tracker). A name alone is "
        "enough: [tensorboard, wandb]. The old run.tensorboard=true still adds 'tensorboard'.",
    )
    threads: int | None = Field(
        None, ge=1, description="torch CPU threads (None: torch's default, one per core)."
    )
    allocator: Literal["auto", "tcmalloc", "system"] = Field(
        "auto",
        description="The C memory allocator of a CPU run (verirl.allocator). 'auto': TCMalloc "
        "where it is installed (`verirl train` starts itself again under LD_PRELOAD; Debian: "
        "apt-get install libtcmalloc-minimal4), else glibc's malloc with run.release_memory. "
        "On the default job TCMalloc ran an update in 20-21 s at a 3.0 GB peak, glibc 30-33 s "
        "at 2.9 GB. 'tcmalloc': required (an error where it is missing); 'system': the "
        "process's own malloc.",
    )
    release_memory: bool = Field(
        True,
        description="On a CPU run under glibc's malloc, have it return a freed tensor's memory "
        "to the OS during the learner's update (mallopt: tensors of 1 MB or more mapped on "
        "their own; sampling keeps glibc's fast heap, trimmed when an update begins): without "
        "it the heap keeps every step's freed activations, ~0.8 GB more peak RSS on the "
        "default job. No effect under TCMalloc (run.allocator), which reuses freed memory.",
    )
    check_memory: bool = Field(
        True,
        description="Before any work, plan the step's peak memory (`verirl memory`) and refuse "
        "a run that will not fit this machine, naming the setting that brings it under.",
    )
    log_samples: int = Field(
        4,
        ge=0,
        description="Rollouts per step written to samples.jsonl (problem, response, reward, "
        "verdict detail), to read what the policy actually writes.",
    )
    health: HealthConfig = Field(
        default_factory=HealthConfig,
        description="Run-health detectors: what they watch, their thresholds, which stop the run.",
    )
    placement: Plugin = Field(
        default_factory=lambda: Plugin(name="local"),
        description="Where the loop's parts run (a registered placement, "
        "verirl.backends.PLACEMENTS): 'local' (this process; under torchrun, one rank of a "
        "data-parallel learner group; Ray is never imported) or 'ray' (verifier actors, "
        "rollout-engine replicas and a data-parallel learner group on a Ray cluster; its "
        "params: verirl.integrations.ray.settings.RayParams, docs/scaling.md), or a plug-in's.",
    )
    schedule: Plugin = Field(
        default_factory=lambda: Plugin(name="synchronous"),
        description="When rollouts are produced relative to the learner's updates (a "
        "registered schedule, verirl.backends.SCHEDULES): 'synchronous' (sample, then train, "
        "each step) or 'bounded_staleness' (a producer runs at most params.max_staleness "
        "policy versions ahead; docs/async.md), or a plug-in's.",
    )

    @model_validator(mode="before")
    @classmethod
    def _logger_shorthands(cls, data: Any) -> Any:
        """``loggers: [wandb]`` as ``[{name: wandb}]``; the old ``tensorboard: true`` as a
        ``tensorboard`` logger (``false``, as older run directories' config.yaml hold it, is
        dropped)."""
        if not isinstance(data, dict):
            return data
        out = dict(data)
        loggers = out.get("loggers")
        if isinstance(loggers, str | dict):
            loggers = [loggers]
        if isinstance(loggers, list):
            loggers = [{"name": x} if isinstance(x, str) else x for x in loggers]
            out["loggers"] = loggers
        if "tensorboard" in out:
            old = out.pop("tensorboard")
            if not isinstance(old, bool):
                raise ValueError(f"run.tensorboard must be true or false (got {old!r})")
            names = [x.get("name") for x in loggers or [] if isinstance(x, dict)]
            if old and "tensorboard" not in names:
                out["loggers"] = [*(loggers or []), {"name": "tensorboard"}]
        return out


class LoraConfig(_Section):
    r: int = Field(16, ge=1, description="LoRA rank (process-verified proving paper: 64).")
    alpha: int = Field(32, ge=1, description="LoRA α (process-verified proving paper: 64).")
    dropout: float = Field(0.0, ge=0, lt=1, description="LoRA dropout.")
    target_modules: list[str] = Field(
        default_factory=lambda: [
            "q_proj",
            "k_proj",
            "v_proj",
            "o_proj",
            "gate_proj",
            "up_proj",
            "down_proj",
        ],
        description="Module names that get adapters.",
    )


class ModelConfig(_Section):
    name: str = Field(
        "smollm2-135m-instruct",
        description="'smollm2-135m-instruct' (bundled; converted from its GGUF on first use) "
        "or a local Hugging Face model directory. Nothing is downloaded.",
    )
    lora: LoraConfig | None = Field(
        None, description="Train a LoRA adapter instead of all weights (None: full fine-tuning)."
    )
    device: str = Field(
        "auto",
        description="Where the policy runs: 'auto' (the first CUDA device, else the CPU), "
        "'cpu', 'cuda' or 'cuda:N'. Model, sampling, learner and scorer batches all go there.",
    )
    dtype: Literal["auto", "fp32", "bf16"] = Field(
        "auto",
        description="Precision of forward/backward passes (weights and optimizer state stay "
        "fp32): 'bf16' autocast, 'fp32', or 'auto' = bf16 on a CUDA device with bf16, fp32 on "
        "the CPU (emulated bf16 on AVX2 is several times slower; with AMX a step is ~11% "
        "faster but the numerics change, so bf16 is opt-in there). The run log says which.",
    )

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: Any) -> Any:
        if isinstance(data, dict) and "autocast" in data:
            raise ValueError(
                "model.autocast was replaced by model.dtype (auto | fp32 | bf16; "
                "autocast=none is dtype=fp32)"
            )
        return data


class RolloutConfig(_Section):
    prompts_per_step: int = Field(
        8, ge=1, description="Prompts (groups) trained on per step. RLVE: 128; CER: 32."
    )
    group_size: int = Field(
        6,
        ge=1,
        description="Samples per prompt G. RLVE and CER: 16; process proving: 4; the default "
        "job: 6 (sized for a 2-core CPU without native bf16).",
    )
    temperature: float = Field(
        1.0, ge=0, description="Sampling temperature (RLVE, CER: 1.0; process proving: 0.9)."
    )
    top_p: float = Field(1.0, gt=0, le=1, description="Nucleus sampling mass (papers: 1.0).")
    max_new_tokens: int = Field(
        48,
        ge=1,
        description="Response length limit in tokens (RLVE: 8192 to 24576; the default job's "
        "arithmetic answers take about 16).",
    )
    stop: list[str] = Field(
        default_factory=list, description="Stop strings (generation ends after one appears)."
    )
    system_prompt: str | None = Field(
        "Solve the task. End your reply with the final answer in \\boxed{}.",
        description="System message of every prompt; None keeps the chat template's default.",
    )
    few_shot: list[tuple[str, str]] = Field(
        default_factory=lambda: [
            ("Compute 4 + 3.\n\nPut your final answer within \\boxed{}.", "4 + 3 = 7\n\\boxed{7}")
        ],
        description="(user, assistant) pairs shown before every problem as earlier chat turns: "
        "a format demonstration. SmolLM2-135M never writes \\boxed{} zero-shot; one example "
        "makes it do so about half the time. [] for zero-shot.",
    )
    prompt_variants: bool = Field(
        True,
        description="Draw each problem's system message from several phrasings (all asking "
        "for the environment's answer format) instead of system_prompt alone, so the format "
        "skill is not tied to one prompt.",
    )
    zero_shot_rate: float = Field(
        0.25,
        ge=0,
        le=1,
        description="Share of problems shown without the few_shot demonstrations (drawn per "
        "problem; every sample of a group sees the same prompt). RLVE trains zero-shot (1.0).",
    )
    engine: Plugin = Field(
        default_factory=lambda: Plugin(name="hf"),
        description="The rollout engine: 'hf' (transformers, the learner's own module or a "
        "low-precision copy; params: max_batch_sequences, continuous_batching, precision) or "
        "'vllm' (an in-process vllm.LLM, weights synced in "
        "place after every update; params: enforce_eager, kv_cache_gib, max_model_len, dtype, "
        "gpu_memory_utilization, sleep_between_steps, ...; needs the vllm extra).",
    )
    collector: Plugin = Field(
        default_factory=lambda: Plugin(name="single_turn"),
        description="How an episode unfolds: 'single_turn', or 'multi_turn' (refinement with "
        "verifier feedback; TCPO).",
    )


class DynamicSamplingConfig(_Section):
    enabled: bool = Field(
        False,
        description="DAPO dynamic sampling (Yu et al. 2025, §3.2): drop groups whose rewards "
        "are all equal and refill from new prompts. DAPO and RLVE: on.",
    )
    max_rounds: int = Field(
        3, ge=1, description="Generation rounds per step at most (then train on what is kept)."
    )
    filter: Plugin = Field(
        default_factory=lambda: Plugin(name="reward_variance"),
        description="Which groups are kept (verirl.train.group_filters.GROUP_FILTERS): "
        "'reward_variance' (rewards not all equal; verl's filter_groups on the score) or "
        "'mixed_correctness' (neither all correct nor all wrong: DAPO's eq. 11).",
    )


class OverlongConfig(_Section):
    buffer: int = Field(
        0,
        ge=0,
        description="DAPO soft overlong punishment L_cache (eq. 13): responses longer than "
        "max_new_tokens − buffer get a linear penalty added to the reward. 0 disables it "
        "(RLVE: not used; DAPO: 4096 of 20480).",
    )


class LossConfig(_Section):
    policy: Plugin = Field(
        default_factory=lambda: Plugin(name="clipped_surrogate"),
        description="The per-token policy loss (verirl.train.loss.POLICY_LOSSES): "
        "'clipped_surrogate' {eps_low, eps_high, dual_clip} (DAPO: 0.2/0.28; PPO: 0.2/0.2), "
        "'cispo' {eps_high, eps_low} (clipped IS weight, MiniMax-M1, arXiv 2506.13585), 'sapo' "
        "{tau_pos, tau_neg} (soft gate, arXiv 2511.20347). See docs/methods/losses.md.",
    )
    aggregation: str = Field(
        "token-mean",
        description="How per-token losses become one number (a registered aggregation, "
        "verirl.train.loss.AGGREGATIONS): 'token-mean' (DAPO), 'seq-mean-token-mean' (GRPO, "
        "RLVE), 'seq-mean-token-sum' (CER's code), 'seq-mean-token-sum-norm' (Dr. GRPO, "
        "C = max_new_tokens).",
    )
    terms: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Per-token terms added to the policy loss, by registered name (verirl.train."
        "terms.LOSS_TERMS) with their parameters, each with a coefficient coef: 'kl' {coef: β, "
        "estimator: k1|k2|k3} (KL to the initial policy; GRPO: β 0.04, k3; DAPO, RLVE, CER, "
        "TRL: none), 'entropy' {coef, adaptive, target, delta, coef_min, coef_max} (entropy "
        "bonus, static or adaptive as Skywork-OR1 and TRL), 'distill' {coef, form} (on-policy "
        "distillation: the per-token reverse KL to loss.sources.teacher; Thinking Machines "
        "2025, GKD arXiv 2306.13649). E.g. loss.terms.kl.coef=0.04. Empty: the policy loss "
        "alone (the default).",
    )
    sources: dict[str, Plugin] = Field(
        default_factory=dict,
        description="Per-token inputs of loss terms that read other models, by the name the "
        "terms read (verirl.train.terms.TOKEN_SOURCES), computed once per rollout batch without "
        "gradient; built only when an active term reads them. 'teacher' (read by the distill "
        "term): {name: checkpoint, params: {path}} (a frozen causal LM sharing the policy's "
        "tokenizer: on-policy distillation, Thinking Machines 2025 / GKD arXiv 2306.13649) or "
        "{name: privileged_self, params: {context, min_reward, ema}} (the policy itself with "
        "one of the group's successful rollouts in context, SDPO arXiv 2601.20802, or with the "
        "reference answer, OPSD arXiv 2601.18734; at its own weights or their moving average). "
        "E.g. loss.sources.teacher.name=checkpoint loss.sources.teacher.params.path=DIR.",
    )
    token_mask: Plugin = Field(
        default_factory=lambda: Plugin(name="none"),
        description="Which tokens carry the policy gradient (verirl.train.token_masks."
        "TOKEN_MASKS): 'none' (all) or 'top_entropy' {rho} (only the highest-entropy ρ of each "
        "minibatch's tokens; 'Beyond the 80/20 Rule', arXiv 2506.01939: ρ 0.2).",
    )
    tis_cap: float | None = Field(
        None,
        gt=0,
        description="Shorthand kept for older configs: the same as off_policy {name: "
        "truncated_is, params: {cap: tis_cap}} (Yao et al. 2025, 'Your Efficient RL Framework "
        "Secretly Brings You Off-Policy RL Training'; their C: 2). None: off.",
    )
    off_policy: Plugin | list[Plugin] = Field(
        default_factory=lambda: Plugin(name="none"),
        description="Off-policy correction(s) of tokens sampled by another policy than the "
        "surrogate's anchor (an engine with its own numerics, or one running "
        "run.schedule.params.max_staleness versions behind): 'none', 'truncated_is' {cap} "
        "(TIS), 'masked_is' {cap, level: token|sequence} (MIS), 'icepop' {low, high} "
        "(Ring-1T), 'gspo' (sequence-level ratio, arXiv 2507.18071), 'decoupled_ppo' {cap} "
        "(AReaL, arXiv 2505.24298). A list "
        "applies several in order (weights multiply). See docs/async.md for which to choose.",
    )

    def corrections(self) -> list[Plugin]:
        """The corrections to apply, in order (``tis_cap`` resolved)."""
        listed = self.off_policy if isinstance(self.off_policy, list) else [self.off_policy]
        listed = [p for p in listed if p.name != "none"]
        if self.tis_cap is not None:
            listed.insert(0, Plugin(name="truncated_is", params={"cap": self.tis_cap}))
        return listed

    @model_validator(mode="before")
    @classmethod
    def _moved(cls, data: Any) -> Any:
        if isinstance(data, dict) and "overlong" in data:
            raise ValueError(
                "loss.overlong moved to reward.overlong (DAPO's overlong punishment is "
                "reward shaping, e.g. reward.overlong.buffer=32)"
            )
        if isinstance(data, dict) and ("kl_coef" in data or "kl_estimator" in data):
            raise ValueError(
                "loss.kl_coef and loss.kl_estimator moved to the 'kl' loss term: "
                "loss.terms.kl.coef=β and loss.terms.kl.estimator=k3"
            )
        return data


class RewardConfig(Plugin):
    """The reward source by name, with its parameters and the shaping applied to it."""

    overlong: OverlongConfig = Field(default_factory=OverlongConfig)


class OptimConfig(_Section):
    lr: float = Field(
        2e-5,
        gt=0,
        description="AdamW learning rate. RLVE: 2e-6 (1.5B models); CER: 1e-6 (8B). The default "
        "2e-5 suits the 135M default model's 25-step default job (+22.8 held-out points against "
        "+20.0 at 1e-5, same job).",
    )
    optimizer: Plugin = Field(
        default_factory=lambda: Plugin(name="adamw"),
        description="The optimizer, by registered name (verirl.train.optimizers): 'adamw' "
        "(torch, fused kernel; 8 bytes of state per trainable parameter), 'adamw_8bit' "
        "(bitsandbytes, 8-bit block-wise state, ~2 bytes; CPU and CUDA), 'paged_adamw_8bit' / "
        "'paged_adamw' (bitsandbytes, state paged out to CPU RAM; CUDA only). The 8-bit ones "
        "need the optim extra.",
    )
    weight_decay: float = Field(0.01, ge=0, description="AdamW weight decay. RLVE: 0.01.")
    betas: tuple[float, float] = Field((0.9, 0.98), description="AdamW betas. RLVE: (0.9, 0.98).")
    warmup_steps: int = Field(0, ge=0, description="Linear warmup, in optimizer steps.")
    schedule: str = Field(
        "constant",
        description="LR schedule after warmup, a registered one (verirl.train.lr_schedules."
        "LR_SCHEDULES): 'constant' (RLVE, DAPO), 'linear' (decay to 0; transformers' and TRL's "
        "default) or 'cosine' (half a cosine to 0).",
    )
    grad_clip: float = Field(1.0, gt=0, description="Max global gradient norm (papers: 1.0).")
    epochs: int = Field(
        1, ge=1, description="Passes over each rollout batch (RLVE, CER: 1 update per batch)."
    )
    minibatches: int = Field(
        1, ge=1, description="Optimizer steps per epoch; the batch is split in this many."
    )
    micro_batch_tokens: int = Field(
        8192,
        ge=1,
        description="Gradient accumulation: at most this many padded tokens per forward pass "
        "(bounds memory, not the math).",
    )
    share_prompt_prefix: bool = Field(
        True,
        description="Encode each distinct prompt once per micro-batch and share its keys/"
        "values among the group's responses (same gradients, ~G× less prompt compute), where "
        "that pays: the responses then attend through a mask, which costs more than the "
        "prompt saves at a few thousand response tokens (verirl.lm.passes."
        "prefix_sharing_pays). False runs every prompt ⊕ response in full.",
    )
    skip_zero_advantage_rows: bool = Field(
        True,
        description="Skip the rows whose every advantage is 0 (a GRPO group of equal rewards) "
        "in the forward/backward passes: with an advantage-gated policy loss (clipped_surrogate, "
        "cispo, sapo) and no loss term that is not (kl, entropy) they add exactly nothing to "
        "the loss or the gradient, and "
        "their tokens still count in the aggregation's normaliser, so the update is the same "
        "at the cost of the rows with signal (the default job: about half). train/entropy, "
        "clip_frac and the ratio statistics are then over the rows trained "
        "(train/rows_trained: their share). False runs every row.",
    )
    logprob_chunk_tokens: Annotated[int, Field(ge=1)] | Literal["auto"] = Field(
        "auto",
        description="Positions per chunk of the output head when log-probs are taken (learner, "
        "π_old, reference, CER/VeriFree scorers): logits are built, reduced and freed one "
        "chunk at a time and recomputed in backward, so no [N, R, vocab] tensor exists. "
        "'auto': 64 MiB of float32 logits per chunk on a CPU (341 positions for a 49k "
        "vocabulary), 512 MiB on a GPU. prime-rl's RL default is 8192 positions.",
    )
    activation_checkpointing: bool | Literal["auto"] = Field(
        "auto",
        description="Recompute each decoder layer's activations in the backward pass instead "
        "of keeping them (about one more forward pass of compute; activation memory from "
        "layers × everything a layer saves to layers × hidden). Works with LoRA, the shared "
        "prompt prefix and the data-parallel learner. 'auto' (the default): decided from the "
        "memory plan (`verirl memory`) on this machine — off when the step without it fits "
        "comfortably (its planned peak within 80% of the memory available), since then it "
        "only costs time; on otherwise; the log says which and why. true: always on (TRL's "
        "gradient_checkpointing and prime-rl keep it on).",
    )
    old_logprobs: Literal["auto", "rollout", "recompute"] = Field(
        "auto",
        description="Where π_old comes from: the engine's sampling log-probs ('rollout'; exact "
        "when the engine shares the learner's weights) or a no-grad learner pass ('recompute'; "
        "verl's default). 'auto': 'rollout' for the hf engine on the learner's module, "
        "'recompute' for an engine with its own numerics (vllm, or hf with a low-precision "
        "copy: rollout.engine.params.precision) or when loss.tis_cap is set. With one "
        "epoch of one minibatch a recompute costs no pass of its own: π_old is the update's "
        "own forward pass, detached (the policy has not moved yet).",
    )


class EvalConfig(_Section):
    environments: list[str] | None = Field(
        None, description="Environments evaluated (None: the curriculum's)."
    )
    difficulties: list[int] = Field(
        default_factory=lambda: [0, 1, 2], description="Difficulties evaluated per environment."
    )
    problems: int = Field(
        20,
        ge=1,
        description="Held-out problems per (environment, difficulty); their seeds are disjoint "
        "from training seeds. The default job: 20 (180 problems, evaluated under two prompts "
        "before and after training).",
    )
    samples: int = Field(
        1,
        ge=1,
        description="k samples per problem; accuracy is their mean (avg@k). `verirl eval "
        "--pass-k 1 k` also prints the unbiased pass@k with 95% intervals.",
    )
    temperature: float = Field(0.0, ge=0, description="0 = greedy decoding.")
    before_and_after: bool = Field(
        True, description="Evaluate before the first step and after the last one."
    )
    unseen_prompt: bool = Field(
        True,
        description="Also evaluate under a prompt the run never trains with: a plain chat "
        "(the chat template's own system message, no demonstration), the problem and its "
        "answer instruction only — does the format skill carry beyond the training prompt?",
    )


class TrainConfig(GymConfig):
    """A training run: the gym's sections (:class:`~verirl.serve.settings.GymConfig`) and the
    training ones."""

    run: RunConfig = Field(default_factory=RunConfig)
    model: ModelConfig = Field(default_factory=ModelConfig)
    rollout: RolloutConfig = Field(default_factory=RolloutConfig)
    reward: RewardConfig = Field(
        default_factory=lambda: RewardConfig(name="env"),
        description="Reward source: 'env' (the environment's verifier, RLVE), 'exact_match', "
        "'rule', 'verifree', 'cer', 'rule_cer'.",
    )
    credit: Plugin = Field(
        default_factory=lambda: Plugin(name="grpo"),
        description="Credit estimator: 'grpo', 'dr_grpo', 'rloo', 'max_rl' (MaxRL, arXiv "
        "2602.02710), 'gdpo' {components} (per-component normalisation, arXiv 2601.05242), "
        "'process', 'tcpo', ... (docs/methods/losses.md).",
    )
    dynamic_sampling: DynamicSamplingConfig = Field(default_factory=DynamicSamplingConfig)
    loss: LossConfig = Field(default_factory=LossConfig)
    optim: OptimConfig = Field(default_factory=OptimConfig)
    eval: EvalConfig = Field(default_factory=EvalConfig)

    def gym(self) -> GymConfig:
        """The gym part of this config on its own: what the problem source and a ``verirl
        serve`` gym read (``envs.curriculum`` defaults to ``run.name`` here)."""
        envs = self.envs
        if envs.curriculum is None and self.run.name is not None:
            envs = envs.model_copy(update={"curriculum": self.run.name})
        return GymConfig.model_construct(
            run=GymRunConfig.model_construct(seed=self.run.seed, plugins=list(self.run.plugins)),
            curriculum=self.curriculum,
            verification=self.verification,
            provers=self.provers,
            sandbox=self.sandbox,
            serve=self.serve,
            envs=envs,
        )

    @model_validator(mode="after")
    def _consistent(self) -> TrainConfig:
        """Checks between sections of the schema itself; what needs the registries (do the
        named parts exist, are their params right, does each part get what it needs) is
        :func:`verirl.assembly.check`."""
        if self.reward.overlong.buffer > self.rollout.max_new_tokens:
            raise ValueError(
                f"reward.overlong.buffer ({self.reward.overlong.buffer}) exceeds "
                f"rollout.max_new_tokens ({self.rollout.max_new_tokens})"
            )
        if self.loss.tis_cap is not None and self.optim.old_logprobs == "rollout":
            raise ValueError(
                "loss.tis_cap needs the learner's own old log-probs: set optim.old_logprobs "
                "to 'auto' or 'recompute' (with 'rollout' the importance ratio is always 1)"
            )
        self._check_envs_server()
        return self

    def _check_envs_server(self) -> None:
        """A server-fed run: a well-formed URL, a curriculum name, and only the parts that
        work from the server's verdicts alone (the server never sends reference answers)."""
        e = self.envs
        if e.server is None:
            return
        if not e.server.startswith(("http://", "https://")) or len(e.server) > 2000:
            raise ValueError(f"envs.server must be an http:// or https:// URL, got {e.server!r}")
        from verirl.serve.store import NAME_PATTERN

        name = e.curriculum or self.run.name
        if name is None:
            raise ValueError(
                "envs.server needs the server's curriculum name: set envs.curriculum or run.name"
            )
        if not NAME_PATTERN.match(name):
            raise ValueError(
                f"envs.curriculum (or run.name) {name!r} is not a server curriculum name: 1-64 "
                "letters, digits, '_', '.', '-', starting with a letter or digit"
            )
        if self.reward.name != "env":
            raise ValueError(
                f"envs.server gives the environment's verdicts: reward.name must be 'env', got "
                f"{self.reward.name!r} (other reward sources need the reference answer, which "
                "the server never sends)"
            )
        if self.rollout.collector.name != "single_turn":
            raise ValueError(
                "envs.server supports rollout.collector 'single_turn' only (each verdict the "
                f"server gives counts towards its curriculum), got {self.rollout.collector.name!r}"
            )
        if self.run.placement.name != "local":
            raise ValueError(
                f"envs.server with run.placement {self.run.placement.name!r} is not supported yet"
            )


class ConfigError(UserInputError):
    """A configuration problem, described in one line that names the field."""


def bundled_examples() -> list[str]:
    """The example configs shipped inside the package (``verirl/examples/*.yaml``), by name."""
    root = resources.files("verirl") / "examples"
    return sorted(e.name.removesuffix(".yaml") for e in root.iterdir() if e.name.endswith(".yaml"))


def bundled_example(name: str) -> Path | None:
    """The bundled example config called ``name`` (``cer`` or ``cer.yaml``), or None. Only a bare
    name is looked up, so a mistyped path is still reported as missing."""
    if "/" in name or "\\" in name:
        return None
    path = Path(str(resources.files("verirl") / "examples" / f"{name.removesuffix('.yaml')}.yaml"))
    return path if path.is_file() else None


def load_config(path: str | Path | None = None, overrides: list[str] | None = None) -> TrainConfig:
    """Read ``path`` (YAML, or the name of a bundled example such as ``cer``; None = all
    defaults), apply ``key.sub=value`` overrides, import ``run.plugins``, validate the schema.

    The parts the config names are checked against their registries by
    :func:`verirl.assembly.check` (the ``Trainer`` runs it; :func:`verirl.assembly.load_config`
    is this plus that check, as the CLI loads a config)."""
    data = _read(path, overrides)
    try:
        return TrainConfig.model_validate(_merged(TrainConfig().model_dump(mode="json"), data))
    except ValidationError as exc:
        raise ConfigError(format_errors(exc, "")) from None
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def load_gym_config(
    path: str | Path | None = None, overrides: list[str] | None = None
) -> GymConfig:
    """A gym config (what ``verirl serve`` takes), read like :func:`load_config`. A training
    config is accepted too: it is checked as one and its gym part kept
    (:meth:`TrainConfig.gym`), so one file serves and trains."""
    data = _read(path, overrides)
    run = data.get("run")
    gym_only = set(data) <= set(GymConfig.model_fields) and (
        not isinstance(run, dict) or set(run) <= set(GymRunConfig.model_fields)
    )
    if not gym_only:
        return load_config(path, overrides).gym()
    try:
        return GymConfig.model_validate(_merged(GymConfig().model_dump(mode="json"), data))
    except ValidationError as exc:
        raise ConfigError(format_errors(exc, "")) from None
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _read(path: str | Path | None, overrides: list[str] | None) -> dict[str, Any]:
    """``path``'s YAML mapping (or a bundled example's) with ``overrides`` applied and
    ``run.plugins`` imported; {} for no path."""
    data: dict[str, Any] = {}
    if path is not None:
        p = Path(path)
        if not p.is_file():
            bundled = bundled_example(str(path))
            if bundled is None:
                names = ", ".join(bundled_examples())
                raise ConfigError(
                    f"config file {str(p)!r} does not exist (bundled examples, usable by name: "
                    f"{names})"
                )
            p = bundled
        try:
            loaded = yaml.safe_load(p.read_text())
        except yaml.YAMLError as exc:
            raise ConfigError(f"config file {str(p)!r} is not valid YAML: {exc}") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(f"config file {str(p)!r} must hold a mapping at the top level")
        data = loaded or {}
    # a component's new name first, so that its parameters given beside it survive
    names_first = sorted(overrides or [], key=lambda item: not _names_a_component(item))
    for item in names_first:
        apply_override(data, item)
    import_plugins(data)
    return data


def _names_a_component(item: str) -> bool:
    return item.split("=", 1)[0].strip().endswith(".name")


def apply_override(data: dict[str, Any], item: str) -> None:
    """Apply ``a.b.c=value`` to nested ``data``; the value is parsed as YAML (``3``, ``1e-5``,
    ``true``, ``[a, b]``, ``null``). Naming another component (``x.name=other`` where ``x``
    names one already) drops ``x.params``: they were the old component's, as in
    :func:`_merged`."""
    if "=" not in item:
        raise ConfigError(f"override {item!r} must look like key.sub=value")
    key, raw = item.split("=", 1)
    parts = key.strip().split(".")
    if not all(parts):
        raise ConfigError(f"override {item!r} has an empty key segment")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    node = data
    for part in parts[:-1]:
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        elif not isinstance(child, dict):
            raise ConfigError(f"override {item!r}: {part!r} is not a section")
        node = child
    if parts[-1] == "name" and node.get("name") not in (None, value):
        node.pop("params", None)
    node[parts[-1]] = value


def import_plugins(data: dict[str, Any]) -> None:
    """Import the modules ``run.plugins`` names (in ``data``, the raw config), so that what
    they register (environments, reward sources, estimators, ...) exists before anything is
    checked against the registries."""
    plugins = (data.get("run") or {}).get("plugins") or []
    if not isinstance(plugins, list):
        raise ConfigError(f"run.plugins must be a list of module names (got {plugins!r})")
    for name in plugins:
        try:
            load_plugins([str(name)])
        except Exception as exc:
            raise ConfigError(
                f"run.plugins: cannot import {name!r}: {type(exc).__name__}: {exc}"
            ) from None


def _merged(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """``update`` laid over ``base`` section by section (mappings merge, the rest replaces).
    A component's ``params`` always come from ``update`` alone when it names another
    component, so parameters of the default never leak into a different one."""
    out = dict(base)
    for key, value in update.items():
        old = out.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            if "name" in value and value.get("name") != old.get("name"):
                out[key] = value
            else:
                out[key] = _merged(old, value)
        else:
            out[key] = value
    return out


def dump_config(cfg: GymConfig) -> str:
    return yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False)
