"""The trainer runs the loop over the parts it is given (:mod:`verirl.trainer`) and builds
none of its own; closing it closes them."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import TinyRun
from verirl.assembly import build, load_config
from verirl.trainer import Trainer
from verirl.types import Batch


def test_the_loop_drives_the_parts_it_is_given_and_closing_closes_them(
    tiny_run: TinyRun, tmp_path: Path
) -> None:
    parts = build(load_config(None, tiny_run(tmp_path / "run", 1)))
    update, rows = parts.learner.update, []

    def recorded(batch: Batch) -> dict[str, float]:
        rows.append(batch.input_ids.shape[0])
        return update(batch)

    parts.learner.update = recorded  # type: ignore[method-assign]
    with Trainer(parts, tmp_path / "run") as trainer:
        assert trainer.parts is parts
        metrics = trainer.train_step()
        assert parts.verifiers.executor.name == "inline"
    assert rows == [12]  # 3 prompts x 4 samples, one update, by the given learner
    assert metrics["throughput/trained_tokens"] > 0 and trainer.step == 0
    assert not parts._stop.alive  # the trainer closed the parts
