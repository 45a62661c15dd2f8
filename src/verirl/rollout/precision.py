"""A low-precision copy of the policy to sample from (``rollout.engine.params.precision``).

Decoding a batch is a chain of skinny matrix products whose cost is reading the weights; a
copy with narrower weights reads less. The copy is built from the learner's module (a LoRA
policy's adapted layers merged, :func:`~verirl.rollout.policy_export.policy_weights`) and
refreshed after every update (:meth:`SamplingCopy.refresh`: only the layers whose parameters
changed since the last refresh, found by their in-place version counters):

- ``int8``: the linear layers (the LM head included; not the MLP's down projection,
  :data:`INT8_KEEP_FP32`) as torch's dynamically quantized linear — int8 weights with one
  scale per output channel, each call's activations quantized to int8 as they arrive, int32
  accumulation (fbgemm; VNNI where the CPU has it); the embedding and norms stay fp32. Its
  mismatch on a trained model is far past the field's bounds (docs/experiments.md): a speed
  option to measure against, not yet one to train with.
- ``w8a16``: weight-only int8 — the linear layers' weights (every one, the LM head included)
  and the embedding's rows (a tied one shares the head's: :class:`Int8Embedding`) as int8
  with one bfloat16 scale per output channel; each product takes its input in
  bfloat16 and runs ``torch.ops.aten._weight_int8pack_mm`` (the int8 weights are widened
  inside the kernel, so a decode step reads a quarter of fp32's bytes), and its output goes
  back to fp32: the residual stream, the norms and attention stay fp32 (torch's bf16
  attention on a CPU runs ~5× slower than fp32's at one query row). Activations are never
  quantized, so the outliers that wreck ``int8`` do not matter here (docs/experiments.md).
- ``bf16``: the whole copy in bfloat16 (fast where the CPU has AVX512-BF16 or AMX, or on
  a GPU); logits are read out in fp32.

The copy's log-probs are not the learner's: the engine registers as inexact, so the learner
recomputes π_old (``optim.old_logprobs: auto``), logs the mismatch per step
(``train/engine_logp_diff_mean``, ``train/engine_logp_kl``; the ``logprob_drift`` health
detector holds it to the field's bound), and TIS / IcePop (``loss.off_policy``) correct for it
— as verl's FP8 rollouts (``rollout.quantization=fp8``) do on a GPU.
"""

from __future__ import annotations

import time
from typing import Any, Literal, get_args

import torch
from torch import nn

from verirl.rollout.policy_export import base_model, clean_name, param_versions, policy_weights

CopyPrecision = Literal["bf16", "int8", "w8a16"]
COPY_PRECISIONS: tuple[CopyPrecision, ...] = get_args(CopyPrecision)

INT8_KEEP_FP32 = ("down_proj",)
"""Linear layers the int8 copy keeps in fp32: the MLP's down projection reads the activations
with outliers (SmolLM2-135M: quantizing it moves the mean |Δ log-prob| from 0.19 to 1.09 nats
per token on a greedy answer; docs/experiments.md)."""


class SamplingCopy:
    """A low-precision copy of ``model`` (see the module docstring). ``module`` is what the
    engine decodes with; :meth:`refresh` brings it up to the learner's weights."""

    def __init__(
        self, model: nn.Module, precision: CopyPrecision, skip: tuple[str, ...] = INT8_KEEP_FP32
    ) -> None:
        if precision not in COPY_PRECISIONS:
            raise ValueError(f"precision must be one of {COPY_PRECISIONS}, got {precision!r}")
        self.model, self.precision, self.skip = model, precision, skip
        device = next(model.parameters()).device
        if precision in ("int8", "w8a16") and device.type != "cpu":
            raise ValueError(
                f"precision={precision} runs torch's CPU int8 kernels; on a GPU use the vllm "
                "engine's precision=fp8 or precision=bf16"
            )
        self.module = self._build()
        self._versions = param_versions(model)

    def _build(self) -> nn.Module:
        from transformers import AutoModelForCausalLM

        base: Any = base_model(self.model)
        with torch.device("meta"):
            copy = AutoModelForCausalLM.from_config(base.config, dtype=torch.float32)
        weights = dict(policy_weights(self.model))
        missing, unexpected = copy.load_state_dict(weights, strict=False, assign=True)
        tied = getattr(base.config, "tie_word_embeddings", False)
        if tied and "lm_head.weight" in missing:  # a tied head: the embedding's own copy
            copy.lm_head.weight = nn.Parameter(weights["model.embed_tokens.weight"].clone())
            missing = [m for m in missing if m != "lm_head.weight"]
        if missing or unexpected:
            raise RuntimeError(
                f"the sampling copy could not take the policy's weights (missing {missing[:3]}, "
                f"unexpected {unexpected[:3]})"
            )
        for name, buffer in base.named_buffers():  # rotary frequencies and the like
            _set_buffer(copy, clean_name(name), buffer.detach().clone())
        copy.to(next(self.model.parameters()).device)
        copy.generation_config = getattr(base, "generation_config", None)
        copy.requires_grad_(False).eval()
        if self.precision == "bf16":
            return copy.to(torch.bfloat16)
        if self.precision == "w8a16":  # the rest stays fp32 (below)
            for name, module in list(copy.named_modules()):
                if isinstance(module, nn.Linear):
                    _replace(copy, name, Int8WeightLinear.from_linear(module))
            embedding = copy.get_input_embeddings()
            path = next(n for n, m in copy.named_modules() if m is embedding)
            head = copy.get_output_embeddings()
            shared = head if tied and isinstance(head, Int8WeightLinear) else None
            _replace(copy, path, Int8Embedding.from_embedding(embedding, shared))
            return copy
        qconfig = torch.ao.quantization.per_channel_dynamic_qconfig
        chosen = {
            name: qconfig
            for name, module in copy.named_modules()
            if isinstance(module, nn.Linear) and name.rsplit(".", 1)[-1] not in self.skip
        }
        torch.ao.quantization.quantize_dynamic(copy, chosen, dtype=torch.qint8, inplace=True)
        return copy

    def ensure_fresh(self) -> None:
        """Refresh when the learner's weights changed since the last refresh (a restored
        checkpoint, a caller that skipped the sync); comparing counters costs microseconds."""
        if param_versions(self.model) != self._versions:
            self.refresh()

    def refresh(self) -> dict[str, float]:
        """Re-copy (and re-quantize) the layers whose parameters changed; returns the cost."""
        start = time.perf_counter()
        versions = param_versions(self.model)
        changed = {clean_name(n) for n, v in versions.items() if self._versions.get(n) != v}
        layers = {n.rsplit(".", 1)[0] for n in changed}
        if "model.embed_tokens" in layers and getattr(
            base_model(self.model).config, "tie_word_embeddings", False
        ):
            layers.add("lm_head")
        weights = policy_weights(
            self.model, lambda n: n.rsplit(".", 1)[0] in layers, clone=False
        )  # read and re-quantized (or copied) below, none kept
        modules = dict(self.module.named_modules())
        by_layer: dict[str, dict[str, torch.Tensor]] = {}
        for name, tensor in weights:
            path, _, leaf = name.rpartition(".")
            by_layer.setdefault(path, {})[leaf] = tensor
        if "lm_head" in layers and "lm_head" not in by_layer:  # tied: read the embedding
            by_layer["lm_head"] = {"weight": by_layer["model.embed_tokens"]["weight"]}
        with torch.no_grad():
            for path, tensors in by_layer.items():
                module = modules[path]
                if isinstance(module, torch.ao.nn.quantized.dynamic.Linear):
                    self._requantize(path, module, tensors)
                    continue
                if isinstance(module, Int8WeightLinear):
                    module.load(tensors["weight"], tensors.get("bias"))
                    continue
                if isinstance(module, Int8Embedding):
                    if not module.shared:  # a tied one is the head's storage, loaded there
                        module.load(tensors["weight"])
                    continue
                for leaf, tensor in tensors.items():
                    getattr(module, leaf).copy_(tensor)
        self._versions = param_versions(self.model)
        return {
            "weight_sync_s": time.perf_counter() - start,
            "weight_sync_layers": float(len(by_layer)),
        }

    def _requantize(
        self, path: str, old: torch.ao.nn.quantized.dynamic.Linear, tensors: dict[str, torch.Tensor]
    ) -> None:
        weight = tensors["weight"]
        bias = tensors["bias"].clone() if "bias" in tensors else old.bias()
        fresh = nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None)
        fresh.weight = nn.Parameter(weight, requires_grad=False)
        if bias is not None:
            fresh.bias = nn.Parameter(bias.detach(), requires_grad=False)
        fresh.qconfig = torch.ao.quantization.per_channel_dynamic_qconfig  # type: ignore[assignment]
        _replace(self.module, path, torch.ao.nn.quantized.dynamic.Linear.from_float(fresh))


INT8_KERNEL_MAX_ROWS = 16
"""Rows up to which the int8 kernel beats widening the weights to bf16 for a dense product:
a decode step's few rows read weights (the int8 kernel reads a quarter of fp32's bytes); a
prefill's many rows compute, where the int8 kernel runs 2.5× slower than bf16's dense product
at 200 rows (this project's 2-core EPYC, a 1,536 × 576 layer)."""

LARGE_WEIGHT_ELEMENTS = 8 * 2**20
"""A weight this large (an output head: SmolLM2's is 28M elements) keeps the int8 kernel up
to :data:`LARGE_KERNEL_MAX_ROWS` rows: widening it reads and writes seven bytes per element
each call, which costs more than the kernel's product saves until many rows share it. At 48
rows on SmolLM2's head: the kernel 0.92× fp32's dense product, widening 0.59×; at 96 rows
0.72× against 0.86× (this project's 2-core EPYC; docs/experiments.md)."""

LARGE_KERNEL_MAX_ROWS = 64
"""Rows up to which a weight of :data:`LARGE_WEIGHT_ELEMENTS` or more takes the int8 kernel."""

KERNEL_K_MULTIPLE = 16
"""``_weight_int8pack_mm`` on a CPU reads the input width in blocks of 16 and does not check
it (torch 2.13: a width of 24 or 40 segfaults); other widths take a widened product."""


class Int8WeightLinear(nn.Module):
    """A linear layer with int8 weights, one scale per output channel (symmetric: ``w ≈ q ·
    s``, ``q = round(w / s)``, ``s = max|w_row| / 127``), its input rounded to bfloat16 and its
    output returned in the input's dtype: the ``w8a16`` copy's layer. :meth:`load`
    re-quantizes in place from a float weight."""

    qweight: torch.Tensor
    scales: torch.Tensor
    bias: torch.Tensor | None

    def __init__(self, in_features: int, out_features: int, bias: bool) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.register_buffer("qweight", torch.zeros(out_features, in_features, dtype=torch.int8))
        self.register_buffer("scales", torch.ones(out_features, dtype=torch.bfloat16))
        self.register_buffer(
            "bias", torch.zeros(out_features, dtype=torch.bfloat16) if bias else None
        )

    @classmethod
    def from_linear(cls, linear: nn.Linear) -> Int8WeightLinear:
        layer = cls(linear.in_features, linear.out_features, linear.bias is not None)
        layer.load(linear.weight.detach(), None if linear.bias is None else linear.bias.detach())
        return layer.to(linear.weight.device)

    @torch.no_grad()
    def load(self, weight: torch.Tensor, bias: torch.Tensor | None = None) -> None:
        q, scale = quantize_rows(weight)
        self.qweight.copy_(q)
        self.scales.copy_(scale)
        if bias is not None and self.bias is not None:
            self.bias.copy_(bias)

    def uses_kernel(self, rows: int) -> bool:
        """Whether a product of ``rows`` rows runs the int8 kernel (else the widened one)."""
        if self.in_features % KERNEL_K_MULTIPLE:
            return False
        large = self.qweight.numel() >= LARGE_WEIGHT_ELEMENTS
        return rows <= (LARGE_KERNEL_MAX_ROWS if large else INT8_KERNEL_MAX_ROWS)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(-1, self.in_features).to(torch.bfloat16)
        if self.uses_kernel(flat.shape[0]):
            out = torch.ops.aten._weight_int8pack_mm(flat, self.qweight, self.scales)
        else:  # many rows (a prompt's prefill) or a width the kernel cannot read: widen the
            # weights once and run bf16's dense product, which reuses them across the rows
            out = flat @ (self.qweight.to(torch.bfloat16) * self.scales[:, None]).T
        if self.bias is not None:
            out = out + self.bias
        return out.reshape(*x.shape[:-1], self.out_features).to(x.dtype)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, int8 weights"


class Int8Embedding(nn.Module):
    """The ``w8a16`` copy's embedding: each row int8 with its own scale (the quantization of
    :class:`Int8WeightLinear`, whose output channels are an embedding's rows), looked up and
    widened to fp32. A tied model's embedding *is* its head's weight, so it shares the head's
    int8 rows and scales (``shared``) and costs nothing: the fp32 embedding it replaces was
    the largest tensor of a small model's copy (Qwen2.5-0.5B: 0.54 of 1.04 GB; SmolLM2-135M:
    0.11 of 0.25 GB)."""

    qweight: torch.Tensor
    scales: torch.Tensor

    def __init__(self, rows: int, width: int) -> None:
        super().__init__()
        self.rows, self.width = rows, width
        self.shared = False
        self.register_buffer("qweight", torch.zeros(rows, width, dtype=torch.int8))
        self.register_buffer("scales", torch.ones(rows, dtype=torch.bfloat16))

    @classmethod
    def from_embedding(
        cls, embedding: nn.Embedding, shared: Int8WeightLinear | None = None
    ) -> Int8Embedding:
        rows, width = embedding.weight.shape
        layer = cls(rows, width)
        if shared is not None:  # the tied head's buffers, the same tensors
            layer.qweight, layer.scales, layer.shared = shared.qweight, shared.scales, True
            return layer
        layer.load(embedding.weight.detach())
        return layer.to(embedding.weight.device)

    @torch.no_grad()
    def load(self, weight: torch.Tensor) -> None:
        q, scale = quantize_rows(weight)
        self.qweight.copy_(q)
        self.scales.copy_(scale)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.qweight[ids].float() * self.scales[ids].float()[..., None]

    def extra_repr(self) -> str:
        tied = ", the head's storage" if self.shared else ""
        return f"{self.rows}, {self.width}, int8 rows{tied}"


def quantize_rows(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric int8 per row: ``q = round(w / s)`` with ``s = max|w_row| / 127``."""
    w = weight.detach().float()
    scale = w.abs().amax(dim=1).clamp(min=1e-12) / 127.0
    return torch.round(w / scale[:, None]).clamp_(-127, 127).to(torch.int8), scale


def _replace(root: nn.Module, path: str, new: nn.Module) -> None:
    parent, _, leaf = path.rpartition(".")
    setattr(root.get_submodule(parent) if parent else root, leaf, new)


def _set_buffer(module: nn.Module, name: str, value: torch.Tensor) -> None:
    parent, _, leaf = name.rpartition(".")
    try:
        owner = module.get_submodule(parent) if parent else module
    except AttributeError:
        return
    if leaf in owner._buffers:
        owner._buffers[leaf] = value
