"""How an environment wants its final answer written: ``\\boxed{}``, a tagged span, a fenced
code block, or tool calls in the model's own format (a tool environment).

Each environment declares one :class:`AnswerFormat` (``Environment.answer_format``). The
prompt builder (:mod:`verirl.rollout.prompts`) reads it so that the system message, the
instruction and the few-shot demonstration never contradict the environment: a Coq theorem
asks for a ```` ```coq ```` block, an arithmetic task for ``\\boxed{}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Style = Literal["boxed", "tagged", "code", "tools"]


@dataclass(frozen=True)
class AnswerFormat:
    """The answer format: ``style`` is ``"boxed"`` (``\\boxed{...}``), ``"tagged"``
    (``<answer>...</answer>``), ``"code"`` (a fenced block in ``language``) or ``"tools"``
    (tool calls, written in the model family's format; the verifier reads the canonical
    transcript of :mod:`verirl.tools.calls`)."""

    style: Style = "boxed"
    language: str = ""

    def __post_init__(self) -> None:
        if self.style not in ("boxed", "tagged", "code", "tools"):
            raise ValueError(
                f"answer format style must be boxed, tagged, code or tools: {self.style!r}"
            )
        if self.style == "code" and not self.language:
            raise ValueError("a code answer format names its language, e.g. code_block('coq')")

    def render(self, answer: str) -> str:
        """``answer`` written the way this format asks for it (what a model should emit)."""
        if self.style == "boxed":
            return f"\\boxed{{{answer}}}"
        if self.style == "tagged":
            return f"<answer>{answer}</answer>"
        if self.style == "tools":
            return answer
        if answer.lstrip().startswith("```"):
            return answer
        return f"```{self.language}\n{answer.strip()}\n```"

    @property
    def instruction(self) -> str:
        """One sentence that asks for this format (appended to prompts)."""
        if self.style == "boxed":
            return "Put your final answer within \\boxed{}."
        if self.style == "tagged":
            return "Put your final answer between <answer> and </answer>."
        if self.style == "tools":
            return "Use the tools; reply without a tool call once you are done."
        return f"Write your final answer in a ```{self.language} code block."

    @property
    def description(self) -> str:
        """A noun phrase for system messages: "the final answer in \\boxed{}"."""
        if self.style == "boxed":
            return "the final answer in \\boxed{}"
        if self.style == "tagged":
            return "the final answer between <answer> and </answer>"
        if self.style == "tools":
            return "tool calls"
        return f"the final answer in a ```{self.language} code block"


BOXED = AnswerFormat("boxed")
TAGGED = AnswerFormat("tagged")


TOOLS = AnswerFormat("tools")


def code_block(language: str) -> AnswerFormat:
    """The fenced-code-block format for ``language`` (e.g. ``code_block("coq")``)."""
    return AnswerFormat("code", language)
