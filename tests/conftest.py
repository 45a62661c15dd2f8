from __future__ import annotations

from pathlib import Path

import pytest

from verirl.models import save_tiny_model_dir


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Llama with SmolLM2's tokenizer, saved as a local model directory."""
    return save_tiny_model_dir(tmp_path_factory.mktemp("tiny-model"))
