"""The learner: rollouts + advantages → padded batch → clipped-surrogate updates.

One call of :meth:`Learner.update` is one rollout batch: ``epochs`` passes, each split in
``minibatches`` optimizer steps, each accumulated over micro-batches of at most
``micro_batch_tokens`` padded tokens. Aggregation uses the whole minibatch's totals, so the
accumulated gradient equals the gradient of the unsplit minibatch — and, for the same reason,
a data-parallel group (:mod:`verirl.train.distributed`) that splits each minibatch's rows over
its ranks and sums their gradients makes exactly the same update.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import torch

from verirl.config import LossConfig, OptimConfig, TrainConfig
from verirl.device import Placement
from verirl.lm import CausalLM, TokenLogProbs, head_logprobs
from verirl.lm.checkpointing import enable_activation_checkpointing
from verirl.lm.passes import prefix_sharing_pays, response_hidden
from verirl.train.distributed import ONE_PROCESS, DataParallel
from verirl.train.loss import (
    AGGREGATIONS,
    POLICY_LOSSES,
    AggregationScale,
    logprob_mismatch,
)
from verirl.train.lr_schedules import lr_factor
from verirl.train.off_policy import Corrections
from verirl.train.optimizers import AdamSettings, build_optimizer
from verirl.train.packing import (
    MAX_ROWS_PER_MICRO_BATCH,
    MICRO_BATCH_OVERHEAD_TOKENS,
    pack_rows,
    padded_work,
)
from verirl.train.terms import TOKEN_SOURCES, LossTerms, TermInputs
from verirl.train.token_masks import ConfiguredMask, MaskInputs
from verirl.types import Batch, Rollout

__all__ = [
    "MAX_ROWS_PER_MICRO_BATCH",
    "MICRO_BATCH_OVERHEAD_TOKENS",
    "Learner",
    "LearnerSettings",
    "PolicyLearner",
    "collate",
    "pack_rows",
    "padded_work",
]


def collate(
    rollouts: Sequence[Rollout],
    advantages: torch.Tensor,
    pad_id: int,
    references: Sequence[tuple[int, ...]] = (),
) -> Batch:
    """Build the learner's :class:`Batch`: prompts left-padded, responses right-padded.

    ``advantages`` is [N, T] with T ≥ the longest response (as credit estimators return);
    ``references``: each rollout's reference answer as response tokens (``Batch.references``),
    or empty.
    """
    if references and len(references) != len(rollouts):
        raise ValueError(f"{len(references)} reference answers for {len(rollouts)} rollouts")
    n = len(rollouts)
    if n == 0:
        raise ValueError("cannot collate an empty list of rollouts")
    if advantages.shape[0] != n:
        raise ValueError(f"{advantages.shape[0]} advantage rows for {n} rollouts")
    p = max(len(r.prompt_ids) for r in rollouts)
    r_len = max(len(r.response_ids) for r in rollouts)
    ids = torch.full((n, p + r_len), pad_id, dtype=torch.long)
    attn = torch.zeros((n, p + r_len), dtype=torch.long)
    resp_mask = torch.zeros((n, r_len))
    old = torch.zeros((n, r_len))
    adv = torch.zeros((n, r_len))
    for i, ro in enumerate(rollouts):
        lp, lr = len(ro.prompt_ids), len(ro.response_ids)
        ids[i, p - lp : p] = torch.tensor(ro.prompt_ids, dtype=torch.long)
        ids[i, p : p + lr] = torch.tensor(ro.response_ids, dtype=torch.long)
        attn[i, p - lp : p + lr] = 1
        resp_mask[i, :lr] = torch.tensor(ro.mask, dtype=torch.float32)
        old[i, :lr] = torch.tensor(ro.logprobs, dtype=torch.float32)
        adv[i, :lr] = advantages[i, :lr]
    return Batch(
        input_ids=ids,
        attention_mask=attn,
        response_mask=resp_mask,
        old_logprobs=old * resp_mask,
        advantages=adv * resp_mask,
        rewards=torch.tensor([ro.reward for ro in rollouts], dtype=torch.float32),
        truncated=torch.tensor([ro.finish_reason == "length" for ro in rollouts]),
        references=tuple(references),
    )


@dataclass(frozen=True)
class LearnerSettings:
    """What the learner needs to know, and nothing else: an adapter to another trainer (or
    a test) builds this without a run config.

    - ``loss``, ``optim``: the ``loss:`` and ``optim:`` sections of the config.
    - ``temperature``: the sampling temperature (log-probs are of the tempered policy).
    - ``norm_length``: Dr. GRPO's constant C of ``seq-mean-token-sum-norm`` (max new tokens).
    - ``placement``: device and autocast dtype of the forward/backward passes.
    - ``seed``: seed of the minibatch shuffling.
    - ``engine_logprobs_exact``: whether the rollout engine's log-probs are the learner's own
      (the ``hf`` engine shares the module); ``optim.old_logprobs = "auto"`` recomputes
      π_old when they are not (vLLM).
    - ``activation_checkpointing``: checkpoint the decoder layers (``optim.
      activation_checkpointing``, 'auto' resolved by the run's memory plan:
      :func:`verirl.assembly.build`).
    """

    loss: LossConfig = field(default_factory=LossConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    temperature: float = 1.0
    norm_length: int = 64
    placement: Placement = field(
        default_factory=lambda: Placement(torch.device("cpu"), None, "fp32 (default)")
    )
    seed: int = 0
    engine_logprobs_exact: bool = True
    activation_checkpointing: bool = False

    @classmethod
    def from_config(
        cls,
        cfg: TrainConfig,
        placement: Placement,
        engine_logprobs_exact: bool | None = None,
        activation_checkpointing: bool | None = None,
    ) -> LearnerSettings:
        """``engine_logprobs_exact`` None: what ``rollout.engine``'s registration says;
        ``activation_checkpointing`` None: ``optim.activation_checkpointing``, which must then
        not be 'auto' (the memory plan decides that, once, where the run is built)."""
        if engine_logprobs_exact is None:
            from verirl.rollout.base import ENGINES

            engine = cfg.rollout.engine
            engine_logprobs_exact = ENGINES.get(engine.name).exact_logprobs(engine.params)
        if activation_checkpointing is None:
            if cfg.optim.activation_checkpointing == "auto":  # verirl.assembly.build decides
                raise ValueError("activation checkpointing 'auto' needs the memory plan's answer")
            activation_checkpointing = bool(cfg.optim.activation_checkpointing)
        return cls(
            loss=cfg.loss,
            optim=cfg.optim,
            temperature=cfg.rollout.temperature,
            norm_length=cfg.rollout.max_new_tokens,
            placement=placement,
            seed=cfg.run.seed,
            engine_logprobs_exact=engine_logprobs_exact,
            activation_checkpointing=activation_checkpointing,
        )

    @property
    def recompute_old_logprobs(self) -> bool:
        """Whether π_old is a no-grad learner pass rather than the engine's sampling
        log-probs (``optim.old_logprobs``, with 'auto' resolved)."""
        mode = self.optim.old_logprobs
        if mode == "auto":
            return not self.engine_logprobs_exact or self.corrections().needs_proximal
        return mode == "recompute"

    def corrections(self) -> Corrections:
        """The off-policy corrections of ``loss.off_policy`` (and ``loss.tis_cap``)."""
        return Corrections.build([(p.name, p.params) for p in self.loss.corrections()])


class PolicyLearner(Protocol):
    """What the loop asks of a learner: :class:`Learner`, or a group of them on Ray
    (:class:`verirl.integrations.ray.learner.RayLearnerGroup`)."""

    def update(self, batch: Batch) -> dict[str, float]: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


TokenSource = Callable[[Batch], torch.Tensor]
"""Per-token values of a whole rollout batch, computed once before its first optimizer step
without gradient: ``fn(batch) -> [N, R]`` (0 where ``batch.response_mask`` is 0), read by the
loss terms that name it in ``needs`` (a teacher's log-probs, say)."""


class Learner:
    """Owns the optimizer, the LR schedule, the loss terms and (when a term reads it) the frozen
    reference.

    ``data_parallel``: this process's place in a learner group; it computes every
    ``world_size``-th row of each minibatch and the gradients are summed over the group (alone:
    the group of one, whose collectives are the identity). ``token_sources``: per-token inputs
    of loss terms beyond the built-in ones (``"reference"``: the frozen initial policy's
    log-probs, which the learner computes itself) and those ``loss.sources`` configures (a
    distillation teacher), which it builds when an active term reads them.
    """

    def __init__(
        self,
        model: torch.nn.Module,
        settings: LearnerSettings,
        total_steps: int,
        data_parallel: DataParallel = ONE_PROCESS,
        token_sources: Mapping[str, TokenSource] | None = None,
    ) -> None:
        self.model = model
        self.settings = settings
        self.dp = data_parallel
        self.trainable = [p for p in model.parameters() if p.requires_grad]
        if not self.trainable:
            raise ValueError("the model has no trainable parameters")
        o = settings.optim
        self.optimizer = build_optimizer(
            o.optimizer.name,
            o.optimizer.params,
            self.trainable,
            AdamSettings(o.lr, o.betas, o.weight_decay),
            settings.placement.device,
        )
        updates = max(1, total_steps * o.epochs * o.minibatches)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lr_factor(o.schedule, o.warmup_steps, updates)
        )
        loss = settings.loss
        spec = POLICY_LOSSES.get(loss.policy.name)
        self.policy_loss = spec.part
        self.loss_params = spec.parse(loss.policy.params)
        self.aggregate = AGGREGATIONS.get(loss.aggregation).part
        self.corrections = settings.corrections()
        self.temperature = settings.temperature if settings.temperature > 0 else 1.0
        self.device = settings.placement.device
        chunk = settings.optim.logprob_chunk_tokens
        self.chunk_tokens = None if chunk == "auto" else int(chunk)
        self.generator = torch.Generator().manual_seed(settings.seed + 1)
        if settings.activation_checkpointing:
            enable_activation_checkpointing(model)
        self.terms = LossTerms(loss.terms)
        self.token_mask = ConfiguredMask.build(loss.token_mask.name, loss.token_mask.params)
        # a loss term trains on the entropy; the token mask reads it before the update
        self.entropy_grad = "entropy" in self.terms.needs
        self.pre_entropy = "entropy" in self.token_mask.needs
        self._reference: torch.nn.Module | None = None
        sources = dict(token_sources or {})
        if "reference" in self.terms.needs:
            sources["reference"] = lambda batch: self._no_grad_pass(batch, reference=True)[0]
            if not _is_peft(model):
                self._reference = copy.deepcopy(model).eval().requires_grad_(False)
        for name, plugin in loss.sources.items():
            if name in self.terms.needs and name not in sources:
                sources[name] = TOKEN_SOURCES.get(plugin.name).build(plugin.params, self)
        for term in self.terms.terms:
            for need in term.spec.needs - {"entropy"} - set(sources):
                raise ValueError(
                    f"loss.terms.{term.spec.name} needs {need!r}, which this learner is not "
                    f"given: configure loss.sources.{need} (kinds: "
                    f"{', '.join(TOKEN_SOURCES.names())})"
                )
        self.sources = {k: v for k, v in sources.items() if k in self.terms.needs}
        self.fuse_old_logprobs = True  # see fuses_old_logprobs (False: always a separate pass)
        # rows without signal are skipped only where they provably add nothing: a policy loss
        # and loss terms the advantage gates, and every rank free to skip (FSDP's collectives
        # need every rank in every pass)
        self.skip_zero_rows = (
            o.skip_zero_advantage_rows
            and spec.advantage_gated
            and self.terms.advantage_gated
            and not data_parallel.sharded_parameters
        )

    # ---- log-probs -------------------------------------------------------------------------
    def logprobs(self, batch: Batch, model: torch.nn.Module | None = None) -> torch.Tensor:
        """log π(response token | prefix) for every response column: [N, R] (grad if enabled;
        0 where ``batch.response_mask`` is 0)."""
        return self.token_logprobs(batch, model).logprobs

    def token_logprobs(
        self,
        batch: Batch,
        model: torch.nn.Module | None = None,
        entropy: bool = False,
        entropy_grad: bool = False,
    ) -> TokenLogProbs:
        """Log-probs (and, when asked, entropies: differentiable with ``entropy_grad``) of the
        response tokens, [N, R].

        The decoder gives the hidden state predicting each response token
        (:mod:`verirl.lm.passes`); with ``optim.share_prompt_prefix`` (default) each distinct
        prompt of the batch is encoded once and its keys/values are shared by all the rows
        that continue it — the G samples of a GRPO group — so the prompt costs one
        forward/backward instead of G, with the same gradients. The log-probs then come from
        the output head a chunk of trained positions at a time (:func:`verirl.lm.head_logprobs`,
        ``optim.logprob_chunk_tokens``): no [N, R, V] logits tensor is built, and padding
        never reaches the head.
        """
        lm = CausalLM(model if model is not None else self.model)
        p = batch.prompt_width
        with self.settings.placement.autocast():
            hidden = response_hidden(lm, batch, self.settings.optim.share_prompt_prefix)
            return head_logprobs(
                lm.head,
                hidden,
                batch.input_ids[:, p:],
                mask=batch.response_mask,
                temperature=self.temperature,
                chunk_tokens=self.chunk_tokens,
                entropy=entropy,
                entropy_grad=entropy_grad,
            )

    def score(self, batch: Batch, model: torch.nn.Module) -> torch.Tensor:
        """log ``model``(response token | prefix) [N, R] over the whole batch, without gradient,
        through the learner's passes (shared prompts, the chunked head, micro-batches): how a
        teacher scores the policy's samples."""
        return self._no_grad_pass(batch, model=model)[0]

    @torch.no_grad()
    def _no_grad_pass(
        self,
        batch: Batch,
        reference: bool = False,
        entropy: bool = False,
        model: torch.nn.Module | None = None,
        only: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Log-probs [N, R] of the policy (or the frozen reference, or ``model``) over the
        batch's rows (``only`` these indices when given; the others 0), and its entropies
        [N, R] when asked (zeros otherwise); each rank computes its share."""
        out = torch.zeros_like(batch.response_mask)
        ent = torch.zeros_like(batch.response_mask)
        mine = self.dp.shard(torch.arange(len(batch)) if only is None else only)
        for rows in self._micro_batches(batch, mine) if mine.numel() else ():
            sub = batch.select(rows).to(self.device)
            with self._reference_model() if reference else contextlib.nullcontext(model) as ref:
                got = self.token_logprobs(sub, ref, entropy=entropy)
            width = got.logprobs.shape[1]
            out[rows, :width] = (got.logprobs.float() * sub.response_mask).cpu()
            if got.entropy is not None:
                ent[rows, :width] = (got.entropy.float() * sub.response_mask).cpu()
        return self.dp.sum_tensor(out), self.dp.sum_tensor(ent) if entropy else ent

    # ---- one rollout batch ---------------------------------------------------------------------
    def update(self, batch: Batch) -> dict[str, float]:
        o = self.settings.optim
        self.model.train()
        sums: dict[str, float] = {}
        drift: dict[str, float] = {}
        proximal = batch.old_logprobs  # π_behav, unless the learner recomputes π_prox
        behaviour = batch.old_logprobs
        entropy_old = torch.zeros_like(batch.response_mask)  # read by an entropy token mask
        fused = self.fuses_old_logprobs(len(batch))
        gap = torch.zeros_like(batch.response_mask)  # fused: π_prox − π_behav, rows as they run
        if not fused and (self.settings.recompute_old_logprobs or self.pre_entropy):
            # π_old only where a row trains: the rows without signal are never run (an
            # entropy token mask reads every row's entropy, so then every row is recomputed)
            ran = self.rows_with_signal(batch)
            if self.pre_entropy:
                ran = torch.ones_like(ran)
            recomputed, entropy_old = self._no_grad_pass(
                batch, entropy=self.pre_entropy, only=torch.nonzero(ran).flatten()
            )
            if self.settings.recompute_old_logprobs:
                proximal = torch.where(ran[:, None], recomputed, batch.old_logprobs)
                measured = batch.response_mask * ran[:, None]
                if measured.any():  # the mismatch over the recomputed rows' tokens
                    drift = logprob_mismatch(proximal, batch.old_logprobs, measured)
        # the off-policy corrections' detached weights π_prox/π_behav (1 when they coincide)
        # (fused: computed row by row as the rows run, below)
        weights = torch.ones_like(batch.response_mask)
        if not fused:
            weights, is_stats = self.corrections.weights(
                proximal, batch.old_logprobs, batch.response_mask
            )
            drift.update(is_stats)
        batch = replace(batch, old_logprobs=proximal)
        sources = {name: source(batch) for name, source in self.sources.items()}
        keep = torch.ones_like(batch.response_mask)  # the token mask's selection
        n = len(batch)
        signal = self.rows_with_signal(batch)
        counts: dict[str, int] = {}  # minibatches that reported each statistic
        work = [0, 0]  # padded and real token positions the micro-batches ran
        rows_run = rows_seen = 0
        for _ in range(o.epochs):
            order = torch.randperm(n, generator=self.generator)
            for mb in torch.tensor_split(order, min(o.minibatches, n)):
                if mb.numel() == 0:
                    continue
                # the aggregation's normaliser counts every row, skipped ones included
                scale = AggregationScale(
                    tokens=float(batch.response_mask[mb].sum()),
                    sequences=float(mb.numel()),
                    norm_length=float(self.settings.norm_length),
                )
                keep[mb], mask_stats = self.token_mask(
                    MaskInputs(
                        batch.response_mask[mb],
                        batch.advantages[mb],
                        entropy_old[mb] if self.pre_entropy else None,
                    )
                )
                run = mb[signal[mb]]
                rows_run, rows_seen = rows_run + run.numel(), rows_seen + mb.numel()
                run_tokens = float(batch.response_mask[run].sum())
                step_stats: dict[str, float] = {"loss": 0.0}
                mine = self.dp.shard(run)
                for rows in self._micro_batches(batch, mine) if mine.numel() else ():
                    sub = batch.select(rows).to(self.device)
                    shared = o.share_prompt_prefix and prefix_sharing_pays(sub)
                    padded, real = padded_work(sub, shared)
                    work[0] += padded
                    work[1] += real
                    mask = sub.response_mask
                    width = mask.shape[1]
                    policy = self.token_logprobs(sub, entropy=True, entropy_grad=self.entropy_grad)
                    logp = policy.logprobs
                    if fused:  # π_prox is this pass's own log-probs, before any step
                        prox = logp.detach() * mask
                        gap[rows, :width] = (prox - sub.old_logprobs).float().cpu()
                        rows_weights = self.corrections.weights(prox, sub.old_logprobs, mask)[0]
                        sub = replace(sub, old_logprobs=prox)
                    else:
                        rows_weights = weights[rows, :width].to(self.device)
                    ratio_logp = self.corrections.logprobs(logp, sub.old_logprobs, mask)
                    loss_mat, stats = self.policy_loss(
                        ratio_logp, sub.old_logprobs, sub.advantages, mask, self.loss_params
                    )
                    gate = rows_weights * keep[rows, :width].to(self.device)
                    extra, term_stats = self.terms(
                        TermInputs(
                            logp,
                            sub.old_logprobs,
                            sub.advantages,
                            mask,
                            policy.entropy if self.entropy_grad else None,
                            {k: v[rows, :width].to(self.device) for k, v in sources.items()},
                        )
                    )
                    loss_mat = loss_mat * gate + extra
                    stats.update(term_stats)
                    if policy.entropy is not None:
                        ent = policy.entropy.detach()
                        stats["entropy"] = (ent * mask).sum() / mask.sum().clamp(min=1)
                    loss = self.aggregate(loss_mat, mask, scale)
                    loss.backward()
                    weight = float(mask.sum()) / max(run_tokens, 1.0)  # stats: rows run
                    step_stats["loss"] += float(loss.detach())
                    for k, v in stats.items():
                        step_stats[k] = step_stats.get(k, 0.0) + float(v) * weight
                self.dp.reduce_gradients(self.trainable)
                step_stats = self.dp.sum_stats(step_stats)
                grad_norm = torch.nn.utils.clip_grad_norm_(self.trainable, o.grad_clip)
                step_stats["grad_norm"] = float(grad_norm)
                step_stats["lr"] = float(self.scheduler.get_last_lr()[0])
                step_stats.update(mask_stats)  # the same on every rank: not summed
                step_stats.update(self.terms.step_stats())
                self.optimizer.step()
                self.scheduler.step()
                self.optimizer.zero_grad(set_to_none=True)
                self.terms.observe(step_stats)
                for k, total in step_stats.items():
                    sums[k] = sums.get(k, 0.0) + total
                    counts[k] = counts.get(k, 0) + 1
        self.model.eval()
        if fused:  # the mismatch and the corrections' statistics over the rows that ran
            proximal = behaviour + self.dp.sum_tensor(gap)
            measured = batch.response_mask * signal[:, None]
            if measured.any():
                drift = logprob_mismatch(proximal, behaviour, measured)
            drift.update(self.corrections.weights(proximal, behaviour, batch.response_mask)[1])
        out = {f"train/{k}": v / counts[k] for k, v in sums.items()}
        out.update({f"train/{k}": v for k, v in drift.items()})
        if work[0]:
            out["train/padding_fraction"] = 1.0 - work[1] / work[0]
        if rows_seen:
            out["train/rows_trained"] = rows_run / rows_seen
        return out

    def fuses_old_logprobs(self, rows: int) -> bool:
        """Whether π_old is read off the update's own forward pass instead of a no-grad pass
        before it. With one epoch of one minibatch the policy has not moved when each
        micro-batch runs, so its detached log-probs *are* π_old at the update's weights: the
        surrogate's ratio is 1 with the same gradient, and the corrections' weights (each a
        function of a row's own tokens) are the same row by row. One forward pass of the
        rows that train is saved. (TRL's ``GRPOTrainer`` reads π_old off the training pass
        too when it takes one step per generation, but runs a pass of its own whenever it
        corrects vLLM's mismatch.) Needs nothing read before the first pass: not an entropy
        token mask (it reads π_old's entropies first)."""
        o = self.settings.optim
        return (
            self.fuse_old_logprobs
            and self.settings.recompute_old_logprobs
            and not self.pre_entropy
            and o.epochs == 1
            and min(o.minibatches, rows) == 1
        )

    def rows_with_signal(self, batch: Batch) -> torch.Tensor:
        """bool [N]: the rows an update runs through the model. A row whose every advantage
        is 0 — each row of a GRPO group whose rewards are all equal — adds exactly nothing to
        the loss or the gradient when the policy loss and every loss term are advantage-gated,
        so with ``optim.skip_zero_advantage_rows`` it is left out (its tokens still count in
        the aggregation's normaliser: the update is the same). All rows otherwise."""
        if not self.skip_zero_rows:
            return torch.ones(len(batch), dtype=torch.bool)
        return ((batch.advantages != 0) & (batch.response_mask != 0)).any(dim=1)

    # ---- helpers -------------------------------------------------------------------------------
    def _micro_batches(self, batch: Batch, rows: torch.Tensor) -> Iterator[torch.Tensor]:
        """Split ``rows`` into micro-batches of at most ``micro_batch_tokens`` padded tokens,
        choosing the split that minimises the padded work (see :func:`pack_rows`)."""
        p = batch.prompt_width
        prompt_len = batch.attention_mask[rows, :p].sum(dim=1).tolist()
        resp_len = batch.attention_mask[rows, p:].sum(dim=1).tolist()
        keys = batch.distinct_prompts()[2][rows].tolist()
        for segment in pack_rows(
            prompt_len,
            resp_len,
            keys,
            budget=self.settings.optim.micro_batch_tokens,
            shared_prefix=self.settings.optim.share_prompt_prefix,
        ):
            yield rows[torch.tensor(segment)]

    @contextlib.contextmanager
    def _reference_model(self) -> Iterator[torch.nn.Module]:
        """The frozen initial policy: the base model with the adapter disabled (LoRA) or a
        frozen copy taken at construction (full fine-tuning)."""
        if self._reference is not None:
            yield self._reference
        else:
            with self.model.disable_adapter():  # type: ignore[operator]
                yield self.model

    def state_dict(self) -> dict[str, Any]:
        return {
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "generator": self.generator.get_state(),
            "loss_terms": self.terms.state_dict(),
            # a token source with state of its own (an EMA teacher's averages)
            "sources": {
                name: source.state_dict()
                for name, source in self.sources.items()
                if hasattr(source, "state_dict")
            },
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.generator.set_state(state["generator"])
        self.terms.load_state_dict(state["loss_terms"])
        for name, saved in state.get("sources", {}).items():  # absent: an older checkpoint
            source = self.sources.get(name)
            if source is not None and hasattr(source, "load_state_dict"):
                source.load_state_dict(saved)


def _is_peft(model: torch.nn.Module) -> bool:
    return hasattr(model, "disable_adapter") and hasattr(model, "peft_config")
