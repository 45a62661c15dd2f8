"""Sequence scoring: summed log π(continuation | context) for many (context, continuation) pairs.

Likelihood-based rewards (CER, VeriFree) ask the *current* policy how likely a short answer is
after a long context. For CER (Xiao et al. 2026, Eqs. 4–5) every rollout's solution s_j is a
context and every distinct answer a_k of the group (plus the reference a*) a continuation:
``G × (K + 1)`` pairs that share only ``G`` distinct contexts, which in turn share one prompt.

Interface (:class:`SequenceScorer`): ``score(pairs) -> list[float]``, where a pair is
``(context_ids, continuation_ids)`` and the result is

    score(c, x) = Σ_t log π(x_t | c ⊕ x_<t)        (natural log, no length normalisation)

for each pair, in order. An empty continuation scores 0.0 (the empty product). Identical pairs
are scored once. The policy is run without gradients and in eval mode (restored afterwards),
so scores are plain floats under the weights the module holds at call time. The vLLM scorer
(:class:`verirl.rollout.vllm_scoring.VLLMScorer`: prompt log-probs over ``context ⊕
continuation`` with automatic prefix caching) implements the same interface and shares
:func:`dedup_pairs`; :func:`score_grid` is the matrix view built on top of it.

Implementations here:

- :class:`PrefixCacheScorer` — the fast path. Distinct contexts are sorted so that those
  sharing a prefix (the prompt) form a family; a family's common prefix is encoded once, then
  its contexts' remainders in length-sorted batches, keeping the key/value cache. Every
  continuation of a context is then scored from a row-indexed copy of that cache, in batches:
  only the continuation tokens go through the model (none at all for one-token answers, whose
  log-prob is read from the context's last hidden state).
- :class:`ReferenceScorer` — the plain way, as the CER release does it: re-encode
  ``context ⊕ continuation`` in full for every distinct pair (padded batches). Used by tests
  and the benchmark as the ground truth.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

import torch
from transformers import DynamicCache

from verirl.device import autocast
from verirl.lm import CausalLM, head_logprobs

if TYPE_CHECKING:
    from transformers import PreTrainedModel
    from transformers.cache_utils import DynamicLayer

Pair = tuple[Sequence[int], Sequence[int]]


@runtime_checkable
class SequenceScorer(Protocol):
    """Scores continuations under the current policy.

    ``score(pairs)[i] = Σ_t log π(x_t | c ⊕ x_<t)`` for ``pairs[i] = (c, x)``; 0.0 when ``x``
    is empty. Contexts must be non-empty. ``metrics()`` describes the last call.
    """

    def score(self, pairs: Sequence[Pair]) -> list[float]: ...

    def metrics(self) -> dict[str, float]: ...


def score_grid(
    scorer: SequenceScorer,
    contexts: Sequence[Sequence[int]],
    continuations: Sequence[Sequence[int]],
    mask: torch.Tensor | None = None,
    fill: float = -math.inf,
) -> torch.Tensor:
    """The matrix ``ℓ[i, k] = score(contexts[i], continuations[k])``, float64 ``[n_ctx, n_cont]``.

    ``mask`` (bool ``[n_ctx, n_cont]``) restricts scoring to the cells where it is True; the
    others get ``fill`` (default −inf, i.e. probability 0). All cells go to the scorer in one
    call, so it can batch and share prefixes across the whole grid.
    """
    return score_grids(scorer, [(contexts, continuations, mask)], fill)[0]


Grid = tuple[Sequence[Sequence[int]], Sequence[Sequence[int]], "torch.Tensor | None"]


def score_grids(
    scorer: SequenceScorer, grids: Sequence[Grid], fill: float = -math.inf
) -> list[torch.Tensor]:
    """:func:`score_grid` for several ``(contexts, continuations, mask)`` grids in *one*
    ``scorer.score`` call (e.g. every prompt group of a training step), so batching and
    de-duplication work across grids. Returns one float64 matrix per grid."""
    pairs: list[Pair] = []
    plans: list[tuple[tuple[int, int], list[list[int]]]] = []
    for g, (contexts, continuations, mask) in enumerate(grids):
        n_ctx, n_cont = len(contexts), len(continuations)
        if mask is None:
            mask = torch.ones((n_ctx, n_cont), dtype=torch.bool)
        if tuple(mask.shape) != (n_ctx, n_cont):
            raise ValueError(
                f"score_grids: grid {g} mask has shape {tuple(mask.shape)}, "
                f"expected ({n_ctx}, {n_cont})"
            )
        cells = torch.nonzero(mask).tolist()
        pairs.extend((contexts[i], continuations[k]) for i, k in cells)
        plans.append(((n_ctx, n_cont), cells))
    values = scorer.score(pairs) if pairs else []
    out: list[torch.Tensor] = []
    pos = 0
    for shape, cells in plans:
        grid = torch.full(shape, fill, dtype=torch.float64)
        for i, k in cells:
            grid[i, k] = values[pos]
            pos += 1
        out.append(grid)
    return out


@dataclass
class ScoringStats:
    """Counters of one ``score`` call.

    ``pairs``: pairs asked for; ``unique_pairs``: after de-duplication; ``contexts``: distinct
    contexts; ``tokens_forwarded``: token positions run through the model (padding included);
    ``naive_tokens``: what re-encoding every requested pair in full would have run;
    ``forward_calls``; ``seconds``: wall time.
    """

    pairs: int = 0
    unique_pairs: int = 0
    contexts: int = 0
    tokens_forwarded: int = 0
    padding_tokens: int = 0
    naive_tokens: int = 0
    forward_calls: int = 0
    seconds: float = 0.0

    def as_metrics(self, prefix: str = "scoring/") -> dict[str, float]:
        out = {prefix + f.name: float(getattr(self, f.name)) for f in fields(self)}
        # CER logs the share of rows left after de-duplication as ``compression/ratio``
        out[prefix + "dedup_ratio"] = self.unique_pairs / self.pairs if self.pairs else 1.0
        out[prefix + "token_saving"] = (
            self.naive_tokens / self.tokens_forwarded if self.tokens_forwarded else 1.0
        )
        return out


class _TransformersScorer:
    """Shared plumbing: validation, de-duplication, eval mode, autocast, statistics.

    - ``model``: a transformers causal LM (or a PEFT wrapper of one), used as is.
    - ``pad_id``: the token id written into padded positions (always masked out).
    - ``max_batch_rows``: most sequences in one forward pass.
    - ``max_batch_tokens``: most ``rows × padded length`` positions in one forward pass
      (bounds activation and key/value-cache memory).
    - ``autocast_dtype``: e.g. ``torch.bfloat16`` to run forwards under autocast; log-softmax is
      always taken in float32. ``None`` keeps the model's dtype.
    - ``chunk_tokens``: positions per chunk of the output head (None: automatic); the model
      returns hidden states and only the scored positions' logits are built, a chunk at a
      time (:func:`verirl.lm.head_logprobs`).
    """

    def __init__(
        self,
        model: torch.nn.Module,
        pad_id: int,
        max_batch_rows: int = 64,
        max_batch_tokens: int = 16384,
        autocast_dtype: torch.dtype | None = None,
        device: torch.device | str | None = None,
        chunk_tokens: int | None = None,
    ) -> None:
        if max_batch_rows < 1:
            raise ValueError(f"max_batch_rows must be >= 1, got {max_batch_rows}")
        if max_batch_tokens < 1:
            raise ValueError(f"max_batch_tokens must be >= 1, got {max_batch_tokens}")
        self.model = model
        self.pad_id = int(pad_id)
        self.max_batch_rows = max_batch_rows
        self.max_batch_tokens = max_batch_tokens
        self.autocast_dtype = autocast_dtype
        self._device = torch.device(device) if device is not None else None
        self.chunk_tokens = chunk_tokens
        self.lm = CausalLM(model)
        self.stats = ScoringStats()

    @property
    def device(self) -> torch.device:
        """Where batches go: the given device, else the model's."""
        return self._device or next(self.model.parameters()).device

    def metrics(self) -> dict[str, float]:
        return self.stats.as_metrics()

    def score(self, pairs: Sequence[Pair]) -> list[float]:
        start = time.perf_counter()
        unique, order, self.stats = dedup_pairs(pairs, self._vocab_size())
        values = [0.0] * len(unique)
        todo = [i for i, (_, cont) in enumerate(unique) if cont]
        if todo:
            was_training = self.model.training
            self.model.eval()
            try:
                with torch.no_grad(), autocast(self.device, self.autocast_dtype):
                    got = self._score_unique([unique[i] for i in todo])
            finally:
                self.model.train(was_training)
            for i, v in zip(todo, got, strict=True):
                values[i] = v
        self.stats.seconds = time.perf_counter() - start
        return [values[i] for i in order]

    def _score_unique(self, pairs: list[tuple[tuple[int, ...], tuple[int, ...]]]) -> list[float]:
        raise NotImplementedError

    # ---- helpers -------------------------------------------------------------------------
    def _vocab_size(self) -> int:
        # A Hugging Face causal LM, whose input embeddings are an nn.Embedding.
        emb = cast("PreTrainedModel", self.model).get_input_embeddings()
        return int(cast(torch.nn.Embedding, emb).num_embeddings)

    def _forward(self, real: int, **kwargs: Any) -> torch.Tensor:
        """Run the decoder; the final hidden states [B, S, H]. ``real`` counts the
        non-padding input tokens (statistics)."""
        self.stats.forward_calls += 1
        self.stats.tokens_forwarded += int(kwargs["input_ids"].numel())
        self.stats.padding_tokens += int(kwargs["input_ids"].numel()) - real
        return self.lm.hidden(**kwargs)

    def _logprobs(
        self, hidden: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Float64 log-probs of ``targets`` at the masked positions (0 elsewhere), on the CPU."""
        out = head_logprobs(
            self.lm.head,
            hidden,
            targets.to(hidden.device),
            None if mask is None else mask.to(hidden.device),
            chunk_tokens=self.chunk_tokens,
        )
        return out.logprobs.cpu().double()

    def _batches(
        self,
        lengths: Sequence[int],
        extra: int = 0,
        rows: int | None = None,
        spread: float | None = None,
    ) -> Iterator[list[int]]:
        """Consecutive index runs with at most ``rows`` (default ``max_batch_rows``) rows and
        ``rows × (longest + extra) <= max_batch_tokens`` (a lone row always fits). With
        ``spread``, a run also ends before a length above ``spread ×`` its first length + 2,
        which bounds the padding when ``lengths`` are sorted."""
        limit = rows or self.max_batch_rows
        batch: list[int] = []
        longest = first = 0
        for i, n in enumerate(lengths):
            width = max(longest, n + extra)
            if batch and (
                len(batch) + 1 > limit
                or (len(batch) + 1) * width > self.max_batch_tokens
                or (spread is not None and n > spread * first + 2)
            ):
                yield batch
                batch, width = [], n + extra
            if not batch:
                first = n
            batch.append(i)
            longest = width
        if batch:
            yield batch


UniquePair = tuple[tuple[int, ...], tuple[int, ...]]


def dedup_pairs(
    pairs: Sequence[Pair], vocab: int
) -> tuple[list[UniquePair], list[int], ScoringStats]:
    """Validate ``pairs`` (token ids in ``[0, vocab)``, non-empty contexts) and de-duplicate
    them: ``(unique, order, stats)`` with ``pairs[i] == unique[order[i]]`` and the counters
    of :class:`ScoringStats` that do not depend on how the unique pairs are scored."""
    index: dict[UniquePair, int] = {}
    order: list[int] = []
    naive = 0
    for n, (ctx, cont) in enumerate(pairs):
        key = (_as_ids(ctx, vocab, n, "context"), _as_ids(cont, vocab, n, "continuation"))
        if not key[0]:
            raise ValueError(f"pair {n}: the context is empty; every pair needs one token")
        naive += len(key[0]) + len(key[1]) if key[1] else 0
        order.append(index.setdefault(key, len(index)))
    unique = list(index)
    stats = ScoringStats(
        pairs=len(order),
        unique_pairs=len(unique),
        contexts=len({c for c, _ in unique}),
        naive_tokens=naive,
    )
    return unique, order, stats


def _as_ids(seq: Sequence[int], vocab: int, n: int, what: str) -> tuple[int, ...]:
    ids = tuple(int(t) for t in seq)
    for t in ids:
        if not 0 <= t < vocab:
            raise ValueError(
                f"pair {n}: {what} token id {t} is outside the vocabulary [0, {vocab})"
            )
    return ids


class ReferenceScorer(_TransformersScorer):
    """Full re-encode of ``context ⊕ continuation`` for every distinct pair (the CER release's
    way: one ``compute_log_prob`` row per pair). Rows are sorted by length, left-padded and
    batched; only the continuation's positions reach the output head."""

    def _score_unique(self, pairs: list[tuple[tuple[int, ...], tuple[int, ...]]]) -> list[float]:
        out = [0.0] * len(pairs)
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        lengths = [len(pairs[i][0]) + len(pairs[i][1]) for i in order]
        for batch in self._batches(lengths):
            rows = [order[b] for b in batch]
            seqs = [pairs[r][0] + pairs[r][1] for r in rows]
            width = max(len(s) for s in seqs)
            keep = max(len(pairs[r][1]) for r in rows) + 1
            ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
            mask = torch.zeros((len(rows), width), dtype=torch.long)
            for i, s in enumerate(seqs):
                ids[i, width - len(s) :] = torch.tensor(s)
                mask[i, width - len(s) :] = 1
            positions = (mask.cumsum(1) - 1).clamp(min=0)
            hidden = self._forward(
                sum(len(q) for q in seqs),
                input_ids=ids.to(self.device),
                attention_mask=mask.to(self.device),
                position_ids=positions.to(self.device),
            )[:, width - min(keep, width) :]
            # hidden[:, -keep + t] predicts ids[:, width - keep + t + 1]
            preds = hidden[:, :-1, :]
            targets = ids[:, width - preds.shape[1] :]
            wanted = torch.zeros(targets.shape, dtype=torch.bool)
            for i, r in enumerate(rows):
                wanted[i, targets.shape[1] - len(pairs[r][1]) :] = True
            lp = self._logprobs(preds, targets, wanted)
            for i, r in enumerate(rows):
                out[r] = float(lp[i].sum())
        return out


class PrefixCacheScorer(_TransformersScorer):
    """Encode each distinct context once and score all its continuations from its KV cache.

    1. Distinct contexts are sorted; runs that share at least ``min_shared_prefix`` leading
       tokens with the run's first context form a *family* (the G solutions of one prompt).
       A family's longest common prefix (at most its shortest context minus one token) is
       encoded once, batch 1.
    2. The family's contexts, sorted by length, are encoded in chunks on top of that prefix
       (at most ``max_contexts_per_chunk`` / ``max_batch_rows`` rows and ``max_batch_tokens``
       positions, longest at most ``max_length_spread`` × the shortest + 2 to bound padding),
       left-padded: cache rows read ``prefix ⊕ pad… ⊕ remainder`` with the pads masked out
       and explicit position ids. The last position's hidden state gives every
       continuation's first token, so one-token continuations need no further forward.
    3. Longer continuations are batched the same way; each batch takes a row-indexed copy of
       the chunk's cache (``cache[row_of_context]``, repeats allowed) and runs only
       ``continuation[:-1]`` through the model, right-padded.

    Sliding-window attention models (e.g. Mistral) are scored only while every context plus
    continuation fits in the window (then the window never cuts); beyond it the padded cache
    would shift the window, so :class:`ReferenceScorer` must be used and an error says so.
    """

    def __init__(
        self,
        model: torch.nn.Module,
        pad_id: int,
        max_batch_rows: int = 64,
        max_batch_tokens: int = 16384,
        autocast_dtype: torch.dtype | None = None,
        max_contexts_per_chunk: int = 32,
        min_shared_prefix: int = 8,
        max_length_spread: float = 1.5,
        device: torch.device | str | None = None,
    ) -> None:
        super().__init__(model, pad_id, max_batch_rows, max_batch_tokens, autocast_dtype, device)
        if max_contexts_per_chunk < 1:
            raise ValueError(f"max_contexts_per_chunk must be >= 1, got {max_contexts_per_chunk}")
        if max_length_spread < 1:
            raise ValueError(f"max_length_spread must be >= 1, got {max_length_spread}")
        self.max_contexts_per_chunk = max_contexts_per_chunk
        self.min_shared_prefix = max(1, min_shared_prefix)
        self.max_length_spread = max_length_spread
        self.window = _sliding_window(model)

    def _score_unique(self, pairs: list[tuple[tuple[int, ...], tuple[int, ...]]]) -> list[float]:
        if self.window is not None:
            longest = max(len(c) for c, _ in pairs) + max(len(x) for _, x in pairs)
            if longest > self.window:
                raise NotImplementedError(
                    f"PrefixCacheScorer: sequences of up to {longest} tokens exceed this "
                    f"model's sliding attention window ({self.window}); use ReferenceScorer"
                )
        by_context: dict[tuple[int, ...], list[int]] = {}
        for i, (ctx, _) in enumerate(pairs):
            by_context.setdefault(ctx, []).append(i)
        out = [0.0] * len(pairs)
        for family in self._families(sorted(by_context)):
            self._score_family(family, by_context, pairs, out)
        return out

    def _families(self, contexts: list[tuple[int, ...]]) -> list[list[tuple[int, ...]]]:
        families = [[contexts[0]]]
        for ctx in contexts[1:]:
            if _common_prefix_length([families[-1][0], ctx]) >= self.min_shared_prefix:
                families[-1].append(ctx)
            else:
                families.append([ctx])
        return families

    def _score_family(
        self,
        family: list[tuple[int, ...]],
        by_context: dict[tuple[int, ...], list[int]],
        pairs: list[tuple[tuple[int, ...], tuple[int, ...]]],
        out: list[float],
    ) -> None:
        shared = 0
        if len(family) > 1:
            shared = min(_common_prefix_length(family), min(len(c) for c in family) - 1)
        prefix = None
        if shared > 0:
            prefix = DynamicCache()
            self._forward(
                shared,
                input_ids=torch.tensor([family[0][:shared]], dtype=torch.long).to(self.device),
                past_key_values=prefix,
                use_cache=True,
            )
        members = sorted(family, key=len)
        rests = [len(c) - shared for c in members]
        rows = min(self.max_batch_rows, self.max_contexts_per_chunk)
        for batch in self._batches(rests, extra=shared, rows=rows, spread=self.max_length_spread):
            chunk = [members[b] for b in batch]
            cache, mask, last = self._encode_chunk(chunk, shared, prefix)
            self._score_continuations(chunk, cache, mask, last, by_context, pairs, out)

    def _encode_chunk(
        self, chunk: list[tuple[int, ...]], shared: int, prefix: DynamicCache | None
    ) -> tuple[DynamicCache, torch.Tensor, torch.Tensor]:
        """Encode the remainders of ``chunk`` after the ``shared`` prefix (cached in
        ``prefix``); return (cache [n rows], its attention mask [n, W], the hidden state of
        each context's last position [n, H])."""
        n = len(chunk)
        cache = DynamicCache()
        if prefix is not None:  # expanded views: the family's prefix cache stays untouched
            cache = DynamicCache(
                ddp_cache_data=[
                    (keys.expand(n, -1, -1, -1), values.expand(n, -1, -1, -1))
                    for keys, values in map(_filled_kv, prefix.layers)
                ]
            )
        rests = [c[shared:] for c in chunk]
        r_max = max(len(r) for r in rests)
        ids = torch.full((n, r_max), self.pad_id, dtype=torch.long)
        rmask = torch.zeros((n, r_max), dtype=torch.long)
        for i, r in enumerate(rests):  # left padding: every context ends in the last column
            ids[i, r_max - len(r) :] = torch.tensor(r)
            rmask[i, r_max - len(r) :] = 1
        mask = torch.cat([torch.ones((n, shared), dtype=torch.long), rmask], dim=1)
        positions = (mask.cumsum(1) - 1)[:, shared:].clamp(min=0)
        hidden = self._forward(
            sum(len(r) for r in rests),
            input_ids=ids.to(self.device),
            attention_mask=mask.to(self.device),
            position_ids=positions.to(self.device),
            past_key_values=cache,
            use_cache=True,
        )
        return cache, mask, hidden[:, -1, :]

    def _score_continuations(
        self,
        chunk: list[tuple[int, ...]],
        cache: DynamicCache,
        ctx_mask: torch.Tensor,
        last: torch.Tensor,
        by_context: dict[tuple[int, ...], list[int]],
        pairs: list[tuple[tuple[int, ...], tuple[int, ...]]],
        out: list[float],
    ) -> None:
        width = ctx_mask.shape[1]
        ctx_len = ctx_mask.sum(1)  # real tokens per context = position of the next token
        # first tokens: every continuation's from its context's last hidden state
        firsts = [(c, p) for c, ctx in enumerate(chunk) for p in by_context[ctx]]
        first_lp = self._logprobs(
            last[torch.tensor([c for c, _ in firsts], device=last.device)],
            torch.tensor([pairs[p][1][0] for _, p in firsts]),
        )
        longer = []
        for (c, p), lp0 in zip(firsts, first_lp.tolist(), strict=True):
            out[p] = lp0
            if len(pairs[p][1]) > 1:
                longer.append((c, p))
        longer.sort(key=lambda cp: len(pairs[cp[1]][1]))
        lengths = [len(pairs[p][1]) - 1 for _, p in longer]
        for batch in self._batches(lengths, extra=width, spread=self.max_length_spread):
            sel = [longer[b] for b in batch]
            tails = [pairs[p][1] for _, p in sel]
            t_max = max(len(t) for t in tails) - 1
            ids = torch.full((len(sel), t_max), self.pad_id, dtype=torch.long)
            targets = torch.zeros((len(sel), t_max), dtype=torch.long)
            tmask = torch.zeros((len(sel), t_max), dtype=torch.long)
            for i, t in enumerate(tails):
                ids[i, : len(t) - 1] = torch.tensor(t[:-1])
                targets[i, : len(t) - 1] = torch.tensor(t[1:])
                tmask[i, : len(t) - 1] = 1
            idx = torch.tensor([c for c, _ in sel], dtype=torch.long)
            positions = ctx_len[idx].unsqueeze(1) + torch.arange(t_max).unsqueeze(0)
            dev_idx = idx.to(self.device)
            rows_cache = DynamicCache(
                ddp_cache_data=[
                    (keys[dev_idx], values[dev_idx])
                    for keys, values in map(_filled_kv, cache.layers)
                ]
            )
            hidden = self._forward(
                int(tmask.sum()),
                input_ids=ids.to(self.device),
                attention_mask=torch.cat([ctx_mask[idx], tmask], dim=1).to(self.device),
                position_ids=positions.to(self.device),
                past_key_values=rows_cache,
                use_cache=True,
            )
            lp = self._logprobs(hidden, targets, tmask)
            for i, (_, p) in enumerate(sel):
                out[p] += float(lp[i].sum())


def _filled_kv(layer: object) -> tuple[torch.Tensor, torch.Tensor]:
    """(keys, values) of one layer of a cache this scorer filled: its caches come from
    full-attention forward passes, so every layer is a ``DynamicLayer`` with both set."""
    filled = cast("DynamicLayer", layer)
    return cast(torch.Tensor, filled.keys), cast(torch.Tensor, filled.values)


def _sliding_window(model: torch.nn.Module) -> int | None:
    """The sliding attention window of ``model`` if any of its layers uses one, else None."""
    cfg = getattr(model, "config", None)
    if cfg is None:
        return None
    if hasattr(cfg, "get_text_config"):
        cfg = cfg.get_text_config()
    window = getattr(cfg, "sliding_window", None)
    if not window:
        return None
    types = getattr(cfg, "layer_types", None)
    if types is not None:
        return int(window) if any("sliding" in str(t) for t in types) else None
    return int(window) if getattr(cfg, "use_sliding_window", True) else None


def _common_prefix_length(seqs: Sequence[tuple[int, ...]]) -> int:
    first = seqs[0]
    n = min(len(s) for s in seqs)
    for i in range(n):
        t = first[i]
        if any(s[i] != t for s in seqs):
            return i
    return n
