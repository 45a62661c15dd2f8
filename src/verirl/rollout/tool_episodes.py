"""Tool episodes in the model's own language: collector ``tool_calls``.

The tools reach the model through its chat template (``apply_chat_template(tools=...)``);
each reply is read by its family's parser and answered by :class:`~verirl.tools.ToolSession`
(the turn logic every path shares)::

    prompt(tools) ▸ reply 1 ▸ tool results ▸ reply 2 ▸ tool results ▸ … ▸ final reply

An episode ends at a reply without a call (the final answer), after ``max_turns`` replies,
or (``stop_on_success``) at the first turn that reaches the success threshold.

Token bookkeeping (one :class:`~verirl.types.Rollout` per episode), as the ``multi_turn``
collector keeps it: ``response_ids`` are the sampled tokens of every reply *verbatim* with the
glue between replies (tool results and the next assistant header, from the chat template:
:mod:`verirl.tools.bridge`); ``loss_mask`` is 1 on the model's tokens and 0 on the glue;
``logprobs`` are the behaviour log-probs (0.0 on the glue); ``turns`` hold each reply's token
span, its text, its score and its verdict. Nothing the model wrote is ever re-encoded.

Before the first episode the chat template is checked for this episode shape
(:func:`~verirl.tools.template_check.check_tool_template`); a template that is not
prefix-preserving is refused with one line naming the fix, or with ``template_check: warn``
trained with the bridge's stated fallback (the metric ``tools/fallback_glue`` counts its
uses).

Scoring: every round of replies is one call of the run's reward stage. A tool environment
(``Environment.toolset``; ``stateful``) is given the canonical transcript of the calls so far
(:mod:`verirl.tools.calls`) and replays them; any other environment (with tools from
``toolsets``, e.g. arithmetic with a ``calculator``) is given the reply's text and verifies
its final answer. The turn score r ∈ [0, 1] comes from the verdict by ``score_map`` (as in
``multi_turn``), so TCPO's turn-level credit (and the counterfactual, ``counterfactual:
true``) applies to tool episodes unchanged: TCPO, Liao et al. 2026, arXiv:2608.01667, whose
third domain is a tool-using agent (AppWorld).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from verirl.envs import ENVIRONMENTS, TURN_SEPARATOR, get_env
from verirl.errors import UserInputError
from verirl.rollout.base import Generation, RolloutEngine
from verirl.rollout.collect import COLLECTORS, Collector, Scorer
from verirl.rollout.multiturn import (
    ScoreMap,
    episode_metrics,
    episode_verdict,
    mean_nll,
    select_counterfactual_turns,
    turn_score,
)
from verirl.rollout.prompts import PromptFormatter
from verirl.tools.bridge import ChatRenderer
from verirl.tools.calls import ParsedReply, encode_transcript
from verirl.tools.episode import TokenEpisode
from verirl.tools.formats import ToolFormat, get_format
from verirl.tools.session import ToolSession, TurnOutcome
from verirl.tools.template_check import TemplateReport, check_tool_template, stop_token
from verirl.tools.templates import resolve_tool_template
from verirl.tools.toolset import Toolset, build_toolset
from verirl.tools.typed import ToolLimits
from verirl.types import FinishReason, Problem, Rollout, SamplingParams, Turn, Verdict

logger = logging.getLogger(__name__)
_ANY_FORMAT = get_format("hermes")  # for a session that only lists its tools' schemas
Message = dict[str, Any]


class ToolsetSpec(BaseModel):
    """A registered toolset offered in every episode, with its parameters."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(..., description="A registered toolset: calculator, python, mcp, ...")
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="Its parameters, e.g. {server: http://127.0.0.1:8000/mcp} for mcp.",
    )


class ToolCallsParams(BaseModel):
    """Parameters of the ``tool_calls`` collector (tool episodes in the model's own format)."""

    model_config = ConfigDict(extra="forbid")

    max_turns: int = Field(
        4, ge=1, description="Most model replies per episode (each may hold several calls)."
    )
    format: str = Field(
        "auto",
        description="The tool-call format (parser): hermes, chatml_tools, llama3_json, "
        "mistral; auto detects it from the chat template.",
    )
    chat_template: str | None = Field(
        None,
        description="The chat template tool episodes render with: a project template "
        "(chatml_tools), a .jinja path, or None: the tokenizer's own when it renders tools, "
        "chatml_tools for a ChatML model without tool support (SmolLM2).",
    )
    template_check: Literal["refuse", "warn"] = Field(
        "refuse",
        description="A template that is not prefix-preserving for tool episodes: refuse "
        "(one line naming the fix), or warn and bridge with the stated fallback.",
    )
    stop_token: str | None = Field(
        None, description="The token ending an assistant turn; None: the tokenizer's EOS."
    )
    toolsets: list[ToolsetSpec] = Field(
        default_factory=list,
        description="Registered toolsets offered in every episode besides the environment's "
        "own (e.g. [{name: calculator}] for arithmetic, [{name: mcp, params: {server: URL}}]).",
    )
    demonstration: bool = Field(
        True,
        description="Show the toolsets' worked example (one call, in the model's own format) "
        "before the task: a small model rarely writes its family's format unprompted.",
    )
    tool_timeout_s: float = Field(5.0, gt=0, description="Wall-time bound of one call.")
    max_output_chars: int = Field(
        1000, ge=16, description="Observation bound: a longer result is cut, with a note."
    )
    max_context_tokens: int = Field(
        4096,
        ge=64,
        description="End an episode when its context plus max_new_tokens would pass this.",
    )
    success_threshold: float = Field(
        1.0, description="τ: a turn succeeds when its score r ≥ τ (keep equal to tcpo's tau)."
    )
    score_map: ScoreMap = Field(
        "affine",
        description="Turn score from the verdict on the episode so far: correct (0/1), clip "
        "(max(reward, 0)), affine ((reward + 1) / 2, so a readable call that meets no goal "
        "(reward 0) scores above an unreadable one (reward -1)).",
    )
    stop_on_success: bool = Field(
        False,
        description="End at the first successful turn. False: the episode ends when the "
        "model replies without a call (TRL's and verl's agent loops end there too), so "
        "regressions after success are seen.",
    )
    counterfactual: bool = Field(
        False, description="Draw TCPO's fixed-history alternatives for the surprising turns."
    )
    cf_top_l: int = Field(10, ge=0, description="L: turns that get alternatives (paper: 10).")
    cf_alternatives: int = Field(4, ge=1, description="M: alternatives per chosen turn.")
    cf_temperature: float | None = Field(
        None, ge=0, description="Their temperature; None: the episodes' own."
    )


@dataclass(frozen=True)
class ToolSetup:
    """What a tokenizer's tool episodes render and read with."""

    template: str
    fmt: ToolFormat
    stop: str
    stop_id: int
    report: TemplateReport


@dataclass
class _Episode:
    problem: Problem
    group: int
    tokens: TokenEpisode
    session: ToolSession
    turns: list[Turn] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    outcomes: list[TurnOutcome] = field(default_factory=list)
    finish: FinishReason = "length"
    done: bool = False

    def context(self) -> list[int]:
        return self.tokens.context()


@COLLECTORS.register("tool_calls", ToolCallsParams)
class ToolCalls(Collector):
    """Tool episodes, all of a batch in lock-step (module docstring). ``metrics()`` adds to
    ``multi_turn``'s episode metrics: ``tools/readable_rate`` (replies the parser read),
    ``tools/wellformed_rate`` (replies with at least one call, every call to a known tool
    with arguments of the right types), ``tools/calls_per_turn``, ``tools/refused_call_rate``
    (calls refused: unknown tool, bad arguments), ``tools/tool_error_rate`` (calls that ran
    and failed), ``tools/final_reply_rate`` (episodes ended by a reply without a call) and
    ``tools/fallback_glue``."""

    params: ToolCallsParams

    def __init__(self, params: BaseModel) -> None:
        if not isinstance(params, ToolCallsParams):
            raise TypeError(f"tool_calls needs ToolCallsParams, got {type(params).__name__}")
        super().__init__(params)
        self._setups: dict[int, ToolSetup] = {}
        self._metrics: dict[str, float] = {}
        self._fallbacks = 0
        self.limits = ToolLimits(params.tool_timeout_s, params.max_output_chars)

    def produces(self) -> frozenset[str]:
        return frozenset({"turns", "counterfactual"} if self.params.counterfactual else {"turns"})

    def for_evaluation(self) -> ToolCalls:
        """The same episodes without counterfactual alternatives (the template checked
        once: the setups are shared)."""
        evaluation = ToolCalls(self.params.model_copy(update={"counterfactual": False}))
        evaluation._setups = self._setups
        return evaluation

    def metrics(self) -> dict[str, float]:
        return dict(self._metrics)

    # ---- setup ----------------------------------------------------------------------------
    def setup(self, tokenizer: Any, tools: Sequence[dict[str, Any]] = ()) -> ToolSetup:
        """The template, format and stop token for ``tokenizer``, checked once (refused, or
        warned about, per ``template_check``)."""
        key = id(tokenizer)
        if key not in self._setups:  # checked with the first problem's tools
            p = self.params
            template, fmt = resolve_tool_template(tokenizer, p.format, p.chat_template)
            stop, stop_id = stop_token(tokenizer, p.stop_token)
            report = check_tool_template(tokenizer, fmt, template, tools=tools, stop=stop)
            if not report.preserving:
                if p.template_check == "refuse":
                    raise report.refusal()
                logger.warning("%s; training with the fallback bridge", report.summary())
            else:
                logger.info("tool episodes: %s", report.summary())
            self._setups[key] = ToolSetup(template, fmt, stop, stop_id, report)
        return self._setups[key]

    def session(self, problem: Problem, fmt: ToolFormat) -> ToolSession:
        """The tools of one episode of ``problem``: its environment's toolset and the
        configured ones."""
        return ToolSession(self.toolsets(problem), fmt, self.limits)

    def toolsets(self, problem: Problem) -> list[Toolset]:
        """Fresh toolsets for one episode of ``problem`` (refused when there are none)."""
        toolsets: list[Toolset] = []
        if problem.env in ENVIRONMENTS:
            env = get_env(problem.env)
            if env.toolset is not None:
                toolsets.append(build_toolset(env.toolset, env.toolset_params(problem)))
        toolsets += [build_toolset(s.name, s.params) for s in self.params.toolsets]
        if not toolsets:
            raise UserInputError(
                f"environment {problem.env!r} has no toolset: the tool_calls collector needs a "
                "tool environment (tool_world) or toolsets (e.g. [{name: calculator}])"
            )
        return toolsets

    # ---- the episode loop -----------------------------------------------------------------
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
        self._fallbacks = 0
        tok = formatter.tokenizer
        sessions: list[list[ToolSession]] = []
        episodes: list[_Episode] = []
        try:
            for problem in problems:  # the episodes' own tools, one set per sample
                toolsets = [self.toolsets(problem) for _ in range(sampling.n)]
                if not sessions:
                    self.setup(tok, ToolSession(toolsets[0], _ANY_FORMAT).schemas())
                sessions.append(
                    [ToolSession(t, self.setup(tok).fmt, self.limits) for t in toolsets]
                )
            setup = self.setup(tok)
            warn = p.template_check == "warn"
            prompts = []
            for i, (problem, group) in enumerate(zip(problems, sessions, strict=True)):
                demo = group[0].demonstration() if p.demonstration else []
                renderer = ChatRenderer(tok, setup.template, tuple(group[0].schemas()))
                messages = formatter.messages(problem, demonstration=demo)
                prompt = tuple(renderer.ids(messages, True))
                prompts.append(list(prompt))
                episodes += [
                    _Episode(
                        problem,
                        first_group + i,
                        TokenEpisode(
                            renderer, list(messages), setup.stop, setup.stop_id, warn, prompt
                        ),
                        s,
                    )
                    for s in group
                ]
            generations = engine.generate(prompts, sampling)
            if len(generations) != len(problems) or any(len(g) != sampling.n for g in generations):
                raise RuntimeError(
                    f"engine returned {len(generations)} groups for {len(problems)} prompts"
                )
            first = [g for group in generations for g in group]
            self._round(episodes, first, setup, sampling, score)
            later = dataclasses.replace(sampling, n=1, seed=None)  # seed only the first call
            for _ in range(2, p.max_turns + 1):
                live = [ep for ep in episodes if not ep.done]
                if not live:
                    break
                gens = engine.generate([ep.context() for ep in live], later)
                self._round(live, [g[0] for g in gens], setup, sampling, score)
            cf_started = time.perf_counter()
            extra = 0
            if p.counterfactual and p.cf_top_l > 0:
                extra = self._counterfactual(episodes, engine, sampling, setup, score)
        finally:
            for group in sessions:
                for s in group:
                    s.close()
        finished = time.perf_counter()
        rollouts = [self._to_rollout(ep) for ep in episodes]
        self._metrics = episode_metrics(
            rollouts, p.success_threshold, sum(sum(ep.tokens.mask) for ep in episodes), extra
        )
        self._metrics.update(tool_metrics(episodes, self._fallbacks))
        self._metrics["episode_seconds"] = cf_started - started
        self._metrics["cf_seconds"] = finished - cf_started
        return rollouts

    def _round(
        self,
        episodes: Sequence[_Episode],
        gens: Sequence[Generation],
        setup: ToolSetup,
        sampling: SamplingParams,
        score: Scorer,
    ) -> None:
        """Take one reply of each episode: read and answer it, score the round together
        (one reward-stage call), record it, and bridge to the next reply."""
        tok = episodes[0].tokens.renderer.tokenizer if episodes else None
        outcomes = []
        batch = []
        for ep, gen in zip(episodes, gens, strict=True):
            if len(gen.logprobs) != len(gen.token_ids):
                raise RuntimeError(
                    f"engine returned {len(gen.logprobs)} log-probs for {len(gen.token_ids)} tokens"
                )
            outcome = ep.session.take_turn(reply_text(tok, gen.token_ids, setup.stop_id))
            outcomes.append(outcome)
            batch.append(_turn_rollout(ep, gen, scored_text(ep.problem, ep.session)))
        scored = score(batch)
        for ep, gen, outcome, r in zip(episodes, gens, outcomes, scored, strict=True):
            assert r.verdict is not None
            self._record(ep, gen, outcome, r.verdict, setup, sampling)

    def _record(
        self,
        ep: _Episode,
        gen: Generation,
        outcome: TurnOutcome,
        verdict: Verdict,
        setup: ToolSetup,
        sampling: SamplingParams,
    ) -> None:
        p = self.params
        start = ep.tokens.add_turn(gen.token_ids, gen.logprobs)
        r = turn_score(verdict, p.score_map)
        ep.turns.append(
            Turn(
                start=start,
                end=len(ep.tokens.response),
                text=gen.text,
                score=r,
                correct=verdict.correct,
                feedback=outcome.observation[:2000],
                nll=mean_nll(gen.logprobs),
            )
        )
        ep.verdicts.append(verdict)
        ep.outcomes.append(outcome)
        ep.finish = gen.finish_reason
        assistant = outcome.reply.message(gen.text)
        too_long = len(ep.context()) + sampling.max_new_tokens
        if (
            outcome.final
            or len(ep.turns) >= p.max_turns
            or (p.stop_on_success and r >= p.success_threshold)
            or too_long > p.max_context_tokens
        ):
            ep.done = True
            ep.tokens.close_turn(assistant)
            return
        before = ep.tokens.fallbacks
        if not ep.tokens.close_turn(assistant, outcome.messages):
            ep.done = True  # no glue can be built: the episode ends here
        self._fallbacks += ep.tokens.fallbacks - before

    # ---- counterfactual ---------------------------------------------------------------------
    def _counterfactual(
        self,
        episodes: list[_Episode],
        engine: RolloutEngine,
        sampling: SamplingParams,
        setup: ToolSetup,
        score: Scorer,
    ) -> int:
        """TCPO's fixed-history alternatives for the top-L surprising non-improving turns
        (as ``multi_turn``): each alternative reply is read by the format's parser and scored
        with the episode's earlier turns (the verifier replays them; no tool runs)."""
        p = self.params
        tok = episodes[0].tokens.renderer.tokenizer
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
            [*episodes[e].tokens.prompt, *episodes[e].tokens.response[: episodes[e].turns[k].start]]
            for e, k in chosen
        ]
        generations = engine.generate(histories, alt_sampling)
        batch = []
        for c, ((e, k), history, group) in enumerate(
            zip(chosen, histories, generations, strict=True)
        ):
            ep = episodes[e]
            earlier = [o.reply for o in ep.outcomes[:k]]
            for g in group:
                alt = setup.fmt.parse(reply_text(tok, g.token_ids, setup.stop_id))
                text = _scored_text(ep.problem, ep.session, [*earlier, alt])
                batch.append(
                    Rollout(ep.problem, -1 - c, tuple(history), tuple(g.token_ids),
                            tuple(g.logprobs), text, g.finish_reason)
                )  # fmt: skip
        scored = iter(score(batch))
        extra = 0
        for (e, k), group in zip(chosen, generations, strict=True):
            verdicts = [next(scored).verdict for _ in group]
            scores = tuple(turn_score(v, p.score_map) for v in verdicts if v is not None)
            extra += sum(len(g.token_ids) for g in group)
            episodes[e].turns[k] = dataclasses.replace(episodes[e].turns[k], alt_scores=scores)
        return extra

    def _to_rollout(self, ep: _Episode) -> Rollout:
        verdict = episode_verdict(
            ep.verdicts[-1],
            ep.turns,
            self.params.success_threshold,
            tool_calls=sum(len(o.reply.calls) for o in ep.outcomes),
        )
        t = ep.tokens
        return Rollout(
            problem=ep.problem,
            group=ep.group,
            prompt_ids=t.prompt,
            response_ids=tuple(t.response),
            logprobs=tuple(t.logprobs),
            text=ep.turns[-1].text,
            finish_reason=ep.finish,
            loss_mask=tuple(t.mask),
            turns=tuple(ep.turns),
            verdict=verdict,
        )


def reply_text(tokenizer: Any, token_ids: Sequence[int], stop_id: int) -> str:
    """The reply a parser reads: the sampled tokens decoded with special tokens kept (a
    family's call marker may be one), without the closing stop token."""
    ids = [int(t) for t in token_ids]
    if ids and ids[-1] == stop_id:
        ids = ids[:-1]
    return str(tokenizer.decode(ids, skip_special_tokens=False))


def scored_text(problem: Problem, session: ToolSession) -> str:
    """What the verifier scores after a turn (see :func:`_scored_text`)."""
    return _scored_text(problem, session, session.replies)


def _scored_text(problem: Problem, session: ToolSession, replies: Sequence[ParsedReply]) -> str:
    """A tool environment (stateful) verifies the canonical transcript of ``replies``; any
    other environment verifies the last reply's text (its final answer)."""
    stateful = problem.env in ENVIRONMENTS and get_env(problem.env).stateful
    if stateful:
        return encode_transcript(replies, TURN_SEPARATOR)
    last = replies[-1] if replies else ParsedReply(error="no reply")
    return last.content if last.error is None else ""


def _turn_rollout(ep: _Episode, gen: Generation, text: str) -> Rollout:
    return Rollout(
        problem=ep.problem,
        group=ep.group,
        prompt_ids=tuple(ep.context()),
        response_ids=tuple(gen.token_ids),
        logprobs=tuple(gen.logprobs),
        text=text,
        finish_reason=gen.finish_reason,
    )


def tool_metrics(episodes: Sequence[_Episode], fallbacks: int) -> dict[str, float]:
    """The ``tools/*`` metrics of finished episodes (see :class:`ToolCalls`)."""
    outcomes = [o for ep in episodes for o in ep.outcomes]
    if not outcomes:
        return {}
    results = [r for o in outcomes for r in o.results]
    refused = [r for r in results if r.refused]
    wellformed = [
        o
        for o in outcomes
        if o.reply.readable and o.reply.calls and not any(r.refused for r in o.results)
    ]
    n = len(outcomes)
    return {
        "tools/readable_rate": sum(o.reply.readable for o in outcomes) / n,
        "tools/wellformed_rate": len(wellformed) / n,
        "tools/calls_per_turn": sum(len(o.reply.calls) for o in outcomes) / n,
        "tools/refused_call_rate": len(refused) / len(results) if results else 0.0,
        "tools/tool_error_rate": (
            sum(not r.ok and not r.refused for r in results) / len(results) if results else 0.0
        ),
        "tools/final_reply_rate": sum(ep.outcomes[-1].final for ep in episodes if ep.outcomes)
        / len(episodes),
        "tools/fallback_glue": float(fallbacks),
    }
