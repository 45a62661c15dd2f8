"""The memory of a training step, planned before the run from the config and the model's
``config.json`` (no weights loaded).

What a step holds, in bytes:

=====================  ==========================================================================
runtime                Python, torch, transformers and verirl in the trainer process (CPU only:
                       measured constant); the CUDA context on a GPU
weights                every parameter, float32 (autocast keeps fp32 weights)
gradients              every trainable parameter, float32
optimizer              trainable × the optimizer's state bytes (``optim.optimizer``: 8 for AdamW)
reference              a frozen float32 copy of the weights (KL on, full fine-tuning)
sampling copy          a low-precision copy the hf engine samples from
                       (``rollout.engine.params.precision``): ``w8a16`` int8 linear layers (the
                       head untied) and float32 embedding and norms; ``bf16`` every weight in
                       bfloat16 (the head untied); ``int8`` as ``w8a16`` with the MLP's down
                       projection float32
teacher                a distillation teacher (``loss.sources``, read by an active term): a
                       checkpoint teacher's float32 weights, or an EMA self-teacher's float32
                       copy of the trainable parameters (its scoring pass runs without
                       gradient before the update, under the learner's peak)
activations            what the backward pass of the largest micro-batch keeps: per token and
                       decoder layer ≈ (8.5·hidden + 4·intermediate + 2·kv) floats for a
                       Llama-style layer (fitted on Llama, Qwen2 and SmolLM2 shapes), or the
                       layer input alone with activation checkpointing (plus one layer's worth
                       while it is recomputed), and the backward pass's own temporaries
log-prob chunk         a plain linear head (the default): one tile of float32 logits and the
                       one its backward pass rebuilds (×2, :mod:`verirl.lm.linear_head`); any
                       other head: one chunk of float32 logits and what its backward needs
                       (×5); both plus the output head's weight gradient
generation             the rollout engine's key/value cache and logits while it samples (the
                       hf engine shares the weights; vLLM holds its own copy and cache)
workers                verifier worker processes (and proof checkers)
=====================  ==========================================================================

The peak is ``runtime + weights + optimizer + reference + sampling copy + teacher +
max(learner, generation) + workers``, where ``learner = gradients + activations + log-prob
chunk``. It is checked against
measured peaks of real runs on CPU configurations (``tests/train/test_memory_plan.py``, ±20%).
:func:`suggest_fix` names the first setting that brings a plan under a memory limit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from verirl.config import TrainConfig

GB = 1e9
GIB = 2**30

# Calibrated on this project's CPU machine (Python 3.11, torch 2.13, transformers 5.19): the
# trainer process's RSS before the model is built, one verifier worker process (all
# environments loaded, no torch), the fork server and resource tracker beside them.
RUNTIME_CPU = 0.47 * GB
WORKER_PROCESS = 0.095 * GB
POOL_OVERHEAD = 0.035 * GB
COQ_WORKER = 0.12 * GB
CUDA_CONTEXT = 0.6 * GB
# The fitted activation floats per token and decoder layer (fp32, Llama-style layer).
ACT_HIDDEN, ACT_INTERMEDIATE, ACT_KV = 8.5, 4.0, 2.0
BF16_ACTIVATION_FACTOR = 0.65  # autocast keeps the norms in fp32
LOGIT_CHUNK_COPIES = 5.0  # logits, softmax, their gradient, float copies in backward
LINEAR_TILE_COPIES = 2.0  # the tiled linear head: a tile's logits, rebuilt once in backward
# Layer recompute and the backward pass's activation gradients, per token of one layer:
# about one layer's activations twice over.
BACKWARD_LAYER_COPIES = 2.0
COMFORTABLE = 0.8
"""'auto' activation checkpointing stays off while the step's planned peak without it is at most
this share of the memory available (the plan's margin for what it does not model)."""


@dataclass(frozen=True)
class ModelShape:
    """What the plan needs to know of a model, read off its config (meta device: no memory,
    no weights)."""

    params: int
    layers: int
    hidden: int
    intermediate: int
    q_dim: int
    kv_dim: int
    vocab: int
    tied: bool

    @classmethod
    def from_hf_config(cls, config: Any) -> ModelShape:
        import torch
        from transformers import AutoModelForCausalLM

        text = config.get_text_config() if hasattr(config, "get_text_config") else config
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(config)
        params = sum(p.numel() for p in model.parameters())
        hidden = int(text.hidden_size)
        heads = int(text.num_attention_heads)
        head_dim = int(getattr(text, "head_dim", None) or hidden // heads)
        kv_heads = int(getattr(text, "num_key_value_heads", None) or heads)
        return cls(
            params=params,
            layers=int(text.num_hidden_layers),
            hidden=hidden,
            intermediate=int(getattr(text, "intermediate_size", 4 * hidden)),
            q_dim=heads * head_dim,
            kv_dim=kv_heads * head_dim,
            vocab=int(text.vocab_size),
            tied=bool(getattr(text, "tie_word_embeddings", False)),
        )

    def lora_params(self, r: int, targets: tuple[str, ...]) -> int:
        """Trainable parameters of a rank-``r`` LoRA adapter on the named projections."""
        h, i, q, kv = self.hidden, self.intermediate, self.q_dim, self.kv_dim
        shapes = {
            "q_proj": (h, q),
            "k_proj": (h, kv),
            "v_proj": (h, kv),
            "o_proj": (q, h),
            "gate_proj": (h, i),
            "up_proj": (h, i),
            "down_proj": (i, h),
        }
        per_layer = sum(r * (a + b) for name, (a, b) in shapes.items() if name in targets)
        return per_layer * self.layers


@dataclass(frozen=True)
class StepShape:
    """The sizes of one step: ``prompts`` × ``group`` rows of ``prompt_tokens`` (longest)
    and ``response_tokens`` (max new tokens)."""

    prompts: int
    group: int
    prompt_tokens: int
    response_tokens: int


@dataclass(frozen=True)
class PlanInputs:
    """Everything :func:`compute_plan` reads (so a test or the bench can vary one thing)."""

    shape: ModelShape
    step: StepShape
    device: str = "cpu"
    bf16: bool = False
    trainable: int | None = None  # None: every parameter (full fine-tuning)
    lora: bool = False
    optimizer_state_bytes: float = 8.0
    kl_reference: bool = False
    activation_checkpointing: bool = False
    chunk_tokens: int | None = None
    micro_batch_tokens: int = 8192
    share_prompt_prefix: bool = True
    engine: str = "hf"
    engine_batch: int | None = 64  # None: every sequence of the step at once
    engine_kv_bytes: float = 0.0  # vLLM's configured KV cache space
    workers: int = 0
    coq_workers: int = 0
    chunked_logprobs: bool = True  # False: the full-logits path (before chunking)
    linear_head: bool = True  # the tiled path (verirl.lm.linear_head); False: a LoRA'd head
    teacher_bytes: float = 0.0  # a distillation teacher's weights (checkpoint, EMA copy)
    sampling_copy: str | None = None  # the hf engine's low-precision copy (its precision)


@dataclass(frozen=True)
class MemoryPlan:
    """Bytes per component, the peak, and the limit it is checked against."""

    device: str
    components: dict[str, float]
    peak: float
    limit: float | None
    learner_tokens: int
    inputs: PlanInputs
    why: str = ""  # 'auto' activation checkpointing: the choice and its reason, for the log

    @property
    def activation_checkpointing(self) -> bool:
        return self.inputs.activation_checkpointing

    @property
    def fits(self) -> bool:
        return self.limit is None or self.peak <= self.limit

    def lines(self) -> list[str]:
        out = [f"{name:<16} {value / GB:8.2f} GB" for name, value in self.components.items()]
        out.append(f"{'peak':<16} {self.peak / GB:8.2f} GB")
        if self.limit is not None:
            verdict = "fits" if self.fits else "does NOT fit"
            out.append(f"{'limit':<16} {self.limit / GB:8.2f} GB ({verdict})")
        return out


def compute_plan(p: PlanInputs, limit: float | None = None) -> MemoryPlan:
    """The plan of :class:`PlanInputs` (see the module docstring for each term)."""
    from verirl.lm.head import auto_chunk_tokens

    s, st = p.shape, p.step
    cuda = p.device.startswith("cuda")
    trainable = p.trainable if p.trainable is not None else s.params
    c: dict[str, float] = {}
    c["runtime"] = CUDA_CONTEXT if cuda else RUNTIME_CPU
    c["weights"] = 4.0 * s.params
    c["optimizer"] = p.optimizer_state_bytes * trainable
    if p.kl_reference and not p.lora:
        c["reference"] = 4.0 * s.params
    if p.sampling_copy:
        c["sampling copy"] = sampling_copy_bytes(s, p.sampling_copy)
    if p.teacher_bytes:
        c["teacher"] = p.teacher_bytes
    # the learner: the largest micro-batch's tokens (as the learner packs them)
    tokens, response_tokens = _largest_micro_batch(p)
    per_token_layer = ACT_HIDDEN * s.hidden + ACT_INTERMEDIATE * s.intermediate + ACT_KV * s.kv_dim
    act_bytes = 4.0 * (BF16_ACTIVATION_FACTOR if p.bf16 else 1.0)
    layer_bytes = per_token_layer * act_bytes * tokens
    if p.activation_checkpointing:
        activations = s.layers * tokens * s.hidden * 4.0 + (1 + BACKWARD_LAYER_COPIES) * layer_bytes
    else:
        activations = s.layers * layer_bytes + BACKWARD_LAYER_COPIES * layer_bytes
    if p.bf16:  # autocast's bf16 copies of the weights, saved for the backward pass
        activations += 2.0 * s.params
    head_grad = 4.0 * s.vocab * s.hidden  # one chunk's gradient of the head weight
    if p.chunked_logprobs:
        chunk = p.chunk_tokens or auto_chunk_tokens(s.vocab, "cuda" if cuda else "cpu")
        chunk = min(chunk, response_tokens)
        copies = LINEAR_TILE_COPIES if p.linear_head else LOGIT_CHUNK_COPIES
        logits = copies * 4.0 * chunk * s.vocab + head_grad
    else:  # every response token's logits: float32 copy, logsumexp input, their gradients
        logits = 3.0 * 4.0 * response_tokens * s.vocab + head_grad
    learner = 4.0 * trainable + activations + logits
    # generation: the engine's cache for one batch of sequences and its logits
    rows = min(p.engine_batch or st.prompts * st.group, st.prompts * st.group)
    kv_bytes = 2.0 if p.bf16 else 4.0
    kv = rows * (st.prompt_tokens + st.response_tokens) * s.layers * 2 * s.kv_dim * kv_bytes
    generation = kv + 3 * 4.0 * rows * s.vocab
    if p.engine == "vllm":
        generation = p.engine_kv_bytes + 4.0 * s.params
    c["gradients"] = 4.0 * trainable
    c["activations"] = activations
    c["log-prob chunk"] = logits
    c["generation"] = generation
    procs = 0.0
    if p.workers:
        procs += POOL_OVERHEAD + p.workers * WORKER_PROCESS
    procs += p.coq_workers * COQ_WORKER
    if not cuda:
        c["workers"] = procs
    fixed = c["runtime"] + c["weights"] + c["optimizer"] + c.get("reference", 0.0)
    fixed += c.get("teacher", 0.0) + c.get("sampling copy", 0.0)
    peak = fixed + max(learner, generation) + (0.0 if cuda else procs)
    return MemoryPlan(
        "cuda" if cuda else "cpu",
        c,
        peak,
        limit,
        tokens,
        p,
    )


def _largest_micro_batch(p: PlanInputs) -> tuple[int, int]:
    """(padded tokens, response tokens) of the largest micro-batch the learner forms for a
    step of this shape (its own packing, :func:`verirl.train.learner.pack_rows`)."""
    from verirl.train.packing import pack_rows

    st = p.step
    n = st.prompts * st.group
    segments = pack_rows(
        [st.prompt_tokens] * n,
        [st.response_tokens] * n,
        [i // st.group for i in range(n)],
        budget=p.micro_batch_tokens,
        shared_prefix=p.share_prompt_prefix,
    )
    best = (0, 0)
    for seg in segments:
        rows = len(seg)
        prompts = len({i // st.group for i in seg})
        if p.share_prompt_prefix:
            tokens = prompts * st.prompt_tokens + rows * st.response_tokens
        else:
            tokens = rows * (st.prompt_tokens + st.response_tokens)
        best = max(best, (tokens, rows * st.response_tokens))
    return best


# ---- from a run config ---------------------------------------------------------------------
def plan_inputs(
    cfg: TrainConfig, prompt_tokens: int, device: str | None = None, model_config: Any = None
) -> PlanInputs:
    """The :class:`PlanInputs` of ``cfg`` with prompts of ``prompt_tokens`` tokens (the run's
    longest: :func:`longest_prompt`) on ``device`` ('cpu', 'cuda'; None: the config's
    ``model.device`` resolved on this machine); ``model_config`` None: ``model.name``'s."""
    from verirl.rollout.base import ENGINES
    from verirl.train.optimizers import OPTIMIZERS
    from verirl.train.terms import LossTerms
    from verirl.verification.executors import EXECUTORS

    if model_config is None:
        model_config = load_model_config(cfg.model.name)
    shape = ModelShape.from_hf_config(model_config)
    dev = device or _resolve_device(cfg.model.device)
    bf16 = cfg.model.dtype == "bf16" or (cfg.model.dtype == "auto" and dev.startswith("cuda"))
    lora = cfg.model.lora
    trainable = shape.lora_params(lora.r, tuple(lora.target_modules)) if lora else None
    chunk = cfg.optim.logprob_chunk_tokens
    # the engine's and the executor's parameters as their registrations read them
    engine = ENGINES.get(cfg.rollout.engine.name).parse(cfg.rollout.engine.params)
    executor = cfg.verification.executor
    pool = EXECUTORS.get(executor.name).parse(executor.params)
    return PlanInputs(
        shape=shape,
        step=StepShape(
            cfg.rollout.prompts_per_step,
            cfg.rollout.group_size,
            prompt_tokens,
            cfg.rollout.max_new_tokens,
        ),
        device=dev,
        bf16=bf16,
        trainable=trainable,
        lora=lora is not None,
        optimizer_state_bytes=OPTIMIZERS.get(cfg.optim.optimizer.name).state_bytes_per_param,
        kl_reference="reference" in LossTerms(cfg.loss.terms).needs,
        activation_checkpointing=cfg.optim.activation_checkpointing is True,
        chunk_tokens=None if chunk == "auto" else int(chunk),
        micro_batch_tokens=cfg.optim.micro_batch_tokens,
        share_prompt_prefix=cfg.optim.share_prompt_prefix,
        engine=cfg.rollout.engine.name,
        # an engine without a batch bound decodes every sequence of the step at once
        engine_batch=getattr(engine, "max_batch_sequences", None),
        engine_kv_bytes=getattr(engine, "kv_cache_gib", 0.0) * GIB,
        workers=getattr(pool, "workers", 0) if executor.name == "processes" else 0,
        # a LoRA'd output head is no plain Linear: it runs as checkpointed chunks
        linear_head=lora is None or "lm_head" not in lora.target_modules,
        teacher_bytes=teacher_bytes(cfg, trainable if trainable is not None else shape.params),
        sampling_copy=_sampling_copy(cfg.rollout.engine.name, engine),
    )


def _sampling_copy(engine_name: str, params: Any) -> str | None:
    """The hf engine's low-precision copy, if it samples from one (vLLM's own weights are its
    generation term)."""
    precision = str(getattr(params, "precision", "policy"))
    return precision if engine_name == "hf" and precision != "policy" else None


def sampling_copy_bytes(s: ModelShape, precision: str) -> float:
    """The bytes of the hf engine's low-precision copy (:mod:`verirl.rollout.precision`) of a
    model of shape ``s``: its decoder layers' linear weights, its output head (a copy of the
    embedding when tied), its embedding and its norms, each at the copy's width."""
    per_layer = {
        "attention": 2 * s.hidden * s.q_dim + 2 * s.hidden * s.kv_dim,
        "gate_up": 2 * s.hidden * s.intermediate,
        "down": s.hidden * s.intermediate,
    }
    linear = s.layers * sum(per_layer.values())
    head = s.vocab * s.hidden
    rest = s.params - linear - (0 if s.tied else head)  # the embedding and the norms
    if precision == "bf16":
        return 2.0 * (linear + head + rest)
    if precision == "int8":  # the down projections stay float32
        down = s.layers * per_layer["down"]
        return 1.0 * (linear - down + head) + 4.0 * (down + rest)
    # w8a16 (its per-channel scales: negligible): the embedding int8 as well, a tied one the
    # head's own storage; the norms fp32
    return 1.0 * (linear + head) + (0.0 if s.tied else 1.0 * head) + 4.0 * (rest - head)


def teacher_bytes(cfg: TrainConfig, trainable: int) -> float:
    """The bytes a run's distillation teachers hold beside the policy (the token sources
    an active loss term reads): a ``checkpoint`` teacher's parameters in float32 (read off its
    config.json), an EMA ``privileged_self`` teacher's float32 copy of the ``trainable``
    parameters; 0 for a self-teacher at the policy's own weights."""
    from verirl.train.distill import CheckpointTeacherParams, PrivilegedSelfParams
    from verirl.train.terms import LossTerms

    needs = LossTerms(cfg.loss.terms).needs
    total = 0.0
    for name, plugin in cfg.loss.sources.items():
        if name not in needs:
            continue
        if plugin.name == "checkpoint":
            path = CheckpointTeacherParams.model_validate(plugin.params).path
            total += 4.0 * ModelShape.from_hf_config(load_model_config(path)).params
        elif (
            plugin.name == "privileged_self"
            and PrivilegedSelfParams.model_validate(plugin.params).ema > 0
        ):
            total += 4.0 * trainable
    return total


def plan_memory(
    cfg: TrainConfig,
    device: str | None = None,
    limit: float | None = None,
    *,
    prompt_tokens: int,
    model_config: Any = None,
) -> MemoryPlan:
    """The plan of ``cfg`` (:func:`plan_inputs`); ``limit`` None: this machine's memory
    (:func:`memory_limit`). ``optim.activation_checkpointing`` 'auto' is decided here: on
    when the step does not fit without it."""
    inputs = plan_inputs(cfg, prompt_tokens, device, model_config)
    limit = limit if limit is not None else memory_limit(inputs.device)
    if cfg.optim.activation_checkpointing == "auto":
        return auto_checkpointing(inputs, limit)
    return compute_plan(inputs, limit)


def auto_checkpointing(inputs: PlanInputs, limit: float | None) -> MemoryPlan:
    """``optim.activation_checkpointing='auto'`` decided from the plan: off when the step
    without it fits comfortably — its planned peak at most :data:`COMFORTABLE` of ``limit`` —
    since then checkpointing only costs time (a second forward pass of every layer in
    backward); on otherwise. The returned plan is the chosen one; its ``why`` says why, in a
    sentence for the log."""
    off = compute_plan(replace(inputs, activation_checkpointing=False), limit)
    room = math.inf if limit is None else COMFORTABLE * limit
    if math.isinf(room):
        chosen, why = off, "off (auto): no memory limit is known for this device"
    elif off.peak <= room:
        why = (
            f"off (auto): the step needs {off.peak / GB:.1f} GB without it, within "
            f"{COMFORTABLE:.0%} of the {(limit or 0) / GB:.1f} GB available"
        )
        chosen = off
    else:
        chosen = compute_plan(replace(inputs, activation_checkpointing=True), limit)
        why = (
            f"on (auto): the step would need {off.peak / GB:.1f} GB without it, over "
            f"{COMFORTABLE:.0%} of the {(limit or 0) / GB:.1f} GB available; "
            f"{chosen.peak / GB:.1f} GB with it"
        )
    return replace(chosen, why=why)


def longest_prompt(formatter: Any, tasks: Any, problems: int = 16) -> int:
    """The longest training prompt, in tokens (``formatter``, the run's), over the next
    ``problems`` problems of the task stream ``tasks`` (:meth:`~verirl.sources.TaskStream.
    preview`: none is handed out)."""
    return max(len(formatter.encode(p)) for p in tasks.preview(problems))


def check_fits(plan: MemoryPlan) -> None:
    """Before any work: a :class:`~verirl.errors.UserInputError` in one line when ``plan``
    does not fit, naming the setting that brings it under."""
    from verirl.errors import UserInputError

    if plan.fits:
        return
    fix = suggest_fix(plan)
    raise UserInputError(
        f"the planned step needs {plan.peak / GB:.1f} GB but this {plan.device} has "
        f"{(plan.limit or 0) / GB:.1f} GB available ({plan.learner_tokens} tokens in the "
        "largest micro-batch); "
        + (f"set {fix}" if fix else "use a smaller model or shorter responses")
        + " (`verirl memory` shows the plan; run.check_memory=false skips this check)"
    )


# ---- what to change ------------------------------------------------------------------------
def suggest_fix(plan: MemoryPlan) -> str | None:
    """The settings that bring ``plan`` under its limit, found by changing one thing at a
    time in order of least change to the run — activation checkpointing, a smaller engine
    batch (generation's key/value cache), smaller micro-batches, 8-bit optimizer state, LoRA
    — and keeping each change that lowers the peak, until it fits. None when it fits
    already or nothing here is enough."""
    if plan.fits or plan.limit is None:
        return None
    inputs = plan.inputs
    steps: list[tuple[str, Any]] = [
        ("optim.activation_checkpointing=true", lambda p: replace(p, activation_checkpointing=True))
    ]
    batch = inputs.engine_batch or 1  # an engine without max_batch_sequences: nothing to halve
    while batch > 1:
        batch //= 2
        steps.append(
            (
                f"rollout.engine.params.max_batch_sequences={batch}",
                lambda p, b=batch: replace(p, engine_batch=b),
            )
        )
    budget = inputs.micro_batch_tokens
    while budget > 256:
        budget //= 2
        steps.append(
            (
                f"optim.micro_batch_tokens={budget}",
                lambda p, b=budget: replace(p, micro_batch_tokens=b),
            )
        )
    if inputs.optimizer_state_bytes > 2:
        steps.append(
            ("optim.optimizer.name=adamw_8bit", lambda p: replace(p, optimizer_state_bytes=2.0))
        )
    if not inputs.lora:
        targets = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
        lora = inputs.shape.lora_params(16, targets)
        steps.append(("model.lora.r=16", lambda p: replace(p, trainable=lora, lora=True)))
    # keep every change that does not raise the peak until the plan fits ...
    chosen: list[tuple[str, Any]] = []
    current, peak = inputs, compute_plan(inputs).peak
    for setting, change in steps:
        candidate = change(current)
        alt = compute_plan(candidate, plan.limit)
        if alt.peak > peak:
            continue
        chosen.append((setting, change))
        current, peak = candidate, alt.peak
        if alt.fits:
            break
    else:
        return None
    # ... then drop those it fits without (a later halving of a field replaces earlier ones)

    def apply(changes: list[tuple[str, Any]]) -> MemoryPlan:
        p = inputs
        for _, change in changes:
            p = change(p)
        return compute_plan(p, plan.limit)

    for item in list(reversed(chosen)):
        rest = [c for c in chosen if c is not item]
        if apply(rest).fits:
            chosen = rest
    final: dict[str, str] = {}
    for setting, _ in chosen:
        final[setting.split("=", 1)[0]] = setting
    return " ".join(final.values()) + f" (planned peak {apply(chosen).peak / GB:.1f} GB)"


def memory_limit(device: str) -> float:
    """The memory a run may use here: the CPU's available RAM plus what this process already
    holds (the plan counts the runtime itself), or the CUDA device's total memory."""
    if device.startswith("cuda"):
        import torch

        if torch.cuda.is_available():
            index = torch.device(device).index or 0
            return float(torch.cuda.get_device_properties(index).total_memory)
        return math.inf
    import psutil

    return float(psutil.virtual_memory().available + psutil.Process().memory_info().rss)


def parse_device(spec: str) -> tuple[str, float | None]:
    """``cpu``, ``cuda``, or a named GPU size ``cuda:80GB`` / ``cuda:24GiB`` → (device, limit)."""
    spec = spec.strip().lower()
    if spec in ("cpu", "cuda"):
        return spec, None
    if spec.startswith("cuda:") and spec.endswith(("gb", "gib")):
        number = spec[5:].removesuffix("gib").removesuffix("gb")
        unit = GIB if spec.endswith("gib") else GB
        try:
            return "cuda", float(number) * unit
        except ValueError:
            pass
    raise ValueError(
        f"device {spec!r}: use cpu, cuda (this machine's GPU) or a GPU size such as cuda:80GB"
    )


def load_model_config(name: str) -> Any:
    """The model's config, read from its config.json (the default model: from its GGUF's
    metadata when it has not been converted yet) — never its weights."""
    from transformers import AutoConfig

    from verirl.models import DEFAULT_MODEL, cache_root, locate_smollm2_gguf, resolve_model_path

    if name == DEFAULT_MODEL and not (cache_root() / DEFAULT_MODEL / "config.json").is_file():
        gguf = locate_smollm2_gguf()
        return AutoConfig.from_pretrained(gguf.parent, gguf_file=gguf.name)
    return AutoConfig.from_pretrained(resolve_model_path(name))


def _resolve_device(device: str) -> str:
    if device == "auto":
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    return "cuda" if device.startswith("cuda") else "cpu"
