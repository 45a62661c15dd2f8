from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.tiny_run import tiny_run as tiny_run_overrides
from verirl.models import save_tiny_model_dir


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Llama with SmolLM2's tokenizer, saved as a local model directory."""
    return save_tiny_model_dir(tmp_path_factory.mktemp("tiny-model"))


TinyRun = Callable[..., list[str]]


@pytest.fixture(scope="session")
def tiny_run(tiny_model_dir: Path) -> TinyRun:
    """``tiny_run(run_dir, steps=3, *extra)``: the overrides of a tiny training run on
    ``tiny_model_dir`` (:func:`tests.tiny_run.tiny_run`)."""

    def overrides(run_dir: Path, steps: int = 3, *extra: str) -> list[str]:
        return tiny_run_overrides(tiny_model_dir, run_dir, steps, *extra)

    return overrides
