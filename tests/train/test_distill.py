"""On-policy distillation by hand: the distill term's per-token values, gradients and
statistics, the self-teacher's privileged batch, the two teachers' log-probs against plain
forwards, a student that moves toward its teacher on its own samples, and a tiny run that
logs the term."""

from __future__ import annotations

import math
from itertools import pairwise
from pathlib import Path

import pytest
import torch

from tests.conftest import TinyRun
from tests.train.test_learner import PROBLEM, VOCAB, _learner, _rollouts
from tests.train.test_learner_losses import _per_row_logprobs
from verirl.assembly import build
from verirl.config import load_config
from verirl.device import resolve_placement
from verirl.models import load_policy, tiny_model
from verirl.train.distill import EmaWeights, privileged_batch, reference_response
from verirl.train.learner import Learner, LearnerSettings, collate
from verirl.train.metrics import read_metrics
from verirl.train.terms import LossTerms, TermInputs, check_sources
from verirl.trainer import Trainer, new_run_dir
from verirl.types import Batch, Problem, Rollout, Verdict

NAN = float("nan")
ZERO = Verdict(0.0, False)


def _inputs(logp: torch.Tensor, old: torch.Tensor, teacher: torch.Tensor) -> TermInputs:
    mask = torch.ones_like(logp)
    return TermInputs(logp, old, torch.zeros_like(logp), mask, sources={"teacher": teacher})


def test_distill_term_by_hand() -> None:
    """Three tokens: π_θ = (0.5, 0.5, 0.5), π_old = (0.5, 0.25, 0.5), π_T = (0.25, 0.5, ·) —
    the third without a teacher value (NaN)."""
    logp = torch.log(torch.tensor([[0.5, 0.5, 0.5]])).requires_grad_(True)
    old = torch.log(torch.tensor([[0.5, 0.25, 0.5]]))
    teacher = torch.tensor([[math.log(0.25), math.log(0.5), NAN]])
    ln2 = math.log(2)

    # advantage form: ρ · (log π_old − log π_T): ρ = (1, 2); gap = (log 2, −log 2); third 0
    terms = LossTerms({"distill": {"coef": 0.5}})
    assert terms.needs == {"teacher"} and not terms.advantage_gated
    total, stats = terms(_inputs(logp, old, teacher))
    assert total.tolist()[0] == pytest.approx([0.5 * ln2, 0.5 * 2 * -ln2, 0.0])
    total.sum().backward()  # d/dlogπ_θ of c·ρ·gap = c·ρ·gap
    assert logp.grad is not None and logp.grad.tolist()[0] == pytest.approx([0.5 * ln2, -ln2, 0])
    # reverse KL estimate log π_θ − log π_T over the two scored tokens: (log 2 + 0) / 2
    assert float(stats["distill_reverse_kl"]) == pytest.approx(ln2 / 2)
    assert float(stats["distill_coverage"]) == pytest.approx(2 / 3)

    # k2 form: ½ (log π_θ − log π_T)² = (½ log²2, 0, 0); gradient log π_θ − log π_T
    logp.grad = None
    total, _ = LossTerms({"distill": {"coef": 1.0, "form": "k2"}})(_inputs(logp, old, teacher))
    assert total.tolist()[0] == pytest.approx([0.5 * ln2**2, 0.0, 0.0])
    total.sum().backward()
    assert logp.grad.tolist()[0] == pytest.approx([ln2, 0.0, 0.0])


def test_both_forms_have_the_same_gradient_on_policy() -> None:
    g = torch.Generator().manual_seed(0)
    old = -torch.rand(2, 5, generator=g)
    teacher = -torch.rand(2, 5, generator=g)
    grads = []
    for form in ("advantage", "k2"):
        logp = old.clone().requires_grad_(True)
        total, _ = LossTerms({"distill": {"coef": 1.0, "form": form}})(_inputs(logp, old, teacher))
        total.sum().backward()
        grads.append(logp.grad)
    assert torch.allclose(grads[0], grads[1]) and torch.allclose(grads[0], old - teacher)  # type: ignore[arg-type]


def test_privileged_batch_puts_the_best_sibling_before_the_prompt() -> None:
    """Groups of three rows with rewards 0, 1, 2: with min_reward 1, rows 0 and 1 of each
    group see row 2's transcript, row 2 sees row 1's; with min_reward 2 row 2 has no teacher."""
    rs = _rollouts()
    batch = collate(rs, torch.zeros(9, 7), pad_id=0)
    privileged, rows = privileged_batch(batch, min_reward=1.0)
    assert rows.tolist() == list(range(9))
    p = privileged.prompt_width
    for i in range(9):
        j = i - i % 3 + (1 if i % 3 == 2 else 2)
        demo = [*rs[j].prompt_ids, *rs[j].response_ids]
        want = [*demo, *rs[i].prompt_ids, *rs[i].response_ids]
        assert privileged.input_ids[i][privileged.attention_mask[i] == 1].tolist() == want
        assert int(privileged.attention_mask[i, :p].sum()) == len(demo) + len(rs[i].prompt_ids)
    assert torch.equal(privileged.response_mask, batch.response_mask)  # all rows: full width
    _, rows = privileged_batch(batch, min_reward=2.0)
    assert rows.tolist() == [0, 1, 3, 4, 6, 7]


def test_the_self_teacher_scores_under_the_privileged_prompt() -> None:
    model = tiny_model(VOCAB, seed=5)
    learner = _learner(
        model,
        "loss.terms.distill.coef=1.0",
        "loss.sources.teacher.name=privileged_self",
        "loss.sources.teacher.params.min_reward=2.0",
    )
    batch = collate(_rollouts(), torch.zeros(9, 7), pad_id=0)
    got = learner.sources["teacher"](batch)
    privileged, rows = privileged_batch(batch, 2.0)
    with torch.no_grad():
        want = _per_row_logprobs(model, privileged)
    w = want.shape[1]  # rows 0, 1 of each group: responses of 1 and 4 tokens
    assert torch.allclose(got[rows, :w], want, atol=1e-5) and not got[rows, w:].any()
    assert torch.isnan(got[[2, 5, 8]]).all()  # the best of each group has no better sibling
    stats = learner.update(batch)
    # tokens with a teacher: rows of 1 and 4 of each group's 1 + 4 + 7
    assert stats["train/distill_coverage"] == pytest.approx(5 / 12)
    assert stats["train/grad_norm"] > 0  # zero task advantages: the teacher alone moved it


def test_the_reference_context_puts_the_answered_prompt_before_the_prompt() -> None:
    """context 'reference' (OPSD): row i sees its own prompt answered by its reference
    tokens, then its prompt and response; a row without a reference is left out, and a batch
    that carries none is refused by name."""
    rs = _rollouts()
    refs = [(7, 8, 9) if i != 4 else () for i in range(9)]
    batch = collate(rs, torch.zeros(9, 7), pad_id=0, references=refs)
    privileged, rows = privileged_batch(batch, min_reward=1.0, context="reference")
    assert rows.tolist() == [0, 1, 2, 3, 5, 6, 7, 8]
    for k, i in enumerate(rows.tolist()):
        want = [*rs[i].prompt_ids, 7, 8, 9, *rs[i].prompt_ids, *rs[i].response_ids]
        assert privileged.input_ids[k][privileged.attention_mask[k] == 1].tolist() == want
    assert torch.equal(privileged.response_mask, batch.response_mask[rows])
    assert batch.select([4, 0]).references == ((), (7, 8, 9))  # rows follow the selection
    with pytest.raises(ValueError, match=r"context 'reference' needs the batch's reference"):
        privileged_batch(collate(rs, torch.zeros(9, 7), pad_id=0), 1.0, context="reference")
    with pytest.raises(ValueError, match="2 reference answers for 9 rollouts"):
        collate(rs, torch.zeros(9, 7), pad_id=0, references=refs[:2])


def test_a_reference_answer_is_written_as_a_boxed_response(tiny_model_dir: Path) -> None:
    _, tokenizer = load_policy(str(tiny_model_dir))
    got = reference_response(tokenizer, Problem("addition", 1, 0, "2+5?", "7"))
    want = tokenizer.encode("\\boxed{7}", add_special_tokens=False)
    assert got == (*want, tokenizer.eos_token_id) and len(want) > 1
    assert reference_response(tokenizer, Problem("coq_proofs", 1, 0, "prove", "")) == ()


def test_ema_weights_by_hand() -> None:
    """β = 0.5 over θ = 1, 3, 5: the average is 1 (the first update copies), 2, 3.5; it is
    lent to the parameter for a pass and the policy's value comes back after it."""
    w = torch.nn.Parameter(torch.tensor([1.0]))
    ema = EmaWeights([w], decay=0.5)
    seen = []
    for value in (1.0, 3.0, 5.0):
        w.data.fill_(value)
        ema.update()
        seen.append(ema.average[0].item())
    assert seen == [1.0, 2.0, 3.5]
    with ema.swapped_in():
        assert w.item() == 3.5
    assert w.item() == 5.0
    again = EmaWeights([w], decay=0.5)
    again.load_state_dict(ema.state_dict())
    assert again.average[0].item() == 3.5


def test_an_ema_self_teacher_scores_with_the_averaged_weights() -> None:
    """ema 0.5 with the reference context: the first batch scores with the policy's own
    weights, the second with the average of before and after the first update; the averages
    travel in the learner's state."""
    model = tiny_model(VOCAB, seed=7)
    overrides = (
        "loss.terms.distill.coef=1.0",
        "loss.sources.teacher.name=privileged_self",
        "loss.sources.teacher.params={context: reference, ema: 0.5}",
        "optim.lr=0.05",
    )
    learner = _learner(model, *overrides)
    refs = [(11, 12)] * 9
    batch = collate(_rollouts(), torch.randn(9, 7), pad_id=0, references=refs)
    privileged, rows = privileged_batch(batch, 1.0, context="reference")
    assert rows.tolist() == list(range(9))
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with torch.no_grad():
        want0 = _per_row_logprobs(model, privileged)
    assert torch.allclose(learner.sources["teacher"](batch), want0, atol=1e-5)
    learner.update(batch)
    after = {n: p.detach().clone() for n, p in model.named_parameters()}
    assert any(not torch.equal(before[n], after[n]) for n in before)
    average = tiny_model(VOCAB, seed=7)
    missing = average.load_state_dict(
        {n: 0.5 * before[n] + 0.5 * after[n] for n in before}, strict=False
    ).missing_keys
    assert missing == ["lm_head.weight"]  # tied to the embedding, loaded through it
    with torch.no_grad():
        want1 = _per_row_logprobs(average, privileged)
        own = _per_row_logprobs(model, privileged)
    got = learner.sources["teacher"](batch)
    assert torch.allclose(got, want1, atol=1e-5) and not torch.allclose(got, own, atol=1e-3)
    assert all(torch.equal(p, after[n]) for n, p in model.named_parameters())  # put back
    resumed = _learner(tiny_model(VOCAB, seed=7), *overrides)
    resumed.load_state_dict(learner.state_dict())
    saved = learner.sources["teacher"].ema.average  # type: ignore[attr-defined]
    loaded = resumed.sources["teacher"].ema.average  # type: ignore[attr-defined]
    assert all(torch.equal(a, b) for a, b in zip(saved, loaded, strict=True))


def test_a_checkpoint_teacher_scores_like_a_plain_forward(tiny_model_dir: Path) -> None:
    teacher, _ = load_policy(str(tiny_model_dir))
    vocab = teacher.config.vocab_size
    overrides = (
        "loss.terms.distill.coef=1.0",
        "loss.sources.teacher.name=checkpoint",
        f"loss.sources.teacher.params.path={tiny_model_dir}",
    )
    learner = _learner(tiny_model(vocab, seed=6), *overrides)
    batch = collate(_rollouts(), torch.zeros(9, 7), pad_id=0)
    with torch.no_grad():
        want = _per_row_logprobs(teacher, batch)
    assert torch.allclose(learner.sources["teacher"](batch), want, atol=1e-5)
    with pytest.raises(ValueError, match=r"vocabulary of .* tokens, the policy 300"):
        _learner(tiny_model(VOCAB, seed=6), *overrides)
    with pytest.raises(ValueError, match=r"needs 'teacher'.*loss\.sources\.teacher"):
        _learner(tiny_model(VOCAB, seed=6), "loss.terms.distill.coef=1.0")
    with pytest.raises(ValueError, match=r"loss\.sources\.teacher\.name: unknown token source"):
        check_sources(load_config(None, ["loss.sources.teacher.name=oracle"]).loss.sources)
    with pytest.raises(ValueError, match=r"loss\.sources\.teacher\.params"):
        check_sources(load_config(None, ["loss.sources.teacher.name=checkpoint"]).loss.sources)


def _first_token_logprobs(model: torch.nn.Module, prompts: torch.Tensor) -> torch.Tensor:
    """log π(· | prompt) of the token after each prompt: [P, V]."""
    with torch.no_grad():
        return torch.log_softmax(model(prompts).logits[:, -1].float(), -1)


def test_distillation_moves_the_student_toward_the_teacher() -> None:
    """Zero task advantages and the distill term alone: five rounds of sampling one-token
    responses from the student (128 per prompt, its own samples) and updating on them, the
    teacher scored through the learner's passes (as a checkpoint teacher is). The exact
    KL(π_θ ‖ π_T) over the vocabulary at the trained prefixes falls."""
    student, teacher = tiny_model(VOCAB, seed=7), tiny_model(VOCAB, seed=8, initializer_range=0.1)
    cfg = load_config(None, ["model.dtype=fp32", "loss.terms.distill.coef=1.0", "optim.lr=3e-3"])
    settings = LearnerSettings.from_config(
        cfg, resolve_placement("cpu", "fp32"), activation_checkpointing=False
    )
    learner: Learner

    def scored(batch: Batch) -> torch.Tensor:
        return learner.score(batch, teacher)

    learner = Learner(student, settings, 5, token_sources={"teacher": scored})
    g = torch.Generator().manual_seed(0)
    prompts = torch.randint(3, VOCAB, (3, 5), generator=g)
    target = _first_token_logprobs(teacher, prompts)

    def kl() -> float:
        s = _first_token_logprobs(student, prompts)
        return float((s.exp() * (s - target)).sum(-1).mean())

    seen = [kl()]
    for _ in range(5):
        logp = _first_token_logprobs(student, prompts)
        rollouts = [
            Rollout(
                PROBLEM,
                i,
                tuple(prompts[i].tolist()),
                (y,),
                (float(logp[i, y]),),
                "",
                "length",
                verdict=ZERO,
            )
            for i in range(3)
            for y in torch.multinomial(logp[i].exp(), 128, True, generator=g).tolist()
        ]
        stats = learner.update(collate(rollouts, torch.zeros(len(rollouts), 1), pad_id=0))
        assert stats["train/distill_coverage"] == 1.0
        seen.append(kl())
    assert all(b < a for a, b in pairwise(seen)), seen  # every round
    assert seen[-1] < 0.8 * seen[0], seen


def test_a_tiny_run_logs_the_distillation_term(
    tiny_run: TinyRun, tiny_model_dir: Path, tmp_path: Path
) -> None:
    """Two steps of the tiny GRPO run with a checkpoint teacher (the student's weights with
    its logits ×10: the same ranking, sharper): the term is logged over every token and
    trains the policy alongside GRPO."""
    teacher_dir = tmp_path / "teacher"
    teacher, tokenizer = load_policy(str(tiny_model_dir))
    with torch.no_grad():
        teacher.get_parameter("model.norm.weight").mul_(10.0)
    teacher.save_pretrained(teacher_dir)
    tokenizer.save_pretrained(teacher_dir)
    run_dir = tmp_path / "run"
    overrides = tiny_run(
        run_dir,
        2,
        "loss.terms.distill.coef=1.0",
        "loss.sources.teacher.name=checkpoint",
        f"loss.sources.teacher.params.path={teacher_dir}",
    )
    cfg = load_config(None, overrides)
    with Trainer(build(cfg), new_run_dir(cfg)) as trainer:
        trainer.fit()
    rows = read_metrics(run_dir)
    assert [r["train/distill_coverage"] for r in rows] == [1.0, 1.0]
    # the student is the flatter of the two: its samples are ones the sharper teacher
    # finds less likely, log π_θ − log π_T > 0 on average
    assert all(r["train/distill_reverse_kl"] > 0 for r in rows)
    assert all(r["train/grad_norm"] > 0 for r in rows)


def test_a_tiny_run_self_distils_from_the_reference_answer_with_an_ema_teacher(
    tiny_run: TinyRun, tmp_path: Path
) -> None:
    """The trainer's collate hands every row its problem's reference answer (every
    arithmetic problem has one: coverage 1 on every step), and the EMA teacher's averages
    are saved in the checkpoint beside the optimizer."""
    run_dir = tmp_path / "run"
    overrides = tiny_run(
        run_dir,
        2,
        "loss.terms.distill.coef=1.0",
        "loss.sources.teacher.name=privileged_self",
        "loss.sources.teacher.params={context: reference, ema: 0.5}",
    )
    cfg = load_config(None, overrides)
    with Trainer(build(cfg), new_run_dir(cfg)) as trainer:
        trainer.fit()
        trainable = [p for p in trainer.parts.model.parameters() if p.requires_grad]
    rows = read_metrics(run_dir)
    assert [r["train/distill_coverage"] for r in rows] == [1.0, 1.0]
    assert all(r["train/grad_norm"] > 0 for r in rows)
    state = torch.load(run_dir / "checkpoint-000002" / "state.pt", weights_only=False)
    average = state["learner"]["sources"]["teacher"]["average"]
    assert [a.shape for a in average] == [p.shape for p in trainable]
