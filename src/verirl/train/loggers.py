"""Where a run's metrics go besides ``metrics.jsonl``: registered experiment trackers.

``run.loggers`` names them, each with the parameters its model accepts (checked with the rest
of the config before the run): ``tensorboard`` (event files in the run directory),
``wandb`` (Weights & Biases; ``mode: offline`` writes the run under ``<run_dir>/wandb`` with
no network, ``wandb sync`` uploads it later) and ``trackio`` (Hugging Face's local-first
tracker: a SQLite database under ``TRACKIO_DIR``, browsed with ``trackio show``). Each
receives every training step's metrics (non-finite values left out) and the before/after
evaluations; ``metrics.jsonl`` stays the record that ``verirl report`` reads.

A logger of your own is a factory registered in :data:`LOGGERS`::

    class MyParams(BaseModel):
        url: str

    @LOGGERS.register("my_tracker", MyParams)
    def my_tracker(params: MyParams, ctx: LoggerContext) -> MetricLogger: ...

and is chosen with ``run.loggers=[{name: my_tracker, params: {url: ...}}]`` (a module in
``run.plugins`` registers it).
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from verirl.registry import Registry, Spec

if TYPE_CHECKING:
    from verirl.config import TrainConfig


class MetricLogger(Protocol):
    """A sink for one run's metrics."""

    def log(self, step: int, metrics: Mapping[str, float]) -> None:
        """Record ``metrics`` (finite floats) at ``step``."""
        ...

    def close(self) -> None:
        """Flush and finish the run (idempotent)."""
        ...


@dataclass(frozen=True)
class LoggerContext:
    """What a logger is told about the run: its directory and name (a tracker's run name),
    the resolved config (the tracker's hyper-parameters) and the step it resumes after
    (0: a new run)."""

    run_dir: Path
    run_name: str
    config: dict[str, Any] = field(default_factory=dict)
    resume_step: int = 0


LoggerFactory = Callable[[Any, LoggerContext], MetricLogger]


LOGGERS: Registry[Spec[LoggerFactory]] = Registry("logger")
"""Loggers by name (``run.loggers``), built as ``spec.build(params, ctx)``."""


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _missing(package: str, extra: str) -> RuntimeError:
    return RuntimeError(
        f"run.loggers names {extra!r}, which needs the {package} package: "
        f"pip install 'verirl[{extra}]'"
    )


# ---- TensorBoard -------------------------------------------------------------------------------
class TensorBoardParams(_Params):
    dir: str = Field(
        "tensorboard",
        description="Directory of the event files, relative to the run directory "
        "(tensorboard --logdir <run_dir>/tensorboard).",
    )


class TensorBoardLogger:
    """Scalars to TensorBoard event files (torch's ``SummaryWriter``)."""

    def __init__(self, params: TensorBoardParams, ctx: LoggerContext) -> None:
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise _missing("tensorboard", "tensorboard") from exc
        self.dir = ctx.run_dir / params.dir
        # a resumed run drops the events a killed process logged after its last checkpoint
        purge = ctx.resume_step + 1 if ctx.resume_step else None
        self._writer: Any = SummaryWriter(str(self.dir), purge_step=purge)

    def log(self, step: int, metrics: Mapping[str, float]) -> None:
        for key, value in metrics.items():
            self._writer.add_scalar(key, value, step)
        self._writer.flush()  # a killed run keeps its steps

    def close(self) -> None:
        self._writer.close()


@LOGGERS.register("tensorboard", TensorBoardParams)
def tensorboard_logger(params: TensorBoardParams, ctx: LoggerContext) -> MetricLogger:
    """Scalars to TensorBoard event files in the run directory."""
    return TensorBoardLogger(params, ctx)


# ---- Weights & Biases --------------------------------------------------------------------------
class WandbParams(_Params):
    project: str = Field("verirl", description="The W&B project.")
    entity: str | None = Field(None, description="The W&B entity (None: your default).")
    mode: Literal["online", "offline", "disabled"] | None = Field(
        None,
        description="'offline' writes the run under <run_dir>/wandb with no network (upload "
        "later with `wandb sync`); None: W&B's own setting (WANDB_MODE, or online when logged "
        "in).",
    )
    group: str | None = Field(None, description="W&B run group (None: none).")
    tags: list[str] = Field(default_factory=list, description="W&B run tags.")


def _run_id(name: str) -> str:
    """A W&B run id from the run name (a resumed run continues the same W&B run)."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", name)[:64] or "verirl"


class WandbLogger:
    """One W&B run per verirl run, its config the resolved ``TrainConfig``; files under
    ``<run_dir>/wandb``."""

    def __init__(self, params: WandbParams, ctx: LoggerContext) -> None:
        try:
            import wandb
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise _missing("wandb", "wandb") from exc
        self._run: Any = wandb.init(
            project=params.project,
            entity=params.entity,
            name=ctx.run_name,
            id=_run_id(ctx.run_name),
            resume="allow",
            dir=str(ctx.run_dir),
            config=ctx.config,
            mode=params.mode,
            group=params.group,
            tags=params.tags or None,
            reinit="create_new",
        )
        self._closed = False

    def log(self, step: int, metrics: Mapping[str, float]) -> None:
        self._run.log(dict(metrics), step=step)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._run.finish()


@LOGGERS.register("wandb", WandbParams)
def wandb_logger(params: WandbParams, ctx: LoggerContext) -> MetricLogger:
    """Every step's metrics to a Weights & Biases run (online, offline or disabled)."""
    return WandbLogger(params, ctx)


# ---- trackio -----------------------------------------------------------------------------------
class TrackioParams(_Params):
    project: str = Field(
        "verirl", description="The trackio project (one SQLite database under TRACKIO_DIR)."
    )
    space_id: str | None = Field(
        None,
        description="A Hugging Face Space to sync the dashboard to (None: local only, "
        "`trackio show --project <project>`).",
    )
    group: str | None = Field(None, description="trackio run group (None: none).")


class TrackioLogger:
    """One trackio run per verirl run, named after it; local unless ``space_id`` is set.
    trackio's own messages go to stderr: stdout holds the run's step lines."""

    def __init__(self, params: TrackioParams, ctx: LoggerContext) -> None:
        try:
            import trackio
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise _missing("trackio", "trackio") from exc
        self._current = trackio.context_vars.current_run
        with contextlib.redirect_stdout(sys.stderr):
            self._run: Any = trackio.init(
                project=params.project,
                name=ctx.run_name,
                group=params.group,
                space_id=params.space_id,
                config=ctx.config,
                resume="allow" if ctx.resume_step else "never",
            )
        self._closed = False

    def log(self, step: int, metrics: Mapping[str, float]) -> None:
        self._run.log(dict(metrics), step=step)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.redirect_stdout(sys.stderr):
            self._run.finish()
        if self._current.get() is self._run:  # or trackio's exit hook finishes it again
            self._current.set(None)


@LOGGERS.register("trackio", TrackioParams)
def trackio_logger(params: TrackioParams, ctx: LoggerContext) -> MetricLogger:
    """Every step's metrics to a trackio project (Hugging Face's local-first tracker)."""
    return TrackioLogger(params, ctx)


# ---- building the run's loggers ----------------------------------------------------------------
def start_loggers(chosen: Sequence[Any], ctx: LoggerContext) -> list[MetricLogger]:
    """The loggers ``chosen`` names (items with ``name`` and ``params``, as ``run.loggers``
    holds them), started in order; one that fails to start closes those already started."""
    out: list[MetricLogger] = []
    try:
        for item in chosen:
            out.append(LOGGERS.get(item.name).build(item.params, ctx))
    except BaseException:
        for logger in out:
            logger.close()
        raise
    return out


def run_loggers(cfg: TrainConfig, run_dir: Path, resume_step: int = 0) -> list[MetricLogger]:
    """The loggers of ``cfg.run.loggers`` for the run in ``run_dir`` (named after it, the
    resolved config as its hyper-parameters)."""
    if not cfg.run.loggers:
        return []
    ctx = LoggerContext(run_dir, run_dir.name, cfg.model_dump(mode="json"), resume_step)
    return start_loggers(cfg.run.loggers, ctx)
