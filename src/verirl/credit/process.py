"""Process-verified credit for theorem proving (Kim & Yun 2026, arXiv 2606.20068).

A proof assistant checks each tactic of a sampled proof; tactics before the first error get
a small penalty d1, the first error and everything after it a larger penalty d2, and a passed
proof scores 1 on every tactic. That tactic score, minus the group's pass rate, is added to
the GRPO outcome advantage on the first token of each tactic. See :func:`process` for the
exact rule (the paper's tactic-score and advantage definitions) and :class:`ProcessParams`
for the knobs the paper ablates and the policies it leaves open (how ``sorry``, warnings and
unsolved goals with no failing tactic are scored).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, TypeVar

import torch
from pydantic import BaseModel, ConfigDict, Field

from verirl.credit.base import CREDIT, CreditInput, broadcast, group_mean_std


class ProcessParams(BaseModel):
    """Parameters of the process-verified estimator; defaults reproduce the paper."""

    model_config = ConfigDict(extra="forbid")

    d1: float = Field(
        -0.05,
        description=(
            "Tactic score of a 'locally sound' tactic of a failed proof: one before the "
            "first error (Kim & Yun 2026 main experiments: -0.05)."
        ),
    )
    d2: float = Field(
        -0.1,
        description=(
            "Tactic score of the first failing tactic and, with first_error_propagation, of "
            "every tactic after it (paper: -0.1). d1 = d2 is the paper's 'same tactic "
            "reward' ablation."
        ),
    )
    first_error_propagation: bool = Field(
        True,
        description=(
            "True (paper): d2 for the first error and every later tactic. False (the "
            "paper's 'no first-error propagation' ablation): d2 only for the first failing "
            "tactic, d1 for all others, since later tactics never reached the error log."
        ),
    )
    placement: Literal["first_token", "all_tokens", "last_token"] = Field(
        "first_token",
        description=(
            "Where the process advantage goes: the first token of each tactic (paper), "
            "every token of it, or its last token (the paper's placement ablations). A "
            "tactic's tokens run from its first token to the next tactic's first token (the "
            "last tactic: to the end of the response)."
        ),
    )
    incomplete_policy: Literal["all_sound", "blame_last"] = Field(
        "all_sound",
        description=(
            "A failed proof with no failing tactic (goals left open, an error outside every "
            "tactic): 'all_sound' gives every tactic d1 (the paper's rule with j = ∞); "
            "'blame_last' gives the last tactic d2."
        ),
    )
    timeout_policy: Literal["all_sound", "blame_running", "all_error"] = Field(
        "all_sound",
        description=(
            "A timeout or prover crash (no error log; the paper counts a timeout as a "
            "failure): 'all_sound' gives every tactic d1 (the literal rule); "
            "'blame_running' treats the step the checker reports as running "
            "(first_failed_step) as the first error, or falls back to all_sound; "
            "'all_error' gives every tactic d2."
        ),
    )
    rejected_policy: Literal["all_error", "all_sound"] = Field(
        "all_error",
        description=(
            "A proof the safety filter refused (sorry, admit, axiom, ...): every tactic d2 "
            "(default) or d1."
        ),
    )
    include_outcome: bool = Field(
        True,
        description="Add the GRPO outcome advantage; False is the paper's 'tactic only' ablation.",
    )
    process_baseline: Literal["group_mean", "none"] = Field(
        "group_mean",
        description=(
            "Subtract the group's pass rate from the tactic score (the paper's "
            "difficulty-adaptive baseline) or nothing (its 'no baseline' ablation)."
        ),
    )
    eps: float = Field(
        1e-6, gt=0, description="Added to the group std in the outcome z-score (as GRPO)."
    )


def tactic_scores(
    n_steps: int,
    *,
    passed: bool,
    status: str,
    first_failed: int | None,
    params: ProcessParams,
) -> list[float]:
    """φ_k for the ``n_steps`` tactics of one proof (Kim & Yun 2026, arXiv:2606.20068).

    - passed → 1 for every tactic;
    - ``rejected`` → ``rejected_policy``;
    - ``timeout`` / ``crash`` → ``timeout_policy``;
    - a first failing tactic j → d1 for k < j, d2 for k ≥ j (without propagation: d2 only
      for k = j);
    - otherwise (``incomplete``, or an error located in no tactic) → ``incomplete_policy``.
    """
    d1, d2 = params.d1, params.d2
    if n_steps == 0:
        return []
    if passed:
        return [1.0] * n_steps

    def from_error(j: int) -> list[float]:
        if not 0 <= j < n_steps:
            raise ValueError(f"first_failed_step {j} is not a step index (the proof has {n_steps})")
        if params.first_error_propagation:
            return [d1 if k < j else d2 for k in range(n_steps)]
        return [d2 if k == j else d1 for k in range(n_steps)]

    if status == "rejected":
        return [d2 if params.rejected_policy == "all_error" else d1] * n_steps
    if status in ("timeout", "crash"):
        if params.timeout_policy == "all_error":
            return [d2] * n_steps
        if params.timeout_policy == "blame_running" and first_failed is not None:
            return from_error(first_failed)
        return [d1] * n_steps
    if first_failed is not None:
        return from_error(first_failed)
    if params.incomplete_policy == "blame_last":
        return [d1] * (n_steps - 1) + [d2]
    return [d1] * n_steps


T = TypeVar("T")


def _per_rollout(values: Sequence[T], n: int, name: str, default: T) -> list[T]:
    if len(values) == 0:
        return [default] * n
    if len(values) != n:
        raise ValueError(f"CreditInput.{name} has {len(values)} entries for {n} rollouts")
    return list(values)


@CREDIT.register("process", ProcessParams, needs=frozenset({"steps"}))
def process(inp: CreditInput, params: ProcessParams) -> torch.Tensor:
    """Process-verified advantages (Kim & Yun 2026, arXiv:2606.20068).

    Shapes: ``inp.correct`` [N] bool (g_i: the whole proof passed), ``inp.groups`` [N],
    ``inp.response_mask`` [N, T]; per rollout ``inp.step_starts[i]`` (response-token index
    of the first token of each tactic, in order), ``inp.first_failed_step[i]`` (index of the
    first failing tactic or ``None``) and ``inp.status[i]``. Output [N, T].

    For rollout i of group g with tactics k = 0..K_i−1::

        A_outcome_i   = (g_i − mean_g(g)) / (std_g(g) + eps)        on every token
        φ_ik          = 1                       if g_i = 1
                        d1                      if g_i = 0 and k < j_i
                        d2                      if g_i = 0 and k ≥ j_i
        A_process_ik  = φ_ik − mean_g(g)                              (no std division)
        A_i,t         = A_outcome_i + Σ_k 1[t = first token of tactic k] · A_process_ik

    with j_i the first failing tactic (policies for proofs without one: see
    :func:`tactic_scores`) and the unbiased group std, as in ``grpo``. An all-pass group gets
    0 everywhere (1 − 1); an all-fail group keeps only the process signal (d1 / d2 on tactic
    starts), so tactics are ranked even when GRPO has none. ``placement`` moves A_process to
    all tokens or the last token of each tactic instead.
    """
    n, t = inp.response_mask.shape
    g = inp.correct.to(torch.float32)
    mean, std, _ = group_mean_std(g, inp.groups)
    adv = torch.zeros(n, t)
    if params.include_outcome:
        adv += broadcast((g - mean) / (std + params.eps), inp.response_mask)
    steps = _per_rollout(inp.step_starts, n, "step_starts", ())
    first = _per_rollout(inp.first_failed_step, n, "first_failed_step", None)
    status = _per_rollout(inp.status, n, "status", "")
    for i in range(n):
        starts = list(steps[i])
        if not starts:
            continue
        if any(not 0 <= s < t for s in starts) or starts != sorted(starts):
            raise ValueError(
                f"rollout {i}: step_starts {starts} must be increasing token indices in [0, {t})"
            )
        phi = tactic_scores(
            len(starts), passed=bool(g[i]), status=status[i], first_failed=first[i], params=params
        )
        baseline = float(mean[i]) if params.process_baseline == "group_mean" else 0.0
        active = inp.response_mask[i].nonzero()
        end_of_response = int(active.max()) + 1 if len(active) else t
        for k, (start, score) in enumerate(zip(starts, phi, strict=True)):
            value = score - baseline
            stop = starts[k + 1] if k + 1 < len(starts) else max(end_of_response, start + 1)
            stop = max(stop, start + 1)
            if params.placement == "first_token":
                adv[i, start] += value
            elif params.placement == "all_tokens":
                adv[i, start:stop] += value
            else:
                adv[i, stop - 1] += value
    return adv
