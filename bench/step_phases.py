"""Where a training step's time goes: wall-clock timers around its phases, installed the same
way in verirl's trainer and in TRL's ``GRPOTrainer`` (``bench_memory.py --phases``).

The phases of one step (seconds, the last step of a run):

- ``generation``: sampling the responses (verirl's engine; TRL's ``model.generate``);
- ``rollout_other``: the rest of producing the batch (rewards, tokenizing, no-grad scoring);
- ``forward``: the learner's forward passes with gradients (decoder and output head), of which
  ``forward_head``: the output head (log-probs and entropy, a chunk at a time);
- ``backward``: ``loss.backward()``, of which ``backward_recompute``: decoder layers run again
  (activation checkpointing), and ``backward_head``: the head's backward, its own recompute
  included (``backward_head_recompute``: the part that builds the chunks' logits again, where
  it can be told apart);
- ``optimizer``: gradient clipping and the optimizer's step;
- ``other``: the step's remainder (the loss arithmetic, collation, weight sync, callbacks).

The head's backward is timed between two identity autograd nodes, one on the head's input and
one on its output: the autograd engine runs a node's predecessors, all of the head's, between
them (it runs the ready node created last first). Nothing here changes a number of the step.
"""

from __future__ import annotations

import functools
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)

KEYS = (
    "generation",
    "rollout_other",
    "forward",
    "forward_head",
    "backward",
    "backward_recompute",
    "backward_head",
    "backward_head_recompute",
    "optimizer",
    "other",
)


class Phases:
    """Seconds per phase since :meth:`reset`. A phase entered again while it runs (a generate
    that calls another generate) is counted once."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.active: set[str] = set()
        self.backward_depth = 0
        self.head_exit: list[float] = []

    def reset(self) -> None:
        self.seconds.clear()
        self.head_exit.clear()

    @property
    def in_backward(self) -> bool:
        return self.backward_depth > 0

    @contextmanager
    def timing(self, key: str | None) -> Iterator[None]:
        if key is None or key in self.active:
            yield
            return
        self.active.add(key)
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[key] += time.perf_counter() - t0
            self.active.discard(key)

    def wrap(self, owner: Any, name: str, key: Callable[[], str | None] | str) -> None:
        """Time every call of ``owner.name`` under ``key`` (or the key ``key()`` names at call
        time; None: not timed)."""
        original = getattr(owner, name)
        choose = key if callable(key) else (lambda: key)

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            with self.timing(choose()):
                return original(*args, **kwargs)

        setattr(owner, name, timed)

    def split(self, step_s: float, rollout_s: float | None = None) -> dict[str, float]:
        """The step's split: every key of :data:`KEYS` (``other``: the step's time less the
        top-level phases)."""
        s = dict.fromkeys(KEYS, 0.0)
        s.update(self.seconds)
        if rollout_s is not None:  # verirl reports the rollout's whole time itself
            s["rollout_other"] = max(0.0, rollout_s - s["generation"])
        top = ("generation", "rollout_other", "forward", "backward", "optimizer")
        s["other"] = max(0.0, step_s - sum(s[k] for k in top))
        s["step"] = step_s
        return s

    # ---- the head's backward, between two identity nodes ------------------------------------
    def head_marks(self) -> tuple[Callable[[torch.Tensor], torch.Tensor], ...]:
        """(enter, exit): identity functions for the head's input and output whose backward
        nodes stamp when the head's backward starts (exit) and ends (enter)."""
        phases = self

        class Exit(torch.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
                return x.view_as(x)

            @staticmethod
            def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
                phases.head_exit.append(time.perf_counter())
                return grad

        class Enter(torch.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
                return x.view_as(x)

            @staticmethod
            def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
                if phases.head_exit:
                    phases.seconds["backward_head"] += time.perf_counter() - phases.head_exit.pop()
                return grad

        def enter(x: torch.Tensor) -> torch.Tensor:
            return Enter.apply(x) if x.requires_grad else x

        def exit_(x: torch.Tensor) -> torch.Tensor:
            return Exit.apply(x) if x.requires_grad else x

        return enter, exit_

    # ---- what both trainers share ------------------------------------------------------------
    def install_common(self) -> None:
        """``loss.backward()``, decoder layers run inside it, clipping and optimizer steps."""
        backward = torch.autograd.backward

        @functools.wraps(backward)
        def timed_backward(*args: Any, **kwargs: Any) -> Any:
            self.backward_depth += 1
            try:
                with self.timing("backward"):
                    return backward(*args, **kwargs)
            finally:
                self.backward_depth -= 1

        torch.autograd.backward = timed_backward  # type: ignore[assignment]
        recompute = lambda: "backward_recompute" if self.in_backward else None  # noqa: E731
        for layer in _decoder_layer_classes():
            self.wrap(layer, "forward", recompute)
        self.wrap(torch.nn.utils, "clip_grad_norm_", "optimizer")
        started: list[float] = []

        def pre(*_: Any) -> None:
            started.append(time.perf_counter())

        def post(*_: Any) -> None:
            if started:
                self.seconds["optimizer"] += time.perf_counter() - started.pop()

        register_optimizer_step_pre_hook(pre)
        register_optimizer_step_post_hook(post)

    # ---- verirl --------------------------------------------------------------------------------
    def install_verirl(self) -> None:
        """Before the trainer is built (activation checkpointing binds the layers' forward)."""
        import verirl.lm.head as head_module
        import verirl.lm.linear_head as linear_head_module
        import verirl.train.learner as learner_module
        from verirl.rollout.hf import HFEngine

        self.install_common()
        self.wrap(HFEngine, "generate", "generation")
        grad = lambda: "forward" if torch.is_grad_enabled() and not self.in_backward else None  # noqa: E731
        self.wrap(learner_module.Learner, "token_logprobs", grad)
        head_recompute = lambda: "backward_head_recompute" if self.in_backward else None  # noqa: E731
        self.wrap(head_module, "_chunk_logprobs", head_recompute)  # a module head's chunks
        self.wrap(linear_head_module, "_tile_logits", head_recompute)  # a Linear head's tiles
        head_logprobs = learner_module.head_logprobs
        enter, exit_ = self.head_marks()

        @functools.wraps(head_logprobs)
        def timed_head(head: Any, hidden: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            if not (torch.is_grad_enabled() and hidden.requires_grad):
                return head_logprobs(head, hidden, *args, **kwargs)
            with self.timing("forward_head"):
                out = head_logprobs(head, enter(hidden), *args, **kwargs)
            return type(out)(exit_(out.logprobs), out.entropy)

        learner_module.head_logprobs = timed_head  # type: ignore[assignment]

    # ---- TRL -------------------------------------------------------------------------------------
    def install_trl(self) -> None:
        """Before the ``GRPOTrainer`` is built."""
        import trl.trainer.utils as trl_utils
        from transformers import GenerationMixin
        from trl import GRPOTrainer

        self.install_common()
        self.wrap(GenerationMixin, "generate", "generation")
        self.wrap(GRPOTrainer, "_generate_and_score_completions", "rollout")
        grad = lambda: "forward" if torch.is_grad_enabled() and not self.in_backward else None  # noqa: E731
        self.wrap(GRPOTrainer, "_get_per_token_logps_and_entropies", grad)
        function = trl_utils._ChunkedLogProbFunction
        enter, exit_ = self.head_marks()
        phases = self

        class TimedChunkedLogProb:
            @staticmethod
            def apply(hidden: torch.Tensor, *args: Any) -> Any:
                if not (torch.is_grad_enabled() and hidden.requires_grad):
                    return function.apply(hidden, *args)
                with phases.timing("forward_head"):
                    lp, *rest = function.apply(enter(hidden), *args)
                return (exit_(lp), *rest)

        trl_utils._ChunkedLogProbFunction = TimedChunkedLogProb  # type: ignore[assignment,misc]

    def trl_split(self, step_s: float) -> dict[str, float]:
        rollout = self.seconds.pop("rollout", 0.0)
        return self.split(step_s, rollout_s=rollout)


def _decoder_layer_classes() -> list[type]:
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer
    from transformers.models.qwen2.modeling_qwen2 import Qwen2DecoderLayer

    return [LlamaDecoderLayer, Qwen2DecoderLayer]


def format_split(rows: dict[str, dict[str, float]]) -> list[str]:
    """One line per phase, one column per side: seconds (share of the step)."""
    sides = list(rows)
    out = [f"{'phase':26}" + "".join(f"{s:>18}" for s in sides)]
    labels = {
        "forward_head": "  of which head",
        "backward_recompute": "  of which layer recompute",
        "backward_head": "  of which head",
        "backward_head_recompute": "    of which rebuilding",
    }
    for key in (*KEYS, "step"):
        cells = []
        for side in sides:
            v, step = rows[side].get(key, 0.0), rows[side].get("step", 0.0) or 1.0
            cells.append(f"{v:8.1f} ({100 * v / step:4.1f}%)")
        out.append(f"{labels.get(key, key):26}" + "".join(f"{c:>18}" for c in cells))
    return out
