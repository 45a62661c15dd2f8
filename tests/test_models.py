"""Model loading: the bundled SmolLM2 (GGUF → cached safetensors), local dirs, LoRA."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from verirl.models import (
    DEFAULT_MODEL,
    LoraSettings,
    ModelNotFoundError,
    apply_lora,
    default_model_dir,
    load_policy,
    locate_smollm2_gguf,
    resolve_model_path,
    tiny_model,
)


def test_unknown_model_names_say_nothing_is_downloaded(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="nothing is downloaded"):
        resolve_model_path(str(tmp_path / "nope"))
    with pytest.raises(ModelNotFoundError, match="nothing is downloaded"):
        resolve_model_path("HuggingFaceTB/SmolLM2-135M-Instruct")


def test_local_directory_and_lora(tiny_model_dir: Path) -> None:
    model, tok = load_policy(str(tiny_model_dir), lora=LoraSettings(r=4, alpha=8))
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    assert tok.pad_token_id is not None
    base = tiny_model(50, layers=1)
    wrapped = apply_lora(base, LoraSettings(r=2, alpha=2, target_modules=("q_proj",)))
    # one layer, q_proj 32→32: A is r×32, B is 32×r with r = 2
    assert sum(p.numel() for p in wrapped.parameters() if p.requires_grad) == 2 * 32 + 32 * 2


@pytest.mark.slow
def test_default_model_cached_copy_equals_the_gguf_and_uses_its_chat_template() -> None:
    from transformers import AutoModelForCausalLM

    gguf = locate_smollm2_gguf()
    assert gguf.name.endswith(".gguf") and gguf.stat().st_size > 90_000_000
    path = default_model_dir()
    assert (path / "model.safetensors").is_file()
    model, tok = load_policy(DEFAULT_MODEL)
    reference = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, dtype=torch.float32
    )
    ours = dict(model.named_parameters())
    for name, p in reference.named_parameters():
        assert torch.equal(ours[name], p), name
    ids = tok.apply_chat_template(
        [{"role": "user", "content": "Hi"}], add_generation_prompt=True, tokenize=False
    )
    assert ids.startswith("<|im_start|>system") and ids.endswith("<|im_start|>assistant\n")
    assert tok.eos_token == "<|im_end|>"


def test_bad_model_paths_are_user_errors_naming_the_path(tmp_path: Path) -> None:
    from verirl.errors import UserInputError
    from verirl.models import load_policy

    with pytest.raises(UserInputError, match="'/nonexistent/model' does not exist"):
        resolve_model_path("/nonexistent/model")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UserInputError, match="is a directory but not a model"):
        resolve_model_path(str(empty))
    (tmp_path / "file.bin").write_bytes(b"x")
    with pytest.raises(UserInputError, match="is a file"):
        resolve_model_path(str(tmp_path / "file.bin"))
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "config.json").write_text('{"model_type": "no-such-architecture"}')
    with pytest.raises(UserInputError, match=f"{fake}.*does not load"):
        load_policy(str(fake))
