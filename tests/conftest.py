"""The session's shared fixtures: a tiny random model, the overrides of a tiny training run,
and one tiny run already trained — each built once per pytest run, also when pytest-xdist
splits the run over workers (the first worker to need one builds it under a file lock in the
run's shared temporary directory; the others wait and read it). Tests read them, never
write into them."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock

from tests.tiny_run import REFERENCE_STEPS
from tests.tiny_run import tiny_run as tiny_run_overrides
from verirl.models import save_tiny_model_dir


def shared(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], object]) -> Path:
    """``root/name`` built by ``build(path)`` once per pytest run: ``root`` is the run's
    temporary directory, which every xdist worker's own directory sits in."""
    base = factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    target, done = root / name, root / f"{name}.done"
    with FileLock(str(root / f"{name}.lock")):
        if not done.is_file():
            if target.exists():  # a build that failed half-way
                shutil.rmtree(target)
            build(target)
            done.touch()
    return target


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Llama with SmolLM2's tokenizer, saved as a local model directory."""
    return shared(tmp_path_factory, "tiny-model", save_tiny_model_dir)


TinyRun = Callable[..., list[str]]


@pytest.fixture(scope="session")
def tiny_run(tiny_model_dir: Path) -> TinyRun:
    """``tiny_run(run_dir, steps=3, *extra)``: the overrides of a tiny training run on
    ``tiny_model_dir`` (:func:`tests.tiny_run.tiny_run`)."""

    def overrides(run_dir: Path, steps: int = 3, *extra: str) -> list[str]:
        return tiny_run_overrides(tiny_model_dir, run_dir, steps, *extra)

    return overrides


@pytest.fixture(scope="session")
def reference_run(tmp_path_factory: pytest.TempPathFactory, tiny_model_dir: Path) -> Path:
    """The tiny run of :data:`~tests.tiny_run.REFERENCE_STEPS` steps, trained once: its run
    directory (config, metrics, samples, a checkpoint at every step, the exported ``final``).
    The tests that train a run to compare with the uninterrupted one (kill and resume, a
    damaged checkpoint, data parallel ranks) compare with this one instead."""

    def train(run_dir: Path) -> None:
        from verirl.assembly import build
        from verirl.config import load_config
        from verirl.trainer import Trainer, new_run_dir

        overrides = tiny_run_overrides(
            tiny_model_dir, run_dir, REFERENCE_STEPS, f"run.keep_checkpoints={REFERENCE_STEPS}"
        )
        cfg = load_config(None, overrides)
        with Trainer(
            build(cfg), new_run_dir(cfg)
        ) as trainer:  # config.yaml written, as the CLI does
            trainer.fit()

    return shared(tmp_path_factory, "reference-run", train)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``lowest`` the tests the lowest-versions stage runs (tests/lowest_versions.txt,
    chosen by :mod:`tests.api_coverage`)."""
    from tests.api_coverage import listed

    chosen = set(listed())
    for item in items:
        if item.nodeid in chosen:
            item.add_marker(pytest.mark.lowest)
