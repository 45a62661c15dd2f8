"""Multi-turn refinement episodes: any environment becomes a refinement environment.

Collector ``multi_turn`` (the setting of TCPO, Liao et al. 2026, *TCPO: Turn-Level Credit
Policy Optimization*, arXiv:2608.01667): the model
answers, the environment's verifier scores the answer, and — unless the answer succeeded or
K turns are used up — a feedback message saying what is wrong (``Environment.feedback``,
never the answer) is appended to the conversation and the model tries again::

    prompt ▸ turn 1 ▸ feedback 1 ▸ turn 2 ▸ feedback 2 ▸ … ▸ turn K_i

Bookkeeping per episode (one :class:`~verirl.types.Rollout`):

- ``response_ids`` = the model's sampled tokens of every turn, *verbatim*, with the feedback
  glue tokens between turns; ``loss_mask`` is 1 on the model's tokens and 0 on the glue;
  ``logprobs`` are the behaviour log-probs of the model's tokens and 0.0 on the glue. The
  prompt of turn k is exactly ``prompt_ids + response_ids[:turns[k-1].start]``, so the learner
  recomputes log-probs in the very context the tokens were sampled in.
- ``turns[k-1]``: the token span ``[start, end)`` of turn k, its text, its score r_k ∈ [0, 1]
  (see ``MultiTurnParams.score_map``), ``correct``, the verifier's feedback on it, its mean
  negative log-likelihood ``nll`` and, when it was picked for the counterfactual, the
  scores of M alternatives sampled from the same history (``alt_scores``).
- ``verdict``: the final turn's verdict (env reward in [-1, 1]), ``extra`` adding
  ``best_score``, ``turns``, ``success_turn`` (1-based, or ``None``) and ``turn_scores``;
  ``text``: the final turn's output.

Batching: every round of turns is one ``engine.generate`` call — turn 1 for every problem
with ``n`` samples each, then one call per round over the episodes still running (``n = 1``
each) — and the counterfactual alternatives of the whole batch are one more call. Each round
is scored by one call of the run's reward stage (``score``: the configured reward source —
environment verifier, rule, CER, prover — over the round's turns), so a multi-turn run
trains on the same reward as a single-turn one. When the stage streams
(``verification.stream``), each turn's verification starts as soon as that turn has
finished decoding, while the other episodes' turns of the round still decode.

The feedback glue comes from the chat template: the conversation is rendered as text with a
placeholder assistant message followed by the feedback user message and the generation
prompt; the text after the placeholder (the end of the assistant turn, the user message, the
next assistant header) is tokenized on its own and appended. When the model's last sampled
token is a special token (its end-of-turn marker) that the glue text starts with, that part
is dropped, so the marker is not doubled.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from verirl.envs import ENVIRONMENTS, TURN_SEPARATOR, get_env
from verirl.rollout.base import Generation, RolloutEngine, generate_streaming
from verirl.rollout.collect import COLLECTORS, Collector, Scorer, streamer
from verirl.rollout.prompts import PromptFormatter
from verirl.types import FinishReason, Problem, Rollout, SamplingParams, Turn, Verdict

ScoreMap = Literal["correct", "clip", "affine"]
_PLACEHOLDER = "\u27e6VERIRL_ASSISTANT_TURN\u27e7"
_TEMPLATE_FIELDS = {"feedback": "the value is not right", "turn": 1, "turns_left": 2}


class MultiTurnParams(BaseModel):
    """Parameters of the ``multi_turn`` collector (TCPO's refinement episodes)."""

    model_config = ConfigDict(extra="forbid")

    max_turns: int = Field(
        3,
        ge=1,
        description="K: most model turns per episode. TCPO reports maths saturating at about "
        "3 turns, code at 5 (arXiv:2608.01667).",
    )
    success_threshold: float = Field(
        1.0,
        description="τ: a turn succeeds when its score r ≥ τ. Keep equal to the tcpo "
        "estimator's tau. 1.0 = fully correct.",
    )
    score_map: ScoreMap = Field(
        "correct",
        description="Turn score r ∈ [0, 1] fed to turn-level credit, from the verifier's "
        "verdict (reward in [-1, 1]): 'correct' = 1 if verdict.correct else 0 (TCPO's maths "
        "setting, 0/1 correctness); 'clip' = max(reward, 0), keeping partial credit and "
        "mapping format/invalid penalties to 0; 'affine' = (reward + 1) / 2, keeping the "
        "penalties' order.",
    )
    stop_on_success: bool = Field(
        True,
        description="End an episode at its first successful turn (TCPO's setting). False runs "
        "every episode for max_turns turns, so regressions after success can happen and be "
        "measured (regression_rate is 0 by construction when True).",
    )
    feedback_template: str = Field(
        "Verifier feedback: {feedback}\n"
        "Revise your solution and put your final answer within \\boxed{{}}.",
        description="The user message after a turn, a str.format template with {feedback} "
        "(the environment's feedback, never the answer), {turn} (the turn just taken, "
        "1-based) and {turns_left}. Literal braces are doubled. The score is deliberately not "
        "offered: a graded score can reveal the answer (e.g. (min/max)^β partial credit).",
    )
    counterfactual: bool = Field(
        False,
        description="Draw TCPO's selective fixed-history counterfactual alternatives after "
        "the episodes (needed by tcpo's counterfactual component).",
    )
    cf_top_l: int = Field(
        5,
        ge=0,
        description="L: how many of the step's most surprising non-improving turns get "
        "alternatives. The paper: 5 for maths, 10 for code and AppWorld.",
    )
    cf_alternatives: int = Field(
        4,
        ge=1,
        description="M: alternatives sampled per chosen turn. The paper does not publish M; "
        "4 is a neutral choice (one small GRPO-sized group).",
    )
    cf_temperature: float | None = Field(
        None,
        ge=0,
        description="Sampling temperature of the alternatives; None uses the episodes' own "
        "temperature, so their mean score estimates the history's value under the behaviour "
        "policy.",
    )

    @field_validator("feedback_template")
    @classmethod
    def _template_formats(cls, value: str) -> str:
        try:
            value.format(**_TEMPLATE_FIELDS)
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(
                "feedback_template must be a str.format template using only {feedback}, "
                f"{{turn}} and {{turns_left}} (double literal braces): {exc!r}"
            ) from exc
        return value


# ---- turn scores ---------------------------------------------------------------------------
def turn_score(verdict: Verdict, how: ScoreMap) -> float:
    """Map a verdict (reward in [-1, 1]) to the turn score r ∈ [0, 1]."""
    if how == "correct":
        return 1.0 if verdict.correct else 0.0
    reward = float(verdict.reward)
    if how == "clip":
        return min(1.0, max(0.0, reward))
    return min(1.0, max(0.0, (reward + 1.0) / 2.0))


def non_improving(scores: Sequence[float]) -> list[bool]:
    """Δ_k = 0 for each turn: r_k ≤ m_k with m_k = max(0, r_1..r_{k−1}) (TCPO eq. (1))."""
    out, best = [], 0.0
    for r in scores:
        out.append(r <= best)
        best = max(best, r)
    return out


def mean_nll(logprobs: Sequence[float]) -> float:
    """Mean negative log-likelihood of a turn's tokens (0 for an empty turn)."""
    return -sum(logprobs) / len(logprobs) if logprobs else 0.0


# ---- episodes ------------------------------------------------------------------------------
@dataclass
class _Episode:
    problem: Problem
    group: int
    prompt: tuple[int, ...]
    response: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    mask: list[int] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    finish: FinishReason = "length"
    done: bool = False

    def context(self) -> list[int]:
        return [*self.prompt, *self.response]


@COLLECTORS.register("multi_turn", MultiTurnParams)
class MultiTurn(Collector):
    """Multi-turn refinement with verifier feedback, all episodes of a batch in lock-step.

    See the module docstring for the token bookkeeping; ``metrics()`` reports, for the last
    ``collect``:

    - ``best_turn_pass_at_k``: share of problems where some episode of its group had a
      successful turn (k = group size; TCPO's best-turn pass@k);
    - ``best_turn_accuracy``: share of episodes with a successful turn; ``first_turn_accuracy``
      the same for turn 1 only;
    - ``turns_to_success``: mean 1-based index of the first successful turn, over episodes
      that succeeded (NaN when none did); ``mean_turns``: mean turns per episode;
    - ``regression_rate``: among episodes that succeeded, the share with a later turn scoring
      below the threshold again (0 by construction with ``stop_on_success``; NaN when no
      episode succeeded);
    - ``cf_turns``: turns that got alternatives; ``cf_applicable_share``: share of those whose
      alternatives' scores vary; ``cf_extra_token_share``: the alternatives' generated tokens
      as a share of all tokens generated in the step (episodes + alternatives);
    - ``episode_seconds`` / ``cf_seconds``: wall time of the episodes and of the counterfactual
      resampling (with the trainer's ``time/step_s``: the counterfactual's share of the step).
    """

    params: MultiTurnParams

    def __init__(self, params: BaseModel) -> None:
        if not isinstance(params, MultiTurnParams):
            raise TypeError(f"multi_turn needs MultiTurnParams, got {type(params).__name__}")
        super().__init__(params)
        self._metrics: dict[str, float] = {}

    def produces(self) -> frozenset[str]:
        return frozenset({"turns", "counterfactual"} if self.params.counterfactual else {"turns"})

    def for_evaluation(self) -> MultiTurn:
        """Evaluation runs the same refinement episodes without counterfactual alternatives."""
        params = self.params.model_copy(update={"counterfactual": False})
        return MultiTurn(params)

    def metrics(self) -> dict[str, float]:
        return dict(self._metrics)

    # ---- the episode loop ---------------------------------------------------------------
    def collect(
        self,
        problems: Sequence[Problem],
        engine: RolloutEngine,
        formatter: PromptFormatter,
        sampling: SamplingParams,
        first_group: int = 0,
        *,
        score: Scorer,
    ) -> list[Rollout]:
        p = self.params
        started = time.perf_counter()
        prompts = [tuple(formatter.encode(problem)) for problem in problems]
        n = sampling.n
        episodes = [
            _Episode(problem=problem, group=first_group + i, prompt=prompt)
            for i, (problem, prompt) in enumerate(zip(problems, prompts, strict=True))
            for _ in range(n)
        ]
        on_finish = streamer(score, lambda i, j, g: _next_turn(episodes[i * n + j], g))
        generations = generate_streaming(engine, [list(x) for x in prompts], sampling, on_finish)
        if len(generations) != len(problems) or any(len(g) != n for g in generations):
            raise RuntimeError(
                f"engine returned {[len(g) for g in generations]} generations for "
                f"{len(problems)} prompts × n = {n}"
            )
        self._take_turns(episodes, [g for group in generations for g in group], formatter, score)
        later = dataclasses.replace(sampling, n=1, seed=None)  # seed only the first call
        for _ in range(2, p.max_turns + 1):
            live = [ep for ep in episodes if not ep.done]
            if not live:
                break
            on_finish = streamer(score, lambda i, _, g, live=live: _next_turn(live[i], g))  # type: ignore[misc]
            generations = generate_streaming(
                engine, [ep.context() for ep in live], later, on_finish
            )
            self._take_turns(live, [group[0] for group in generations], formatter, score)

        extra_tokens = 0
        cf_started = time.perf_counter()
        if p.counterfactual and p.cf_top_l > 0:
            extra_tokens = self._counterfactual(episodes, engine, sampling, score)
        finished = time.perf_counter()
        rollouts = [self._to_rollout(ep) for ep in episodes]
        episode_tokens = sum(sum(ep.mask) for ep in episodes)
        self._metrics = episode_metrics(rollouts, p.success_threshold, episode_tokens, extra_tokens)
        self._metrics["episode_seconds"] = cf_started - started
        self._metrics["cf_seconds"] = finished - cf_started
        return rollouts

    def _take_turns(
        self,
        episodes: Sequence[_Episode],
        gens: Sequence[Generation],
        formatter: PromptFormatter,
        score: Scorer,
    ) -> None:
        """Score one round of turns together (one reward-stage call), then record each."""
        for gen in gens:
            if len(gen.logprobs) != len(gen.token_ids):
                raise RuntimeError(
                    f"engine returned {len(gen.logprobs)} log-probs for {len(gen.token_ids)} tokens"
                )
        # a scoring group = turns taken from the same context (turn 1 of one prompt's n
        # samples); later turns have histories of their own, so each is a group of one
        groups: dict[tuple[int, tuple[int, ...]], int] = {}
        batch = []
        for ep, g in zip(episodes, gens, strict=True):
            context = tuple(ep.context())
            gid = groups.setdefault((ep.group, context), len(groups))
            batch.append(_turn_rollout(ep, gid, context, g, _transcript(ep, len(ep.turns), g.text)))
        scored = score(batch)
        for ep, gen, r in zip(episodes, gens, scored, strict=True):
            assert r.verdict is not None
            self._take_turn(ep, gen, r.verdict, formatter, r.text)

    def _take_turn(
        self,
        ep: _Episode,
        gen: Generation,
        verdict: Verdict,
        formatter: PromptFormatter,
        scored_text: str,
    ) -> None:
        """Record one scored turn, and end the episode or append the feedback glue for the
        next turn. ``scored_text`` is what the verifier saw (the turn, or for a stateful
        environment the transcript so far)."""
        p = self.params
        score = turn_score(verdict, p.score_map)
        feedback = _feedback(ep.problem, scored_text, verdict)
        start = len(ep.response)
        ep.response.extend(int(t) for t in gen.token_ids)
        ep.logprobs.extend(float(x) for x in gen.logprobs)
        ep.mask.extend([1] * len(gen.token_ids))
        turn_no = len(ep.turns) + 1
        ep.turns.append(
            Turn(
                start=start,
                end=len(ep.response),
                text=gen.text,
                score=score,
                correct=verdict.correct,
                feedback=feedback,
                nll=mean_nll(gen.logprobs),
            )
        )
        ep.verdicts.append(verdict)
        ep.finish = gen.finish_reason
        success = score >= p.success_threshold
        if turn_no >= p.max_turns or (success and p.stop_on_success):
            ep.done = True
            return
        message = p.feedback_template.format(
            feedback=feedback, turn=turn_no, turns_left=p.max_turns - turn_no
        )
        glue = feedback_glue(formatter, ep.problem, message, gen.token_ids)
        ep.response.extend(glue)
        ep.logprobs.extend([0.0] * len(glue))
        ep.mask.extend([0] * len(glue))

    # ---- counterfactual -----------------------------------------------------------------
    def _counterfactual(
        self,
        episodes: list[_Episode],
        engine: RolloutEngine,
        sampling: SamplingParams,
        score: Scorer,
    ) -> int:
        """Sample M alternatives for the top-L most surprising non-improving turns of the
        batch from their fixed histories (one generate call); store their scores in
        ``Turn.alt_scores``. Returns the number of alternative tokens generated."""
        p = self.params
        chosen = select_counterfactual_turns([ep.turns for ep in episodes], p.cf_top_l)
        if not chosen:
            return 0
        alt_sampling = dataclasses.replace(
            sampling,
            n=p.cf_alternatives,
            seed=None,
            temperature=sampling.temperature if p.cf_temperature is None else p.cf_temperature,
        )
        histories = [
            [*episodes[e].prompt, *episodes[e].response[: episodes[e].turns[k].start]]
            for e, k in chosen
        ]
        on_finish = streamer(
            score,
            lambda c, _, g: _turn_rollout(
                episodes[chosen[c][0]],
                -1 - c,
                histories[c],
                g,
                _transcript(episodes[chosen[c][0]], chosen[c][1], g.text),
            ),
        )
        generations = generate_streaming(engine, histories, alt_sampling, on_finish)
        # one reward-stage call for every alternative; each chosen turn's M alternatives
        # form their own group (group-aware rewards such as CER compare them to each other)
        batch = [
            _turn_rollout(episodes[e], -1 - c, history, g, _transcript(episodes[e], k, g.text))
            for c, ((e, k), history, group) in enumerate(
                zip(chosen, histories, generations, strict=True)
            )
            for g in group
        ]
        scored = iter(score(batch))
        extra = 0
        for (e, k), group in zip(chosen, generations, strict=True):
            ep = episodes[e]
            verdicts = [next(scored).verdict for _ in group]
            scores = tuple(turn_score(v, p.score_map) for v in verdicts if v is not None)
            extra += sum(len(g.token_ids) for g in group)
            ep.turns[k] = dataclasses.replace(ep.turns[k], alt_scores=scores)
        return extra

    def _to_rollout(self, ep: _Episode) -> Rollout:
        verdict = episode_verdict(ep.verdicts[-1], ep.turns, self.params.success_threshold)
        return Rollout(
            problem=ep.problem,
            group=ep.group,
            prompt_ids=ep.prompt,
            response_ids=tuple(ep.response),
            logprobs=tuple(ep.logprobs),
            text=ep.turns[-1].text,
            finish_reason=ep.finish,
            loss_mask=tuple(ep.mask),
            turns=tuple(ep.turns),
            verdict=verdict,
        )


def episode_verdict(
    last: Verdict, turns: Sequence[Turn], success_threshold: float, **extra: Any
) -> Verdict:
    """A multi-turn episode's verdict: its last turn's, with the episode's summary in
    ``extra`` (best score, turns taken, the first turn scoring at least
    ``success_threshold``, every turn's score) and any further ``extra`` fields."""
    scores = [t.score for t in turns]
    success = [i + 1 for i, r in enumerate(scores) if r >= success_threshold]
    summary = {
        "best_score": max(scores),
        "turns": len(turns),
        "success_turn": success[0] if success else None,
        "turn_scores": scores,
    }
    return dataclasses.replace(last, extra={**dict(last.extra), **summary, **extra})


def _transcript(ep: _Episode, k: int, text: str) -> str:
    """What the verifier scores for a new turn after the episode's first ``k`` turns: the
    turn's text, or for a stateful environment (``Environment.stateful``, e.g. a tool world
    that replays its calls) the model's turns so far and this one, joined by
    :data:`~verirl.types.TURN_SEPARATOR`."""
    env = ep.problem.env
    if env not in ENVIRONMENTS or not ENVIRONMENTS.get(env).part.stateful:
        return text
    return TURN_SEPARATOR.join([*(t.text for t in ep.turns[:k]), text])


def _next_turn(ep: _Episode, gen: Generation) -> Rollout:
    """The rollout the reward stage will score for ``gen``, the episode's next turn (what
    :meth:`MultiTurn._take_turns` builds; streamed as the turn finishes)."""
    return _turn_rollout(ep, 0, ep.context(), gen, _transcript(ep, len(ep.turns), gen.text))


def _turn_rollout(
    ep: _Episode, group: int, context: Sequence[int], gen: Generation, text: str
) -> Rollout:
    """One turn as a rollout for the reward stage: its prompt is everything before the turn
    (the problem, earlier turns and their feedback), its response the turn's tokens and its
    text what the verifier scores (see :func:`_transcript`)."""
    return Rollout(
        problem=ep.problem,
        group=group,
        prompt_ids=tuple(context),
        response_ids=tuple(gen.token_ids),
        logprobs=tuple(gen.logprobs),
        text=text,
        finish_reason=gen.finish_reason,
    )


def _feedback(problem: Problem, text: str, verdict: Verdict) -> str:
    """The environment's feedback on a scored turn (the verdict's detail for problems that
    are not from a registered environment)."""
    if problem.env in ENVIRONMENTS:
        return get_env(problem.env).feedback(problem, text, verdict)
    return verdict.detail or ("correct" if verdict.correct else "not correct yet")


def select_counterfactual_turns(
    turns: Sequence[Sequence[Turn]], top_l: int
) -> list[tuple[int, int]]:
    """(episode, 0-based turn) of the ``top_l`` non-improving turns with the highest surprisal.

    Surprisal is the turn's mean negative log-likelihood under the behaviour policy
    (``Turn.nll``): it is free (the log-probs were recorded while sampling), the mean keeps
    long turns from being picked just for their length, and a high value marks a turn where
    the policy was uncertain — where another draw from the same history is most likely to
    differ, so the counterfactual can tell the turn apart from what the policy would
    otherwise do. (The paper says "surprisal" without a definition; this is our reading.)
    Only non-improving turns (Δ_k = 0) are candidates: improving turns already get TCPO's
    retrospective credit. Ties go to the earlier episode, then the earlier turn.
    """
    candidates: list[tuple[float, int, int]] = []
    for e, ts in enumerate(turns):
        flags = non_improving([t.score for t in ts])
        for k, (turn, flag) in enumerate(zip(ts, flags, strict=True)):
            if flag:
                candidates.append((-turn.nll, e, k))
    candidates.sort()
    return [(e, k) for _, e, k in candidates[:top_l]]


def feedback_glue(
    formatter: PromptFormatter, problem: Problem, message: str, sampled: Sequence[int]
) -> list[int]:
    """Token ids between a model turn and the next: the end of the assistant message, the
    feedback user message and the next assistant header, from the chat template.

    ``sampled`` are the model's tokens of the turn just taken; when the last one is a special
    token (its end-of-turn marker) that the glue text begins with, that prefix is dropped.
    """
    tok = formatter.tokenizer
    history = [
        {"role": "assistant", "content": _PLACEHOLDER},
        {"role": "user", "content": message},
    ]
    rendered = tok.apply_chat_template(
        formatter.messages(problem, history), add_generation_prompt=True, tokenize=False
    )
    if not isinstance(rendered, str) or _PLACEHOLDER not in rendered:
        raise ValueError(
            "feedback_glue: the tokenizer's chat template did not render the assistant "
            "message verbatim; multi-turn episodes need a chat template that does"
        )
    glue_text = rendered[rendered.rindex(_PLACEHOLDER) + len(_PLACEHOLDER) :]
    if sampled:
        last = int(sampled[-1])
        special = set(getattr(tok, "all_special_ids", ()) or ())
        if last in special:
            marker = tok.decode([last], skip_special_tokens=False)
            if marker and glue_text.startswith(marker):
                glue_text = glue_text[len(marker) :]
    return [int(t) for t in tok.encode(glue_text, add_special_tokens=False)]


# ---- metrics -------------------------------------------------------------------------------
def episode_metrics(
    rollouts: Sequence[Rollout], tau: float, episode_tokens: int, extra_tokens: int
) -> dict[str, float]:
    """The collector's step metrics from finished episodes (see :class:`MultiTurn`)."""
    if not rollouts:
        return {}
    by_group: dict[int, list[bool]] = {}
    success_turns: list[int] = []
    regressions = 0
    first_ok = 0
    cf_turns = cf_vary = 0
    for r in rollouts:
        scores = [t.score for t in r.turns]
        hits = [k for k, s in enumerate(scores) if s >= tau]
        by_group.setdefault(r.group, []).append(bool(hits))
        if hits:
            success_turns.append(hits[0] + 1)
            if any(s < tau for s in scores[hits[0] + 1 :]):
                regressions += 1
        first_ok += bool(scores) and scores[0] >= tau
        for t in r.turns:
            if t.alt_scores:
                cf_turns += 1
                cf_vary += len(set(t.alt_scores)) > 1
    n = len(rollouts)
    total_tokens = episode_tokens + extra_tokens
    return {
        "best_turn_pass_at_k": sum(any(v) for v in by_group.values()) / len(by_group),
        "best_turn_accuracy": len(success_turns) / n,
        "first_turn_accuracy": first_ok / n,
        "turns_to_success": (
            sum(success_turns) / len(success_turns) if success_turns else math.nan
        ),
        "mean_turns": sum(len(r.turns) for r in rollouts) / n,
        "regression_rate": regressions / len(success_turns) if success_turns else math.nan,
        "cf_turns": float(cf_turns),
        "cf_applicable_share": cf_vary / cf_turns if cf_turns else 0.0,
        "cf_extra_token_share": extra_tokens / total_tokens if total_tokens else 0.0,
    }
