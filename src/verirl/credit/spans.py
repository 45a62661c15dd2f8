"""Map character spans of a response (proof tactics, steps) to response-token indices.

Process credit (Kim & Yun 2026, *Process-Verified Reinforcement Learning for Theorem Proving
via Lean*, arXiv:2606.20068) adds the tactic-level advantage on the
*first token of each tactic*. Checkers report tactics as character spans of the response
text; this module finds, for each span, the index of the response token that contains the
span's first character.

The sampled token ids are the ground truth: a model may sample a non-canonical tokenization
(``"s" + "imp"`` where the tokenizer would produce ``"simp"``), so re-tokenizing the text can
give other tokens and other indices. The default method therefore decodes the sampled ids
incrementally and records which token produced each character. Byte-level BPE splits a
multi-byte character (``⊢`` is 3 bytes) over several tokens; such a character belongs to the
token holding its first byte, which is what a fast tokenizer's offset mapping says too.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from typing import Any, Literal

Decode = Callable[[Sequence[int]], str]
_REPLACEMENT = "\ufffd"


def _decoder(tokenizer: Any, skip_special_tokens: bool) -> Decode:
    """``ids → text`` for a transformers tokenizer or a raw ``tokenizers.Tokenizer``."""
    if hasattr(tokenizer, "convert_ids_to_tokens"):  # transformers
        return lambda ids: tokenizer.decode(
            list(ids),
            skip_special_tokens=skip_special_tokens,
            clean_up_tokenization_spaces=False,
        )
    return lambda ids: tokenizer.decode(list(ids), skip_special_tokens=skip_special_tokens)


def _assign(owners: list[int], group: list[tuple[int, int, bool]], n_chars: int) -> None:
    """Append the owning token of ``n_chars`` new characters. ``group`` holds, for each token
    since the last emitted character, (token index, complete new characters so far, whether
    a partial character follows). Character m belongs to the first token at which it is
    complete or started: ``c_j > m`` or ``c_j == m`` with a partial character pending."""
    for m in range(n_chars):
        owner = group[-1][0]
        for j, complete, partial in group:
            if complete > m or (complete == m and partial):
                owner = j
                break
        owners.append(owner)


def _owners_incremental(ids: Sequence[int], decode: Decode) -> tuple[str, list[int]]:
    """Decode ``ids`` through a small sliding window (linear time); returns the text and
    the owning token of each character."""
    owners: list[int] = []
    pieces: list[str] = []
    prefix_offset = read_offset = 0
    prefix_text = ""
    group: list[tuple[int, int, bool]] = []
    for k in range(len(ids)):
        new_text = decode(ids[prefix_offset : k + 1])
        partial = new_text.endswith(_REPLACEMENT)
        complete = len(new_text.rstrip(_REPLACEMENT)) - len(prefix_text)
        group.append((k, max(0, complete), partial))
        if partial:
            continue
        delta = new_text[len(prefix_text) :]
        _assign(owners, group, len(delta))
        pieces.append(delta)
        group = []
        if delta:
            prefix_offset, read_offset = read_offset, k + 1
            prefix_text = decode(ids[prefix_offset:read_offset])
    text = "".join(pieces)
    if group:  # the response ends inside a character
        tail = decode(ids)[len(text) :]
        _assign(owners, group, len(tail))
        text += tail
    return text, owners


def _owners_prefix(ids: Sequence[int], decode: Decode) -> tuple[str, list[int]]:
    """The same from full prefix decodes (quadratic time; exact for decoders whose output
    for a window depends on more than one previous token)."""
    owners: list[int] = []
    group: list[tuple[int, int, bool]] = []
    done = 0
    for k in range(len(ids)):
        text = decode(ids[: k + 1])
        partial = text.endswith(_REPLACEMENT)
        complete = len(text.rstrip(_REPLACEMENT))
        group.append((k, max(0, complete - done), partial))
        if not partial:
            _assign(owners, group, max(0, len(text) - done))
            done = len(owners)
            group = []
    full = decode(ids)
    if group:
        _assign(owners, group, len(full) - done)
    return full, owners[: len(full)]


def token_owners(
    response_ids: Sequence[int], tokenizer: Any, *, skip_special_tokens: bool = True
) -> tuple[str, list[int]]:
    """Decode the sampled ids; return the decoded text and, for each of its characters,
    the index of the response token that produced (the first byte of) it."""
    decode = _decoder(tokenizer, skip_special_tokens)
    ids = list(response_ids)
    text, owners = _owners_incremental(ids, decode)
    if text != decode(ids) or len(owners) != len(text):
        text, owners = _owners_prefix(ids, decode)
    return text, owners


def _char_map(source: str, target: str) -> Callable[[int], int]:
    """Offset in ``source`` → offset of the same character in ``target`` (identity when
    equal; otherwise through the longest matching blocks, and a character without a match
    maps to the next matched one)."""
    if source == target:
        return lambda c: c
    blocks = difflib.SequenceMatcher(None, source, target, autojunk=False).get_matching_blocks()

    def mapped(c: int) -> int:
        for a, b, size in blocks:
            if a <= c < a + size:
                return b + (c - a)
            if a > c:
                return b
        return len(target)

    return mapped


def _span_start(span: Any) -> int:
    if isinstance(span, int):
        return span
    if isinstance(span, tuple):
        return int(span[0])
    return int(span.start)


def step_token_starts(
    response_text: str,
    response_ids: Sequence[int],
    spans: Sequence[Any],
    tokenizer: Any,
    *,
    method: Literal["decode", "offsets"] = "decode",
    skip_special_tokens: bool = True,
) -> list[int]:
    """Index of the response token containing the first character of each span.

    Args:
        response_text: the response text the spans index (``Rollout.text``).
        response_ids: the sampled response token ids (``Rollout.response_ids``).
        spans: objects with ``.start`` (``verirl.types.Span``, ``TacticSpan``), ``(start,
            end)`` tuples or plain start offsets, in characters of ``response_text``.
        tokenizer: a transformers tokenizer or a ``tokenizers.Tokenizer``.
        method: ``"decode"`` (default) decodes the sampled ids incrementally, so it is right
            for any sampled tokenization. ``"offsets"`` re-tokenizes ``response_text`` with
            ``return_offsets_mapping=True`` (fast tokenizers) and uses the offsets when the
            re-tokenization equals the sampled ids, falling back to decoding otherwise.
        skip_special_tokens: special tokens (EOS) produce no characters, as when the
            response text was decoded with ``skip_special_tokens=True``.

    When the decoded ids differ from ``response_text`` (e.g. the text was post-processed),
    offsets are carried over through the longest common blocks of the two strings.

    Returns one token index per span, in order. Raises ``ValueError`` for a span that starts
    outside the response.
    """
    starts = [_span_start(s) for s in spans]
    for s in starts:
        if not 0 <= s < len(response_text):
            raise ValueError(
                f"span start {s} is outside the response text (length {len(response_text)})"
            )
    if method == "offsets":
        found = _offsets_lookup(response_text, response_ids, starts, tokenizer)
        if found is not None:
            return found
    elif method != "decode":
        raise ValueError(f"method must be 'decode' or 'offsets', got {method!r}")
    decoded, owners = token_owners(response_ids, tokenizer, skip_special_tokens=skip_special_tokens)
    to_decoded = _char_map(response_text, decoded)
    out = []
    for s in starts:
        d = to_decoded(s)
        if d >= len(owners):
            raise ValueError(
                f"span start {s} maps past the end of the decoded response ids "
                f"({len(owners)} characters)"
            )
        out.append(owners[d])
    return out


def _offsets_lookup(
    text: str, ids: Sequence[int], starts: Sequence[int], tokenizer: Any
) -> list[int] | None:
    """The offset-mapping path; ``None`` when the text does not re-tokenize to ``ids``."""
    if not hasattr(tokenizer, "convert_ids_to_tokens"):
        return None
    special = set(getattr(tokenizer, "all_special_ids", []))
    if any(i in special for i in ids):
        return None  # offsets know nothing of special tokens: decode instead
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    if list(enc["input_ids"]) != list(ids):
        return None
    offsets = enc["offset_mapping"]
    out = []
    for s in starts:
        index = next((k for k, (a, b) in enumerate(offsets) if a <= s < b), None)
        if index is None:
            return None
        out.append(index)
    return out
