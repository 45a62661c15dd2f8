"""Optimizers, registered by name (``optim.optimizer``), and the bytes of state each keeps.

AdamW (Loshchilov & Hutter 2019, "Decoupled Weight Decay Regularization", arXiv:1711.05101)
keeps two moments per trainable parameter: 8 bytes per parameter in float32, as much as the
weights and gradients together. The lean options keep them in 8 bits (Dettmers et al. 2022,
"8-bit Optimizers via Block-wise Quantization", arXiv:2110.02861: block-wise dynamic
quantization, ~2 bytes per parameter), through bitsandbytes. Which runs where (measured,
docs/memory.md):

=================  =======================================  ============  ================
name               what                                     state / param  runs on
=================  =======================================  ============  ================
adamw              torch.optim.AdamW, the fused kernel      8 bytes        CPU and CUDA
                   where the device has one (CPU, CUDA)
adamw_8bit         bitsandbytes AdamW8bit (block-wise)      ~2 bytes       CPU and CUDA
paged_adamw_8bit   bitsandbytes PagedAdamW8bit: 8-bit       ~2 bytes       CUDA only
                   state in CUDA unified memory, paged
                   out to CPU RAM under memory pressure
paged_adamw        bitsandbytes PagedAdamW (32-bit state,   8 bytes        CUDA only
                   paged to CPU RAM: optimizer offload)
=================  =======================================  ============  ================
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import torch
from pydantic import BaseModel

from verirl.errors import UserInputError
from verirl.registry import Registry, Spec

logger = logging.getLogger("verirl.train")


@dataclass(frozen=True)
class AdamSettings:
    """What every optimizer here takes from ``optim:``."""

    lr: float
    betas: tuple[float, float]
    weight_decay: float


Build = Callable[
    [BaseModel, list[torch.nn.Parameter], AdamSettings, torch.device], torch.optim.Optimizer
]


@dataclass(frozen=True)
class OptimizerSpec(Spec[Build]):
    """A registered optimizer, built as ``build(params, trainable, settings, device)``.
    Beside what every :class:`~verirl.registry.Spec` holds it declares the bytes of state it
    keeps per trainable parameter (the memory plan reads them), the device types it runs on
    and the extra that installs its library."""

    state_bytes_per_param: float = 8.0
    devices: tuple[str, ...] = ("cpu", "cuda")
    install: str = ""


OPTIMIZERS: Registry[OptimizerSpec] = Registry("optimizer", OptimizerSpec)
"""Optimizers by name (``optim.optimizer``): ``@OPTIMIZERS.register(name, params,
state_bytes_per_param=..., devices=..., install=...)`` on ``build(params, trainable, settings,
device)``."""


def build_optimizer(
    name: str,
    params_cfg: dict[str, Any] | BaseModel | None,
    trainable: Iterable[torch.nn.Parameter],
    settings: AdamSettings,
    device: torch.device,
) -> torch.optim.Optimizer:
    """The optimizer ``name`` over ``trainable`` on ``device``; a one-line error when it does
    not run there or its library is missing."""
    spec = OPTIMIZERS.get(name)
    if device.type not in spec.devices:
        raise UserInputError(
            f"optim.optimizer {name!r} runs on {' and '.join(spec.devices)} only, not on "
            f"{device.type}; use optim.optimizer.name=adamw (or adamw_8bit for 8-bit state)"
        )
    optimizer = spec.build(params_cfg, list(trainable), settings, device)
    optimizer.register_step_post_hook(_count_the_update)
    return optimizer


def _count_the_update(optimizer: torch.optim.Optimizer, *_: Any) -> None:
    """Bump the version counter of every parameter the step updated. Fused kernels (torch's
    fused AdamW) and bitsandbytes write parameters without bumping it, and the counters are
    how the rollout engines, the async producer and the Ray workers tell which weights
    changed since their last sync: without this, vLLM would keep sampling the old policy."""
    for group in optimizer.param_groups:
        for param in group["params"]:
            if param.grad is not None:
                torch.autograd.graph.increment_version(param)


@OPTIMIZERS.register("adamw", state_bytes_per_param=8.0)
def _adamw(
    _: BaseModel, params: list[torch.nn.Parameter], s: AdamSettings, device: torch.device
) -> torch.optim.Optimizer:
    """torch's AdamW. On a CPU or CUDA device its fused kernel: one pass over each tensor, no
    temporaries of parameter size (the default loop kernel allocates several per tensor),
    ~10× faster per step on a CPU (bench/bench_memory.py prints it)."""
    fused = device.type in ("cpu", "cuda") and all(p.dtype.is_floating_point for p in params)
    return torch.optim.AdamW(
        params, lr=s.lr, betas=s.betas, weight_decay=s.weight_decay, fused=fused or None
    )


def _bnb(cls_name: str) -> Build:
    def build(
        _: BaseModel, params: list[torch.nn.Parameter], s: AdamSettings, device: torch.device
    ) -> torch.optim.Optimizer:
        bnb = _import_bitsandbytes(cls_name)
        cls = getattr(bnb.optim, cls_name)
        opt: torch.optim.Optimizer = cls(
            params, lr=s.lr, betas=s.betas, weight_decay=s.weight_decay
        )
        return opt

    build.__doc__ = f"bitsandbytes' {cls_name}"
    return build


def _import_bitsandbytes(what: str) -> Any:
    try:
        # bitsandbytes logs at import that optional CPU 4-bit kernels are absent; verirl uses
        # only its optimizers
        quiet = logging.getLogger("bitsandbytes")
        level = quiet.level
        quiet.setLevel(logging.ERROR)
        try:
            import bitsandbytes
        finally:
            quiet.setLevel(level)
    except ImportError as exc:
        raise UserInputError(
            f"optim.optimizer needs bitsandbytes for {what}: pip install 'verirl[optim]' "
            f"(bitsandbytes>=0.50: the first with 8-bit optimizers on a CPU) ({exc})"
        ) from None
    return bitsandbytes


for _name, _cls, _state, _devices in (
    ("adamw_8bit", "AdamW8bit", 2.0, ("cpu", "cuda")),
    ("paged_adamw_8bit", "PagedAdamW8bit", 2.0, ("cuda",)),
    ("paged_adamw", "PagedAdamW", 8.0, ("cuda",)),
):
    OPTIMIZERS.register(
        _name, state_bytes_per_param=_state, devices=_devices, install="verirl[optim]"
    )(_bnb(_cls))
