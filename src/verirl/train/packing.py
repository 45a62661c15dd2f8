"""How the learner packs a batch's rows into micro-batches, and the padding that costs.

The learner runs a rollout batch in micro-batches of at most ``optim.micro_batch_tokens``
padded positions; :func:`pack_rows` chooses the split with the least padded work, and
:func:`padded_work` counts what one micro-batch actually runs (the learner reports the padding
share per step, ``train/padding_fraction``). The memory plan (:mod:`verirl.train.memory_plan`)
packs a planned step the same way to find its largest micro-batch.
"""

from __future__ import annotations

from verirl.types import Batch

MICRO_BATCH_OVERHEAD_TOKENS = 64  # fixed cost of one more forward/backward, in token units
MAX_ROWS_PER_MICRO_BATCH = 256  # bounds the packing DP at O(rows × 256)


def pack_rows(
    prompt_len: list[int],
    resp_len: list[int],
    prompt_key: list[int],
    budget: int,
    shared_prefix: bool,
) -> list[list[int]]:
    """Partition rows into micro-batches with the least padded work, by dynamic programming.

    Rows are sorted by response length (then prompt); a micro-batch is a contiguous run of
    that order. Its cost is what the forward/backward actually computes — with shared
    prefixes ``distinct prompts × longest prompt + rows × longest response``, otherwise
    ``rows × (longest prompt + longest response)`` — plus a fixed per-pass overhead, and it
    must fit ``budget`` (a single row always fits). Sharing favours big micro-batches, a few
    long (e.g. truncated) responses favour splitting them off; the DP weighs the two exactly.
    Returns lists of positions into the input lists.
    """
    n = len(resp_len)
    order = sorted(range(n), key=lambda i: (resp_len[i], prompt_key[i], i))
    best = [0.0] + [float("inf")] * n  # best[j]: least cost of packing order[:j]
    cut = [0] * (n + 1)
    for j in range(1, n + 1):
        keys: set[int] = set()
        max_p = 0
        for i in range(j - 1, -1, -1):  # segment order[i:j]; its longest response is order[j-1]
            row = order[i]
            keys.add(prompt_key[row])
            max_p = max(max_p, prompt_len[row])
            rows, max_r = j - i, resp_len[order[j - 1]]
            work = (len(keys) * max_p + rows * max_r) if shared_prefix else rows * (max_p + max_r)
            if (work > budget and rows > 1) or rows > MAX_ROWS_PER_MICRO_BATCH:
                break
            cost = best[i] + work + MICRO_BATCH_OVERHEAD_TOKENS
            if cost < best[j]:
                best[j], cut[j] = cost, i
    segments = []
    j = n
    while j > 0:
        segments.append([order[k] for k in range(cut[j], j)])
        j = cut[j]
    return segments[::-1]


def padded_work(batch: Batch, shared_prefix: bool) -> tuple[int, int]:
    """``(padded, real)`` token positions one pass over ``batch`` runs through the decoder:
    with a shared prefix each distinct prompt is encoded once (at the longest prompt's
    width) and every row's response on top; otherwise every row at the full width."""
    p = batch.prompt_width
    resp_real = int(batch.attention_mask[:, p:].sum())
    if not shared_prefix:
        return int(batch.attention_mask.numel()), int(batch.attention_mask[:, :p].sum()) + resp_real
    _, masks, _ = batch.distinct_prompts()
    padded = masks.shape[0] * p + batch.attention_mask[:, p:].numel()
    return int(padded), int(masks.sum()) + resp_real
