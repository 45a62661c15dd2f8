"""A transformers rollout engine with its own decode loop.

Why not ``model.generate``: RL sampling wants three things it does not give cheaply —

1. *prefix sharing*: the ``n`` samples of a prompt share its key/value cache, so the prompt is
   encoded once per prompt, not once per sample;
2. *shrinking batches*: a sequence that emitted EOS (or a stop string) leaves the batch and its
   cache rows are dropped, so late steps only pay for the sequences still running;
3. *log-probs of the sampled tokens* under the sampling distribution, recorded as we go.

The engine shares the learner's module, so ``sync_weights`` is a no-op: the next call sees the
latest parameters.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict, Field
from transformers import DynamicCache

from verirl import progress
from verirl.device import Placement
from verirl.rollout.base import ENGINES, Generation
from verirl.types import SamplingParams


class HFParams(BaseModel):
    """Parameters of the ``hf`` engine (``rollout.engine.params``)."""

    model_config = ConfigDict(extra="forbid")
    max_batch_sequences: int = Field(
        64,
        ge=1,
        description="Sequences (prompts × n) decoded together; larger is faster per token "
        "until memory or cache bandwidth limits.",
    )


class HFEngine:
    """Batched sampling from a causal LM, on the device the model lives on.

    - ``max_batch_sequences``: how many sequences (prompts × n) decode together; larger is
      faster per token until memory or cache bandwidth limits.
    - ``autocast_dtype``: e.g. ``torch.bfloat16`` to run the forward passes under autocast on
      the model's device (CUDA, or CPUs with AVX512-BF16 / AMX); ``None`` keeps fp32.
    """

    def __init__(
        self,
        model: torch.nn.Module,
        tokenizer: Any,
        max_batch_sequences: int = 64,
        autocast_dtype: torch.dtype | None = None,
        seed: int = 0,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.max_batch_sequences = max_batch_sequences
        self.autocast_dtype = autocast_dtype
        self.device = _model_device(model)
        self.generator = torch.Generator(device=self.device).manual_seed(seed)
        self.eos_ids = _eos_ids(model, tokenizer)
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0

    def sync_weights(self) -> None:  # shares the learner's module
        return None

    # ---- public API ----------------------------------------------------------------------
    def generate(
        self, prompts: Sequence[Sequence[int]], sampling: SamplingParams
    ) -> list[list[Generation]]:
        sampling.check()
        if sampling.seed is not None:
            self.generator.manual_seed(sampling.seed)
        per_chunk = max(1, self.max_batch_sequences // sampling.n)
        out: list[list[Generation]] = []
        was_training = self.model.training
        self.model.eval()
        try:
            for start in range(0, len(prompts), per_chunk):
                chunk = [list(p) for p in prompts[start : start + per_chunk]]
                out.extend(self._generate_chunk(chunk, sampling))
        finally:
            self.model.train(was_training)
        return out

    def state_dict(self) -> dict[str, Any]:
        return {"generator": self.generator.get_state()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.generator.set_state(state["generator"])

    # ---- the decode loop -----------------------------------------------------------------
    @torch.no_grad()
    def _generate_chunk(
        self, prompts: list[list[int]], sampling: SamplingParams
    ) -> list[list[Generation]]:
        n = sampling.n
        if any(len(p) == 0 for p in prompts):
            raise ValueError("every prompt needs at least one token")
        width = max(len(p) for p in prompts)
        ids = torch.full((len(prompts), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for i, p in enumerate(prompts):  # left padding: the last prompt token is aligned
            ids[i, width - len(p) :] = torch.tensor(p)
            mask[i, width - len(p) :] = 1
        positions = (mask.cumsum(1) - 1).clamp(min=0)
        ids, mask, positions = ids.to(self.device), mask.to(self.device), positions.to(self.device)

        cache = DynamicCache()
        with self._autocast():
            logits = (
                self.model(
                    input_ids=ids,
                    attention_mask=mask,
                    position_ids=positions,
                    past_key_values=cache,
                    use_cache=True,
                    logits_to_keep=1,
                )
                .logits[:, -1, :]
                .float()
            )
        # share the prompt cache among the n samples of each prompt
        if n > 1:
            cache.batch_repeat_interleave(n)
            logits = logits.repeat_interleave(n, dim=0)
            mask = mask.repeat_interleave(n, dim=0)
        next_pos = mask.sum(1)  # position of the first generated token

        total = len(prompts) * n
        tokens: list[list[int]] = [[] for _ in range(total)]
        logps: list[list[float]] = [[] for _ in range(total)]
        finish = ["length"] * total
        alive = torch.arange(total)  # row r of the running batch is sequence alive[r]
        eos = torch.tensor(sorted(self.eos_ids), dtype=torch.long, device=self.device)
        stop_checker = _StopStrings(self.tokenizer, sampling.stop) if sampling.stop else None
        reported = 0  # sequences counted as finished in the running progress phase

        for step in range(sampling.max_new_tokens):
            token, logp = _sample(logits, sampling.temperature, sampling.top_p, self.generator)
            done = torch.isin(token, eos).cpu()
            token_list, logp_list = token.tolist(), logp.tolist()  # one device sync per step
            for r, seq in enumerate(alive.tolist()):
                tokens[seq].append(int(token_list[r]))
                logps[seq].append(float(logp_list[r]))
            if stop_checker is not None:
                for r, seq in enumerate(alive.tolist()):
                    if not done[r] and stop_checker.hit(tokens[seq]):
                        done[r] = True
            for r in torch.nonzero(done).flatten().tolist():
                finish[int(alive[r])] = "stop"
            if step == sampling.max_new_tokens - 1:
                break
            keep = torch.nonzero(~done).flatten()
            progress.advance(alive.numel() - keep.numel())  # the sequences that ended here
            reported += alive.numel() - keep.numel()
            if keep.numel() == 0:
                break
            if keep.numel() < alive.numel():
                on_dev = keep.to(self.device)
                cache.batch_select_indices(on_dev)
                alive = alive[keep]
                mask, next_pos, token = mask[on_dev], next_pos[on_dev], token[on_dev]
            ones = torch.ones((mask.shape[0], 1), dtype=mask.dtype, device=self.device)
            mask = torch.cat([mask, ones], dim=1)
            with self._autocast():
                logits = (
                    self.model(
                        input_ids=token.unsqueeze(1),
                        attention_mask=mask,
                        position_ids=next_pos.unsqueeze(1),
                        past_key_values=cache,
                        use_cache=True,
                    )
                    .logits[:, -1, :]
                    .float()
                )
            next_pos = next_pos + 1

        progress.advance(total - reported)  # those still running at the last step
        results: list[list[Generation]] = []
        for i in range(len(prompts)):
            group = []
            for seq in range(i * n, (i + 1) * n):
                ids_out = tokens[seq]
                text = self.tokenizer.decode(ids_out, skip_special_tokens=True)
                if stop_checker is not None and finish[seq] == "stop":
                    text = stop_checker.truncate(text)
                group.append(
                    Generation(tuple(ids_out), tuple(logps[seq]), text, finish[seq])  # type: ignore[arg-type]
                )
            results.append(group)
        return results

    @contextlib.contextmanager
    def _autocast(self) -> Iterator[None]:
        if self.autocast_dtype is None:
            yield
        else:
            with torch.autocast(self.device.type, dtype=self.autocast_dtype):
                yield


@ENGINES.register("hf", HFParams)
def build_hf_engine(
    params: HFParams, model: torch.nn.Module, tokenizer: Any, placement: Placement, seed: int
) -> HFEngine:
    """The transformers engine over the learner's own module (no weight copy to sync)."""
    return HFEngine(model, tokenizer, params.max_batch_sequences, placement.autocast_dtype, seed)


def _model_device(model: torch.nn.Module) -> torch.device:
    try:
        return next(model.parameters()).device
    except (StopIteration, AttributeError):
        return torch.device("cpu")


def _sample(
    logits: torch.Tensor, temperature: float, top_p: float, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Sample one token per row; return (token [B], log-prob [B] under the tempered policy).

    ``temperature == 0`` is greedy decoding (log-prob of the argmax under temperature 1).
    Top-p truncation restricts *which* tokens can be drawn; the recorded log-prob is the
    tempered policy's, un-renormalised, which is what the learner recomputes.
    """
    if temperature == 0:
        logp = torch.log_softmax(logits, dim=-1)
        token = logits.argmax(dim=-1)
        return token, logp.gather(1, token[:, None]).squeeze(1)
    logp = torch.log_softmax(logits / temperature, dim=-1)
    probs = logp.exp()
    if top_p < 1.0:
        sorted_p, order = probs.sort(dim=-1, descending=True)
        cumulative = sorted_p.cumsum(dim=-1)
        drop = cumulative - sorted_p > top_p  # keep the smallest prefix with mass >= top_p
        sorted_p = sorted_p.masked_fill(drop, 0.0)
        probs = torch.zeros_like(probs).scatter_(1, order, sorted_p)
    token = torch.multinomial(probs, 1, generator=generator).squeeze(1)
    return token, logp.gather(1, token[:, None]).squeeze(1)


def _eos_ids(model: torch.nn.Module, tokenizer: Any) -> set[int]:
    ids: set[int] = set()
    cfg = getattr(model, "generation_config", None)
    for source in (getattr(cfg, "eos_token_id", None), tokenizer.eos_token_id):
        if isinstance(source, int):
            ids.add(source)
        elif isinstance(source, list | tuple):
            ids.update(int(x) for x in source)
    if not ids:
        raise ValueError("the tokenizer has no eos_token_id; set one so generation can stop")
    return ids


class _StopStrings:
    """Detects stop strings in the decoded tail of a sequence."""

    def __init__(self, tokenizer: Any, stops: Sequence[str]) -> None:
        self.tokenizer = tokenizer
        self.stops = tuple(s for s in stops if s)
        # a stop string of k characters spans at most k tokens (+1 for a split boundary)
        self.window = max(len(s) for s in self.stops) + 1 if self.stops else 0

    def hit(self, ids: list[int]) -> bool:
        tail = self.tokenizer.decode(ids[-self.window :], skip_special_tokens=True)
        return any(s in tail for s in self.stops)

    def truncate(self, text: str) -> str:
        """Cut ``text`` right after the first stop string (the stop string is kept)."""
        cut = min((text.find(s) + len(s) for s in self.stops if s in text), default=len(text))
        return text[:cut]
