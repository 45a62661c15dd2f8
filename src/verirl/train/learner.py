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
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import torch

from verirl.config import LossConfig, OptimConfig, TrainConfig
from verirl.device import Placement
from verirl.lm import CausalLM, TokenLogProbs, head_logprobs
from verirl.lm.checkpointing import enable_activation_checkpointing
from verirl.lm.passes import response_hidden
from verirl.train.distributed import DataParallel
from verirl.train.loss import (
    AGGREGATIONS,
    POLICY_LOSSES,
    AggregationScale,
    kl_penalty,
    logprob_mismatch,
)
from verirl.train.memory_plan import resolve_checkpointing
from verirl.train.off_policy import Corrections
from verirl.train.optimizers import AdamSettings, build_optimizer
from verirl.train.packing import (
    MAX_ROWS_PER_MICRO_BATCH,
    MICRO_BATCH_OVERHEAD_TOKENS,
    pack_rows,
    padded_work,
)
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


def collate(rollouts: Sequence[Rollout], advantages: torch.Tensor, pad_id: int) -> Batch:
    """Build the learner's :class:`Batch`: prompts left-padded, responses right-padded.

    ``advantages`` is [N, T] with T ≥ the longest response (as credit estimators return).
    """
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
      activation_checkpointing`` with 'auto' resolved by the memory plan).
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
        ``activation_checkpointing`` None: ``optim.activation_checkpointing``, 'auto' decided
        by the memory plan (:func:`verirl.train.memory_plan.resolve_checkpointing`)."""
        if engine_logprobs_exact is None:
            from verirl.rollout.base import ENGINES

            engine_logprobs_exact = ENGINES.get(cfg.rollout.engine.name).logprobs_exact
        return cls(
            loss=cfg.loss,
            optim=cfg.optim,
            temperature=cfg.rollout.temperature,
            norm_length=cfg.rollout.max_new_tokens,
            placement=placement,
            seed=cfg.run.seed,
            engine_logprobs_exact=engine_logprobs_exact,
            activation_checkpointing=(
                activation_checkpointing
                if activation_checkpointing is not None
                else resolve_checkpointing(cfg, placement.device.type)
            ),
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


class Learner:
    """Owns the optimizer, the LR schedule and (when KL is on) the frozen reference.

    ``data_parallel``: this process's place in a learner group; it then computes every
    ``world_size``-th row of each minibatch and the gradients are summed over the group.
    """

    def __init__(
        self,
        model: torch.nn.Module,
        settings: LearnerSettings,
        total_steps: int,
        data_parallel: DataParallel | None = None,
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
            self.optimizer, _schedule(o.schedule, o.warmup_steps, updates)
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
        self._reference: torch.nn.Module | None = None
        if loss.kl_coef > 0 and not _is_peft(model):
            self._reference = copy.deepcopy(model).eval().requires_grad_(False)
        # rows without signal are skipped only where they provably add nothing: a loss the
        # advantage gates, no KL term, and every rank free to skip (FSDP's collectives need
        # every rank in every pass)
        self.skip_zero_rows = (
            o.skip_zero_advantage_rows
            and spec.advantage_gated
            and loss.kl_coef == 0
            and not (data_parallel is not None and data_parallel.sharded_parameters)
        )

    # ---- log-probs -------------------------------------------------------------------------
    def logprobs(self, batch: Batch, model: torch.nn.Module | None = None) -> torch.Tensor:
        """log π(response token | prefix) for every response column: [N, R] (grad if enabled;
        0 where ``batch.response_mask`` is 0)."""
        return self.token_logprobs(batch, model).logprobs

    def token_logprobs(
        self, batch: Batch, model: torch.nn.Module | None = None, entropy: bool = False
    ) -> TokenLogProbs:
        """Log-probs (and, when asked, entropies) of the response tokens, [N, R].

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
            )

    @torch.no_grad()
    def _logprobs_no_grad(self, batch: Batch, reference: bool = False) -> torch.Tensor:
        out = torch.zeros_like(batch.response_mask)
        mine = self._my_rows(torch.arange(len(batch)))
        for rows in self._micro_batches(batch, mine) if mine.numel() else ():
            sub = batch.select(rows).to(self.device)
            with self._reference_model() if reference else contextlib.nullcontext() as ref:
                lp = self.logprobs(sub, ref if reference else None)
            out[rows, : lp.shape[1]] = (lp.float() * sub.response_mask).cpu()
        return self.dp.sum_tensor(out) if self.dp is not None else out

    def _my_rows(self, rows: torch.Tensor) -> torch.Tensor:
        return self.dp.shard(rows) if self.dp is not None else rows

    # ---- one rollout batch ---------------------------------------------------------------------
    def update(self, batch: Batch) -> dict[str, float]:
        o, loss_cfg = self.settings.optim, self.settings.loss
        self.model.train()
        sums: dict[str, float] = {}
        drift: dict[str, float] = {}
        proximal = batch.old_logprobs  # π_behav, unless the learner recomputes π_prox
        if self.settings.recompute_old_logprobs:
            proximal = self._logprobs_no_grad(batch)
            drift = logprob_mismatch(proximal, batch.old_logprobs, batch.response_mask)
        # the off-policy corrections' detached weights π_prox/π_behav (1 when they coincide)
        weights, is_stats = self.corrections.weights(
            proximal, batch.old_logprobs, batch.response_mask
        )
        drift.update(is_stats)
        batch = _replace_old(batch, proximal)
        ref_lp = self._logprobs_no_grad(batch, reference=True) if loss_cfg.kl_coef else None
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
                run = mb[signal[mb]]
                rows_run, rows_seen = rows_run + run.numel(), rows_seen + mb.numel()
                run_tokens = float(batch.response_mask[run].sum())
                step_stats: dict[str, float] = {"loss": 0.0}
                ran = False
                mine = self._my_rows(run)
                for rows in self._micro_batches(batch, mine) if mine.numel() else ():
                    sub = batch.select(rows).to(self.device)
                    padded, real = padded_work(sub, o.share_prompt_prefix)
                    work[0] += padded
                    work[1] += real
                    mask = sub.response_mask
                    policy = self.token_logprobs(sub, entropy=True)
                    logp = policy.logprobs
                    ratio_logp = self.corrections.logprobs(logp, sub.old_logprobs, mask)
                    loss_mat, stats = self.policy_loss(
                        ratio_logp, sub.old_logprobs, sub.advantages, mask, self.loss_params
                    )
                    loss_mat = loss_mat * weights[rows, : mask.shape[1]].to(self.device)
                    if ref_lp is not None:
                        ref = ref_lp[rows, : mask.shape[1]].to(self.device)
                        kl = kl_penalty(logp, ref, loss_cfg.kl_estimator)
                        loss_mat = loss_mat + loss_cfg.kl_coef * kl
                        stats["kl_ref"] = ((kl * mask).sum() / mask.sum().clamp(min=1)).detach()
                    if policy.entropy is not None:
                        stats["entropy"] = (policy.entropy * mask).sum() / mask.sum().clamp(min=1)
                    loss = self.aggregate(loss_mat, mask, scale)
                    loss.backward()
                    ran = True
                    weight = float(mask.sum()) / max(run_tokens, 1.0)  # stats: rows run
                    step_stats["loss"] += float(loss.detach())
                    for k, v in stats.items():
                        step_stats[k] = step_stats.get(k, 0.0) + float(v) * weight
                if self.dp is not None:
                    self.dp.reduce_gradients(self.trainable)
                    step_stats = self.dp.sum_stats(step_stats, _group_keys(step_stats))
                elif not ran:  # no row had signal: the zero gradient every row would have given
                    for param in self.trainable:
                        param.grad = torch.zeros_like(param)
                grad_norm = torch.nn.utils.clip_grad_norm_(self.trainable, o.grad_clip)
                step_stats["grad_norm"] = float(grad_norm)
                step_stats["lr"] = float(self.scheduler.get_last_lr()[0])
                self.optimizer.step()
                self.scheduler.step()
                self.optimizer.zero_grad(set_to_none=True)
                for k, total in step_stats.items():
                    sums[k] = sums.get(k, 0.0) + total
                    counts[k] = counts.get(k, 0) + 1
        self.model.eval()
        out = {f"train/{k}": v / counts[k] for k, v in sums.items()}
        out.update({f"train/{k}": v for k, v in drift.items()})
        if work[0]:
            out["train/padding_fraction"] = 1.0 - work[1] / work[0]
        if rows_seen:
            out["train/rows_trained"] = rows_run / rows_seen
        return out

    def rows_with_signal(self, batch: Batch) -> torch.Tensor:
        """bool [N]: the rows an update runs through the model. A row whose every advantage
        is 0 — each row of a GRPO group whose rewards are all equal — adds exactly nothing to
        the loss or the gradient when the policy loss is advantage-gated and there is no KL
        term, so with ``optim.skip_zero_advantage_rows`` it is left out (its tokens still count
        in the aggregation's normaliser: the update is the same). All rows otherwise."""
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
        keys = _prompt_index(batch)[rows].tolist()
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
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.generator.set_state(state["generator"])


def _prompt_index(batch: Batch) -> torch.Tensor:
    """[N] long: rows with the same (padded) prompt get the same index."""
    p = batch.prompt_width
    key = torch.cat([batch.input_ids[:, :p], batch.attention_mask[:, :p]], dim=1)
    return torch.unique(key, dim=0, return_inverse=True)[1]


def _replace_old(batch: Batch, old: torch.Tensor) -> Batch:
    from dataclasses import replace

    return replace(batch, old_logprobs=old)


def _group_keys(stats: dict[str, float]) -> list[str]:
    """The union of every rank's statistic names, in one order (a rank without rows has none)."""
    import torch.distributed as dist

    if not dist.is_initialized() or dist.get_world_size() == 1:
        return sorted(stats)
    gathered: list[list[str] | None] = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, sorted(stats))
    return sorted({k for keys in gathered for k in keys or []})


def _is_peft(model: torch.nn.Module) -> bool:
    return hasattr(model, "disable_adapter") and hasattr(model, "peft_config")


def _schedule(kind: str, warmup: int, total: int) -> Any:
    def factor(step: int) -> float:
        if warmup and step < warmup:
            return (step + 1) / warmup
        if kind == "constant":
            return 1.0
        progress = min(1.0, (step - warmup) / max(1, total - warmup))
        if kind == "linear":
            return 1.0 - progress
        return 0.5 * (1.0 + math.cos(math.pi * progress))

    return factor
