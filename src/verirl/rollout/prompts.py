"""Problems → chat messages → prompt token ids (the model's chat template applied).

The answer format follows the environment: each environment declares
``answer_format`` (:mod:`verirl.envs.reading.formats`), and a system message or few-shot
demonstration written for ``\\boxed{}`` is adapted (system message) or left out (boxed
examples) for an environment that wants another format, such as a ```` ```coq ```` block,
so that no prompt contradicts its environment. Boxed environments get exactly the
configured prompt, as before.

Optional variation (``system_variants``, ``zero_shot_rate``): the system message is drawn
from several phrasings and the few-shot demonstration is sometimes left out, so the format
skill is not tied to one prompt. The draw is a pure function of the problem's
(env, difficulty, seed), so every sample of a group shares one prompt.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from verirl.envs.reading.formats import BOXED, AnswerFormat
from verirl.types import Problem

BOXED_PHRASE = "the final answer in \\boxed{}"
SYSTEM_VARIANTS: tuple[str, ...] = (
    "Solve the task. End your reply with {answer}.",
    "Think step by step, then give {answer}.",
    "You are a careful problem solver. Show your work briefly and finish with {answer}.",
    "Answer the question. Write {answer}.",
)
"""Phrasings for ``system_variants``; ``{answer}`` becomes the format's description."""


def answer_format_of(problem: Problem) -> AnswerFormat:
    """The answer format the problem's environment declares (``\\boxed{}`` when the env is
    not a registered environment, e.g. a dataset row)."""
    from verirl.envs import ENVIRONMENTS, is_env

    if is_env(problem.env):
        return ENVIRONMENTS.get(problem.env).part.answer_format
    return BOXED


def _unit(problem: Problem, salt: str) -> float:
    """A number in [0, 1) fixed by the problem's identity (same in every process)."""
    key = f"verirl/prompt/{salt}/{problem.env}/{problem.difficulty}/{problem.seed}"
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") / 2**64


Message = dict[str, Any]


@dataclass(frozen=True)
class PromptFormatter:
    """Builds the chat for a problem and tokenizes it with the tokenizer's chat template.

    ``system`` is the system message; ``None`` keeps the template's default (SmolLM2's
    template inserts its own). ``examples`` are (user, assistant) pairs shown before the
    problem as earlier turns of the chat: a few-shot demonstration of the answer format.
    Multi-turn callers pass the conversation so far as ``history``: alternating assistant /
    user messages after the problem's user message. ``system_variants`` (e.g.
    :data:`SYSTEM_VARIANTS`) and ``zero_shot_rate`` turn on prompt variation (module
    docstring); the defaults keep one fixed prompt. Tool episodes render with their own
    ``chat_template`` (``None``: the tokenizer's) and pass the tools' schemas and a worked
    example (``demonstration``: chat messages, shown before the problem) to :meth:`encode`.
    """

    tokenizer: Any
    system: str | None = None
    examples: tuple[tuple[str, str], ...] = ()
    system_variants: tuple[str, ...] = ()
    zero_shot_rate: float = 0.0
    chat_template: str | None = None

    def __post_init__(self) -> None:
        if not 0.0 <= self.zero_shot_rate <= 1.0:
            raise ValueError(f"zero_shot_rate must be in [0, 1], got {self.zero_shot_rate}")

    def system_message(self, problem: Problem) -> str | None:
        """The system message for ``problem``, in the answer format its environment wants."""
        fmt = answer_format_of(problem)
        system = self.system
        if self.system_variants:
            pick = self.system_variants[int(_unit(problem, "system") * len(self.system_variants))]
            system = pick.format(answer=fmt.description)
        if system is None or fmt == BOXED:
            return system
        if fmt.style == "tools":  # the chat template's tool block says how to call them
            return None if "\\boxed" in system else system
        if BOXED_PHRASE in system:
            return system.replace(BOXED_PHRASE, fmt.description)
        if "\\boxed" in system:  # some other wording that asks for \boxed{}
            return f"Solve the task. End your reply with {fmt.description}."
        return system

    def demonstrations(self, problem: Problem) -> tuple[tuple[str, str], ...]:
        """The few-shot pairs for ``problem``: none when drawn zero-shot, and none written in
        ``\\boxed{}`` for an environment that wants another format."""
        if self.zero_shot_rate and _unit(problem, "zero-shot") < self.zero_shot_rate:
            return ()
        if answer_format_of(problem) == BOXED:
            return self.examples
        return tuple((u, a) for u, a in self.examples if "\\boxed" not in u + a)

    def messages(
        self,
        problem: Problem,
        history: Sequence[Message] = (),
        demonstration: Sequence[Message] = (),
    ) -> list[Message]:
        msgs: list[Message] = []
        system = self.system_message(problem)
        if system is not None:
            msgs.append({"role": "system", "content": system})
        for user, assistant in self.demonstrations(problem):  # few-shot format demonstrations
            msgs.append({"role": "user", "content": user})
            msgs.append({"role": "assistant", "content": assistant})
        msgs.extend(demonstration)
        msgs.append({"role": "user", "content": problem.prompt})
        msgs.extend(history)
        return msgs

    def encode_messages(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None
    ) -> list[int]:
        """Token ids of ``messages`` followed by the assistant generation prompt (the tools'
        schemas rendered by the chat template when given)."""
        out = self.tokenizer.apply_chat_template(
            list(messages),
            tools=list(tools) if tools else None,
            chat_template=self.chat_template,
            add_generation_prompt=True,
            tokenize=True,
            return_dict=False,
        )
        if isinstance(out, dict) or hasattr(out, "keys"):
            out = out["input_ids"]
        return [int(t) for t in out]

    def encode(
        self,
        problem: Problem,
        history: Sequence[Message] = (),
        tools: Sequence[dict[str, Any]] | None = None,
        demonstration: Sequence[Message] = (),
    ) -> list[int]:
        return self.encode_messages(self.messages(problem, history, demonstration), tools)
