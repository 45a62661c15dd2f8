"""verirl's scorers as TRL reward functions.

TRL 1.16 calls every ``reward_funcs`` entry as ``f(prompts, completions, completion_ids,
**kwargs) -> list[float | None]``; ``kwargs`` hold the dataset's other columns (one value per
completion), ``trainer_state``, ``log_extra`` and ``log_metric``. ``None`` means "this reward
does not apply to that row" (TRL then leaves the function out of that row's sum).

- :class:`EnvReward`: the environment's verifier (RLVE, Zeng et al. 2025, arXiv:2511.07317:
  −1 wrong format, −0.5 invalid answer, partial credit in [0, 1] otherwise), every completion
  of the call verified in one :class:`~verirl.verification.batch.BatchVerifier` call (the
  executor's per-call deadline; proof environments through their checker pool). It feeds
  ``Verdict.correct`` to the curriculum, as RLVE adapts on full correctness, not the graded
  reward.
- :class:`PolicyReward`: CER (Xiao, Xu, Cao 2026, arXiv:2603.10624, Eqs. 4–5) or Rule+CER,
  scored by the policy being trained; :class:`~verirl.integrations.trl.callback.VerirlCallback`
  hands it the trainer's model at the start of training.

Groups: TRL places a prompt's G completions next to each other; completions with the same
problem and prompt form one CER group. With several processes TRL spreads a group over them,
so each process's CER then uses its own share of the group's solutions (a smaller M).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from verirl.curriculum import Curriculum, Outcome
from verirl.errors import UserInputError
from verirl.integrations.problems import CurriculumFeedback, ProblemStore
from verirl.types import Problem, Rollout, Verdict
from verirl.verification.batch import BatchVerifier

FINAL_REWARD_KEY = "verirl_final_reward"
FINAL_CORRECT_KEY = "verirl_final_correct"
"""Columns a :class:`~verirl.integrations.trl.multiturn.MultiTurnRollout` adds: the final
turn's verdict, already computed by the episode's verifier calls."""


def completion_texts(completions: Sequence[Any]) -> list[str]:
    """The text of each completion: plain strings, or TRL's conversational form (a list of
    messages; the assistant contents joined)."""
    out = []
    for c in completions:
        if isinstance(c, str):
            out.append(c)
        elif isinstance(c, list):
            out.append("".join(str(m.get("content") or "") for m in c if isinstance(m, dict)))
        else:
            raise UserInputError(
                f"reward function got a completion of type {type(c).__name__}; TRL passes "
                "strings or lists of messages"
            )
    return out


class EnvReward:
    """``reward_funcs`` entry: RLVE's graded environment reward; see the module docstring.

    ``curriculum``: updated with every verified completion's fully-correct flag (all ranks'
    outcomes gathered under torch.distributed). ``verifier``: the batched verification stage
    (default: inline, 10 s per verification). ``store``: share it with the
    :class:`~verirl.integrations.trl.data.CurriculumDataset` so problems are not regenerated.
    Rows without verirl's identity columns get ``None``. ``last`` keeps the last call's
    ``(problem, text, verdict)`` triples (tests, logging).
    """

    def __init__(
        self,
        curriculum: Curriculum | None = None,
        verifier: BatchVerifier | None = None,
        store: ProblemStore | None = None,
        *,
        distributed: bool = True,
    ) -> None:
        self.curriculum = curriculum
        self.feedback = CurriculumFeedback(curriculum, distributed) if curriculum else None
        self.verifier = verifier or BatchVerifier()
        self.store = store or ProblemStore()
        self.last: list[tuple[Problem, str, Verdict]] = []
        self.__name__ = "verirl_env"

    def __call__(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        completion_ids: Sequence[Sequence[int]] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        n = len(completions)
        problems = self.store.from_columns(kwargs, n)
        texts = completion_texts(completions)
        idx = [i for i, p in enumerate(problems) if p is not None]
        known = [p for p in problems if p is not None]
        verdicts = self._verdicts(known, [texts[i] for i in idx], idx, kwargs)
        rewards: list[float | None] = [None] * n
        self.last = []
        outcomes = []
        for i, problem, verdict in zip(idx, known, verdicts, strict=True):
            rewards[i] = float(verdict.reward)
            self.last.append((problem, texts[i], verdict))
            outcomes.append(Outcome(problem.env, problem.difficulty, bool(verdict.correct)))
        if self.feedback is not None:
            self.feedback.apply(outcomes)
        _log(kwargs, self._metrics(verdicts))
        return rewards

    def _verdicts(
        self, problems: list[Problem], texts: list[str], idx: list[int], kwargs: dict[str, Any]
    ) -> list[Verdict]:
        if FINAL_REWARD_KEY in kwargs:  # multi-turn: the episode's final verdict
            return [
                Verdict(float(kwargs[FINAL_REWARD_KEY][i]), bool(kwargs[FINAL_CORRECT_KEY][i]))
                for i in idx
            ]
        out = self.verifier.verify(problems, texts)
        return [v for v in out if v is not None]

    def _metrics(self, verdicts: Sequence[Verdict]) -> dict[str, float]:
        out: dict[str, float] = {}
        if verdicts:
            out["verirl/accuracy"] = sum(v.correct for v in verdicts) / len(verdicts)
        if self.curriculum is not None:
            m = self.curriculum.metrics()
            out.update({k: m[k] for k in ("curriculum/mean_h", "curriculum/max_h") if k in m})
        return out


class PolicyReward:
    """``reward_funcs`` entry: a policy-scored verirl reward source — ``"cer"`` (CER,
    arXiv:2603.10624) or ``"rule_cer"`` — with its parameters (``CERParams`` /
    ``RuleCERParams`` fields, e.g. ``{"n_samples": 8}``).

    The reference answer comes from the row's verirl problem or, for a free-form dataset, its
    ``answer`` column. The policy (``model``, ``tokenizer``) is set by :meth:`bind`, which
    :class:`~verirl.integrations.trl.callback.VerirlCallback` calls with the trainer's model
    at the start of training; scoring runs under ``no_grad`` with the model in eval mode, so
    the reward is detached (CER Eqs. 6–7). Prompt token ids are rebuilt with the tokenizer's
    chat template (as TRL tokenizes conversational prompts). The model must be whole on this
    process: tested on one process; DDP should work the same way (untested); FSDP and
    DeepSpeed ZeRO-3 shard the weights and do not.
    """

    def __init__(
        self,
        name: str = "cer",
        params: dict[str, Any] | None = None,
        *,
        verifier: BatchVerifier | None = None,
        store: ProblemStore | None = None,
        chat_template_kwargs: dict[str, Any] | None = None,
    ) -> None:
        from verirl.rewards.base import REWARDS

        if name not in ("cer", "rule_cer"):
            raise UserInputError(f"PolicyReward name must be 'cer' or 'rule_cer', got {name!r}")
        self.name = name
        self.source = REWARDS.get(name).build(params or {})
        self.verifier = verifier or BatchVerifier()
        self.store = store or ProblemStore()
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        self.model: Any = None
        self.tokenizer: Any = None
        self.last: list[Verdict] = []
        self.__name__ = f"verirl_{name}"

    needs_policy = True

    def bind(self, model: Any, tokenizer: Any) -> None:
        """Score with ``model`` (the policy being trained) and ``tokenizer`` from now on."""
        self.model = model
        self.tokenizer = getattr(tokenizer, "tokenizer", tokenizer)  # a processor's tokenizer

    def __call__(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        completion_ids: Sequence[Sequence[int]] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        from verirl.rewards.base import RewardContext

        if self.model is None or self.tokenizer is None:
            raise UserInputError(
                f"{self.__name__} has no policy to score with: pass VerirlCallback(rewards=[...]) "
                "to the trainer's callbacks, or call .bind(model, tokenizer)"
            )
        n = len(completions)
        texts = completion_texts(completions)
        problems = self._problems(prompts, kwargs, n)
        ids = completion_ids or [self.tokenizer.encode(t, add_special_tokens=False) for t in texts]
        prompt_ids: dict[int, tuple[int, ...]] = {}
        groups: dict[tuple[object, ...], int] = {}
        rollouts = []
        for i in range(n):
            pid = prompt_ids.setdefault(id(prompts[i]), self._prompt_ids(prompts[i]))
            pb = problems[i]
            key = (pb.env, pb.difficulty, pb.seed, pb.prompt, pb.answer, pid)
            gid = groups.setdefault(key, len(groups))
            resp = tuple(int(t) for t in ids[i])
            rollouts.append(
                Rollout(problems[i], gid, pid, resp, (0.0,) * len(resp), texts[i], "stop")
            )
        ctx = RewardContext(tokenizer=self.tokenizer, model=self.model, verifier=self.verifier)
        self.last = self.source.score(rollouts, ctx)
        _log(kwargs, self.source.metrics())
        return [float(v.reward) for v in self.last]

    def _problems(self, prompts: Sequence[Any], kwargs: dict[str, Any], n: int) -> list[Problem]:
        known = self.store.from_columns(kwargs, n)
        answers = kwargs.get("answer")
        out = []
        for i, p in enumerate(known):
            if p is not None:
                out.append(p)
                continue
            if answers is None or answers[i] is None:
                raise UserInputError(
                    f"{self.__name__}: row {i} has neither verirl identity columns nor an "
                    "'answer' column; CER needs the reference answer"
                )
            text = prompts[i] if isinstance(prompts[i], str) else repr(prompts[i])
            out.append(Problem(env="trl", difficulty=0, seed=0, prompt=text, answer=answers[i]))
        return out

    def _prompt_ids(self, prompt: Any) -> tuple[int, ...]:
        if isinstance(prompt, str):
            out = self.tokenizer.encode(prompt, add_special_tokens=False)
        else:
            out = self.tokenizer.apply_chat_template(
                list(prompt),
                add_generation_prompt=True,
                tokenize=True,
                return_dict=False,
                **self.chat_template_kwargs,
            )
            if isinstance(out, dict) or hasattr(out, "keys"):
                out = out["input_ids"]
        return tuple(int(t) for t in out)


def _log(kwargs: dict[str, Any], metrics: dict[str, float]) -> None:
    log_metric: Callable[[str, float], None] | None = kwargs.get("log_metric")
    if log_metric is None:
        return
    for k, v in metrics.items():
        log_metric(k, float(v))
