from __future__ import annotations

from pathlib import Path

import pytest

from verirl.models import load_tokenizer, tiny_model


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Llama with SmolLM2's tokenizer, saved as a local model directory."""
    path = tmp_path_factory.mktemp("tiny-model")
    tok = load_tokenizer("smollm2-135m-instruct")
    model = tiny_model(len(tok), seed=0, hidden_size=32, layers=2)
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path
