"""Where the policy runs and in which precision (``model.device``, ``model.dtype``).

``resolve_placement`` turns the two config strings into a :class:`Placement`: the torch device
the model, the engine's and the learner's batches and the scorers use, and the autocast dtype
of their forward passes (weights and optimizer state stay fp32).

``dtype: auto`` picks bf16 autocast on a CUDA device that supports it and fp32 on the CPU.
On an AVX2-only CPU bf16 autocast is emulated and several times slower than fp32. On a CPU
with AMX or AVX512-BF16 it is only modestly faster for an RL step of a small model — measured
on the default job (``bench/bench_precision.py``, both arms in one run): sampling 1.16×
slower, the update 1.43× faster, the step 11% faster — and it changes the numerics: the one
bf16 default-job run gained +16.1 held-out points where fp32 gained +20.0 at the same settings,
and fp32 gives the same result on AVX2 and AMX machines. So ``auto`` keeps fp32 on a CPU, the
path the default job's promise is measured on; ``dtype: bf16`` opts in (the run log notes
whether the CPU has native bf16). The reason for the choice is kept in ``Placement.reason``
for the run log.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import torch

from verirl.errors import UserInputError


@dataclass(frozen=True)
class Placement:
    device: torch.device
    autocast_dtype: torch.dtype | None  # None: plain fp32
    reason: str

    @property
    def precision(self) -> str:
        return "bf16" if self.autocast_dtype == torch.bfloat16 else "fp32"

    def autocast(self) -> contextlib.AbstractContextManager[None]:
        """The forward passes' autocast context (a no-op for fp32)."""
        return autocast(self.device, self.autocast_dtype)


@contextlib.contextmanager
def autocast(device: torch.device, dtype: torch.dtype | None) -> Iterator[None]:
    """Run the enclosed forward passes under ``torch.autocast(device.type, dtype)``; a no-op
    when ``dtype`` is None (plain fp32). The one autocast context of the learner, the rollout
    engine and the sequence scorers, so they all compute in the precision the run names."""
    if dtype is None:
        yield
    else:
        with torch.autocast(device.type, dtype=dtype):
            yield


def resolve_device(name: str) -> torch.device:
    """``auto`` → the first CUDA device when there is one, else the CPU; ``cpu``, ``cuda``,
    ``cuda:N`` as given (checked to exist)."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError):
        raise UserInputError(
            f"model.device: {name!r} is not a device; use auto, cpu, cuda or cuda:N"
        ) from None
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise UserInputError(
                f"model.device: {name!r} was asked for, but torch sees no CUDA device "
                f"(torch {torch.__version__}); use model.device=cpu or auto"
            )
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise UserInputError(
                f"model.device: {name!r} does not exist ({torch.cuda.device_count()} CUDA devices)"
            )
    elif device.type != "cpu":
        raise UserInputError(f"model.device: {name!r} is not supported; use auto, cpu or cuda")
    return device


def cpu_native_bf16() -> tuple[bool, str]:
    """Whether this CPU computes bf16 natively for torch, and what was seen."""
    capability = torch.backends.cpu.get_cpu_capability()
    bf16 = bool(torch.cpu._is_avx512_bf16_supported())
    amx = bool(torch.cpu._is_amx_tile_supported())
    seen = f"torch CPU capability {capability}, AVX512-BF16 {'yes' if bf16 else 'no'}, "
    seen += f"AMX {'yes' if amx else 'no'}"
    # ATEN_CPU_CAPABILITY below AVX512 keeps torch's kernels off the bf16 instructions
    return (bf16 or amx) and capability.startswith("AVX512"), seen


def resolve_placement(device: str = "auto", dtype: str = "auto") -> Placement:
    """The device and precision for ``model.device`` / ``model.dtype`` (see the module)."""
    dev = resolve_device(device)
    if dev.type == "cuda":
        native = torch.cuda.is_bf16_supported()
        seen = (
            f"{torch.cuda.get_device_name(dev)}, bf16 {'supported' if native else 'not supported'}"
        )
    else:
        native, seen = cpu_native_bf16()
    if dtype == "fp32":
        return Placement(dev, None, f"fp32 as configured ({seen})")
    if dtype == "bf16":
        note = "" if native else "; this hardware has no native bf16, expect it to be slower"
        return Placement(dev, torch.bfloat16, f"bf16 autocast as configured ({seen}{note})")
    if dtype != "auto":
        raise UserInputError(f"model.dtype: {dtype!r} is not one of auto, fp32, bf16")
    if dev.type == "cuda":
        if native:
            return Placement(dev, torch.bfloat16, f"bf16 autocast: native bf16 ({seen})")
        return Placement(dev, None, f"fp32: this CUDA device has no bf16 ({seen})")
    why = "native bf16 here, model.dtype=bf16 opts in" if native else "no native bf16 on this CPU"
    return Placement(dev, None, f"fp32: auto keeps fp32 on a CPU; {why} ({seen})")
