"""verl-free pieces of the verl integration: ``compute_score`` and the score encodings.

Everything here imports neither verl nor Ray, so it can be tested in verirl's own environment
and used by any trainer that speaks verl's reward-function contract.

``compute_score(data_source, solution_str, ground_truth, extra_info)`` is verl's custom reward
function contract (``reward.custom_reward_function.{path,name}``). A verirl row carries its
problem's identity in ``extra_info`` (``verirl_env``, ``verirl_difficulty``, ``verirl_seed``;
see :mod:`verirl.integrations.problems`), so the environment's verifier — or, for a proof
environment, its proof checker — judges the output against the problem's constraints, not only
against ``ground_truth``. Other rows (e.g. a maths parquet) are judged by verirl's rule verifier
(math-verify on the last ``\\boxed{}``). The result is a dict: ``score`` (RLVE's graded reward in
[−1, 1] for environments, 1/0 for rule-judged rows), ``acc`` and ``verirl_correct`` (the
fully-correct flag the curriculum adapts on).

Encodings of richer scores into verl's one reward tensor (``rm_scores`` [B, T], which is all a
verl advantage estimator receives besides ``response_mask`` and the group ``index``):

- process credit (:func:`encode_tactic_scores`): the tactic score φ_k of each tactic on the
  tactic's first response token (Kim & Yun 2026, arXiv:2606.20068: φ = 1 for every tactic of a
  passed proof, d1 / d2 < 0 for a failed one); a passed proof without tactics gets 1.0 on its
  last token. A row passed ⇔ it has a non-zero entry and all its non-zero entries equal 1.
- turn scores (:func:`encode_turn_scores`): the verifier score r_k ∈ [0, 1] of turn k on the
  last token of that turn, turns being the runs of 1s in ``response_mask`` (the model's own
  tokens between inserted feedback) — TCPO's r_{i,k} (Liao et al. 2026, arXiv:2608.01667).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

from verirl.errors import UserInputError
from verirl.integrations.problems import ENV_KEY, ProblemStore
from verirl.types import Problem, Verdict
from verirl.verification.batch import BatchVerifier

_STORE = ProblemStore()
_VERIFIER: BatchVerifier | None = None


def default_verifier() -> BatchVerifier:
    """The process-wide verifier ``compute_score`` uses (inline executor, 10 s deadline)."""
    global _VERIFIER
    if _VERIFIER is None:
        _VERIFIER = BatchVerifier()
    return _VERIFIER


def row_problem(
    data_source: str, ground_truth: Any, extra_info: Mapping[str, Any] | None
) -> Problem:
    """The verirl problem of a row, or a free-form problem judged by the rule verifier."""
    info = extra_info or {}
    if info.get(ENV_KEY) is not None:
        problem = _STORE.from_row(info)
        assert problem is not None
        return problem
    if str(data_source).startswith("verirl/"):
        raise UserInputError(
            f"row with data_source {data_source!r} has no {ENV_KEY} / verirl_difficulty / "
            "verirl_seed in extra_info; verirl rows must carry their problem's identity"
        )
    if ground_truth is None:
        raise UserInputError(f"row with data_source {data_source!r} has no ground_truth")
    # a prefix keeps a data source that happens to share an environment's name off that env
    env = f"verl:{data_source}"
    return Problem(env=env, difficulty=0, seed=0, prompt="", answer=str(ground_truth))


def verdicts_for(
    problems: Sequence[Problem], texts: Sequence[str], verifier: BatchVerifier | None = None
) -> list[Verdict]:
    """One verdict per output: the environment's (through the batched verification stage) or,
    for free-form rows, the rule verifier's (reward 1 correct, 0 not)."""
    from verirl.rewards.rule import rule_judgement

    env_verdicts = (verifier or default_verifier()).verify(problems, texts)
    out = []
    for problem, text, verdict in zip(problems, texts, env_verdicts, strict=True):
        if verdict is None:
            ok = rule_judgement(problem, text).correct
            verdict = Verdict(1.0 if ok else 0.0, ok, "rule verifier")
        out.append(verdict)
    return out


def score_dict(verdict: Verdict) -> dict[str, float]:
    """What verl stores per sample (every sample of a batch must have the same keys)."""
    c = 1.0 if verdict.correct else 0.0
    return {"score": float(verdict.reward), "acc": c, "verirl_correct": c}


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    **_: Any,
) -> dict[str, float]:
    """verl's reward-function contract backed by verirl's verifiers; see the module docstring."""
    problem = row_problem(data_source, ground_truth, extra_info)
    text = solution_str if isinstance(solution_str, str) else str(solution_str)
    return score_dict(verdicts_for([problem], [text])[0])


# ---- encodings into one reward tensor ---------------------------------------------------------
def valid_length(attention_mask_row: torch.Tensor, prompt_length: int) -> int:
    return int(attention_mask_row[prompt_length:].sum())


def encode_tactic_scores(
    width: int, length: int, starts: Sequence[int], phi: Sequence[float], passed: bool
) -> torch.Tensor:
    """One row [width]: φ_k on token ``starts[k]``; a passed proof without tactics: 1.0 on the
    last of its ``length`` valid tokens. Raises when a φ is 0 (it would vanish)."""
    row = torch.zeros(width, dtype=torch.float32)
    if len(starts) != len(phi):
        raise ValueError(f"{len(starts)} tactic starts for {len(phi)} tactic scores")
    if not starts:
        if passed and length > 0:
            row[length - 1] = 1.0
        return row
    for s, v in zip(starts, phi, strict=True):
        if v == 0.0:
            raise UserInputError("process credit through verl needs d1 and d2 != 0 (they encode)")
        if not 0 <= s < length:
            raise ValueError(f"tactic start {s} outside the {length} valid response tokens")
        row[s] = float(v)
    return row


def decode_tactic_scores(row: torch.Tensor, length: int) -> tuple[bool, list[int], list[float]]:
    """Inverse of :func:`encode_tactic_scores`: ``(passed, starts, φ)``."""
    nz = torch.nonzero(row[:length]).flatten().tolist()
    values = [float(row[t]) for t in nz]
    passed = bool(values) and all(v == 1.0 for v in values)
    if passed and nz == [length - 1]:  # a passed proof without tactics
        return True, [], []
    return passed, nz, values


def turn_spans(mask_row: torch.Tensor, length: int) -> list[tuple[int, int]]:
    """``[start, end)`` of each run of 1s in ``mask_row[:length]`` (the model's turns)."""
    spans: list[tuple[int, int]] = []
    start = None
    values = mask_row[:length].tolist()
    for t, m in enumerate(values):
        if m and start is None:
            start = t
        elif not m and start is not None:
            spans.append((start, t))
            start = None
    if start is not None:
        spans.append((start, len(values)))
    return spans


def encode_turn_scores(
    width: int, spans: Sequence[tuple[int, int]], scores: Sequence[float]
) -> torch.Tensor:
    """One row [width]: r_k on the last token of turn k."""
    row = torch.zeros(width, dtype=torch.float32)
    for (_, end), r in zip(spans, scores, strict=True):
        row[end - 1] = float(r)
    return row
