"""The registered optimizers: fused AdamW is AdamW; 8-bit AdamW runs on a CPU and keeps ~2
bytes of state per parameter; the CUDA-only ones refuse a CPU in one line; the config names
them."""

from __future__ import annotations

import pytest
import torch

from verirl.assembly import load_config
from verirl.config import ConfigError
from verirl.errors import UserInputError
from verirl.train.optimizers import OPTIMIZERS, AdamSettings, build_optimizer

SETTINGS = AdamSettings(lr=1e-2, betas=(0.9, 0.98), weight_decay=0.01)
CPU = torch.device("cpu")


def _params(seed: int = 0) -> list[torch.nn.Parameter]:
    g = torch.Generator().manual_seed(seed)
    return [torch.nn.Parameter(torch.randn(256, 512, generator=g)) for _ in range(3)]


def _steps(opt: torch.optim.Optimizer, params: list[torch.nn.Parameter], n: int = 5) -> None:
    g = torch.Generator().manual_seed(1)
    for _ in range(n):
        for p in params:
            p.grad = torch.randn(p.shape, generator=g)
        opt.step()


def _state_bytes(opt: torch.optim.Optimizer) -> int:
    total = 0
    for state in opt.state.values():
        for v in state.values():
            if isinstance(v, torch.Tensor) and v.numel() > 1:
                total += v.numel() * v.element_size()
    return total


def test_adamw_is_torchs_adamw_with_the_fused_kernel() -> None:
    mine, ref = _params(), _params()
    opt = build_optimizer("adamw", None, mine, SETTINGS, CPU)
    assert opt.defaults["fused"] is True
    _steps(opt, mine)
    _steps(torch.optim.AdamW(ref, lr=1e-2, betas=(0.9, 0.98), weight_decay=0.01), ref)
    for a, b in zip(mine, ref, strict=True):
        assert torch.allclose(a, b, atol=1e-6)
    assert _state_bytes(opt) == 8 * sum(p.numel() for p in mine)
    assert OPTIMIZERS.get("adamw").state_bytes_per_param == 8


def test_8bit_adamw_runs_on_a_cpu_follows_adamw_and_keeps_2_bytes_per_parameter() -> None:
    pytest.importorskip("bitsandbytes", reason="the optim extra (bitsandbytes) is not installed")
    mine, ref = _params(), _params()
    before = [p.detach().clone() for p in mine]
    opt = build_optimizer("adamw_8bit", None, mine, SETTINGS, CPU)
    _steps(opt, mine)
    _steps(torch.optim.AdamW(ref, lr=1e-2, betas=(0.9, 0.98), weight_decay=0.01), ref)
    for a, b, start in zip(mine, ref, before, strict=True):
        moved, want = (a - start).detach().flatten(), (b - start).detach().flatten()
        cosine = float(moved @ want / (moved.norm() * want.norm()))
        assert cosine > 0.99  # the same direction as 32-bit AdamW's update
    n = sum(p.numel() for p in mine)
    assert 2 * n <= _state_bytes(opt) <= 2.1 * n  # uint8 moments, block-wise scales, code maps


@pytest.mark.parametrize("name", ["paged_adamw_8bit", "paged_adamw"])
def test_cuda_only_optimizers_refuse_a_cpu_in_one_line(name: str) -> None:
    with pytest.raises(UserInputError, match=f"{name}.*runs on cuda only, not on cpu"):
        build_optimizer(name, None, _params(), SETTINGS, CPU)


def test_the_config_names_a_registered_optimizer() -> None:
    assert load_config(None, ["optim.optimizer.name=adamw_8bit"]).optim.optimizer.name == (
        "adamw_8bit"
    )
    with pytest.raises(ConfigError, match=r"optim\.optimizer\.name: unknown optimizer 'sgd'"):
        load_config(None, ["optim.optimizer.name=sgd"])
    with pytest.raises(ConfigError, match=r"optim\.optimizer\.params"):
        load_config(None, ["optim.optimizer.params={momentum: 0.9}"])


@pytest.mark.parametrize("name", ["adamw", "adamw_8bit"])
def test_a_step_bumps_the_version_of_every_updated_parameter(name: str) -> None:
    """The engines' weight sync reads version counters; fused kernels do not bump them."""
    if name == "adamw_8bit":
        pytest.importorskip("bitsandbytes")
    updated = torch.nn.Parameter(torch.randn(64, 64))
    frozen = torch.nn.Parameter(torch.randn(64, 64))  # no gradient this step
    opt = build_optimizer(
        name, None, [updated, frozen], AdamSettings(1e-3, (0.9, 0.99), 0.0), torch.device("cpu")
    )
    updated.grad = torch.randn(64, 64)
    before = (updated._version, frozen._version)
    opt.step()
    assert updated._version > before[0]
    assert frozen._version == before[1]
