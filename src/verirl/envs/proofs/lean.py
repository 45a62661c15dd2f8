"""Lean 4 theorem proving: whole-proof generation checked by Lean, with tactic spans for credit.

This is the setting of the process-verified proving paper (Kim & Yun 2026, "Process-Verified
Reinforcement Learning for Theorem Proving via Lean", arXiv:2606.20068): the model writes a
whole tactic proof; Lean checks it; each tactic before the first error gets d1 and the first
error and everything after it d2 (credit ``process``), on each tactic's first token.

``generate(difficulty, seed)`` picks one of the bundled core-Lean theorems
(:func:`verirl.provers.lean.theorems.bundled_lean_theorems`) whose grade is ``difficulty``;
grades above the hardest bundled one use the hardest (difficulty is unbounded). The prompt
shows the prelude (definitions) and the statement, ending in ``:= by``, and asks for the
tactic proof only (a non-CoT prompt, as in the paper).

**Output format.** The model writes its tactics in a fenced block::

    ```lean
      intro n
      induction n
      case zero => rfl
      case succ k ih =>
        simp only [dbl]
        omega
    ```

:func:`extract_lean_proof` takes the *last* fenced block tagged ``lean``/``lean4`` (or
untagged); an unclosed final fence (a truncated generation) runs to the end of the output.
When the block restates the theorem (after blank lines, comments and lines of the prelude),
the restated statement is skipped, up to whitespace, through its ``by``. The proof keeps its
layout (the newline before its first line included), so Lean's positions and the layout
splitter's tactics map back onto the output.

**Verdict.** Reward 1.0 when Lean accepts the proof, else 0.0 (no proof found, a cheat the
safety filter rejects such as ``sorry``/``native_decide``/``#eval``/new declarations, an
error, unsolved goals, a timeout); ``correct`` = passed; ``steps`` = tactic spans in the
coordinates of the full output; ``first_failed_step`` = the first failing tactic;
``extra["status"]`` is the checker's status (``pass``/``error``/``incomplete``/``timeout``/
``rejected``/``crash``) or ``format``. Outputs without a proof and rejected cheats never
reach Lean, so those verdicts need no Lean installation.

**Checker.** Training verifies a batch at once through :meth:`LeanProofs.verify_batch` with
the run's :class:`~verirl.provers.settings.Provers`, built from the ``provers.lean`` config:
``backend: repl`` with ``command`` (a leanprover-community/repl command line) or ``backend:
kimina`` with ``url`` (a Kimina Lean Server). A direct :meth:`LeanProofs.verify` outside a
run uses default settings (``$VERIRL_LEAN_REPL`` / ``$VERIRL_KIMINA_URL``), owned by the
environment instance. Without either, checking a proof raises a
:class:`~verirl.errors.UserInputError` that names those fields.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from verirl.envs.base import ENVIRONMENTS, Instance
from verirl.envs.proofs.proof_env import ProofEnvironment
from verirl.envs.reading.formats import AnswerFormat, code_block
from verirl.errors import UserInputError
from verirl.provers.bank import bundled_bank
from verirl.provers.base import FormalProblem, ProofChecker
from verirl.provers.lean.kimina import KiminaError
from verirl.provers.lean.repl import LeanReplError
from verirl.provers.lean.reply import plan_lean_check
from verirl.provers.lean.text import is_ident_char, mask_comments_and_strings
from verirl.provers.settings import Provers
from verirl.types import Problem, Span, Verdict

FORMAT_INSTRUCTION = (
    "Write only the tactic proof that follows `:= by`, in one ```lean code block, one tactic "
    "per line, indented by two spaces; do not restate the theorem. Use tactics only: no "
    "`sorry`, `admit`, `native_decide`, new declarations, `#` commands or `set_option`."
)

_FENCE_OPEN = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n`]*\n")
_LEAN_TAGS = {"", "lean", "lean4"}
_MAX_OUTPUT = 200_000
_FAILING_TACTIC = "fail"  # a core tactic that always fails


def _norm(text: str) -> str:
    return " ".join(text.split())


def extract_lean_proof(
    output: str, statement: str = "", prelude: str = ""
) -> tuple[str, int] | None:
    """``(proof_text, offset)`` with ``output[offset:offset + len(proof_text)] ==
    proof_text``, or None when the output holds no ```lean block with code in it (see the
    module docstring). The proof text is what follows the statement's ``by``."""
    if not isinstance(output, str) or len(output) > _MAX_OUTPUT:
        return None
    region = _last_fenced_block(output)
    if region is None:
        return None
    start, stop = region
    if not mask_comments_and_strings(output[start:stop]).strip():
        return None
    start = _skip_restated(output, start, stop, statement, prelude)
    text = output[start:stop].rstrip()
    if not text.strip():
        return None
    return text, start


def _last_fenced_block(output: str) -> tuple[int, int] | None:
    """``[start, stop)`` of the last lean-tagged block's content, starting at the newline
    that ends the opening fence (so the first line keeps its column)."""
    pos, found = 0, None
    while True:
        m = _FENCE_OPEN.search(output, pos)
        if m is None:
            return found
        close = output.find("```", m.end())
        stop = close if close >= 0 else len(output)
        if m.group(1).lower() in _LEAN_TAGS:
            found = (m.end() - 1, stop)
        if close < 0:
            return found
        pos = close + 3


def _skip_restated(output: str, start: int, stop: int, statement: str, prelude: str) -> int:
    """After blank lines, comments and prelude lines, a restatement of ``statement`` (equal
    up to whitespace): the offset after its ``by``. Otherwise ``start`` (nothing skipped)."""
    target = "".join(statement.split())
    if not target:
        return start
    masked = mask_comments_and_strings(output[:stop])
    known = {line.strip() for line in prelude.splitlines() if line.strip()}
    pos = start
    while pos < stop:  # skip whole lines that are blank, comments or prelude lines
        line_end = masked.find("\n", pos + 1)
        line_end = stop if line_end < 0 or line_end > stop else line_end
        code = masked[pos:line_end].strip()
        if code and output[pos:line_end].strip() not in known:
            break
        pos = line_end
    k, matched = pos, 0
    while k < stop and matched < len(target):
        ch = output[k]
        if ch.isspace():
            k += 1
            continue
        if ch != target[matched]:
            return start
        matched += 1
        k += 1
    if matched < len(target) or (k < stop and is_ident_char(output[k])):
        return start  # not the statement, or its `by` is the start of a longer word
    return k


def _fence(proof: str) -> str:
    return f"```lean\n{proof.rstrip()}\n```"


@ENVIRONMENTS.register("lean_proofs")
class LeanProofs(ProofEnvironment):
    """Prove a bundled core-Lean 4 theorem; reward 1 when Lean accepts the whole proof."""

    difficulty_scales = (
        "theorem grade: 0 one tactic, 1 intro + a step or a library fact, 2 case analysis, "
        "3 induction, 4 induction with unfolding and arithmetic, 5 generalised statements or "
        "helper facts, 6 helper lemmas proved inside the proof; higher difficulties use the "
        "hardest grade"
    )
    tags = ("lean", "formal", "process")
    answer_instruction = FORMAT_INSTRUCTION
    answer_format: ClassVar[AnswerFormat] = code_block("lean")
    prover: ClassVar[str | None] = "lean"
    size_measure: ClassVar[str | None] = "top-level tactics in the reference proof"

    prover_label = "Lean"

    def bank(self) -> Mapping[int, Sequence[Any]]:
        return bundled_bank("lean").by_grade()

    def checker(self, provers: Provers) -> ProofChecker:
        """The run's Lean checker; a missing installation or server is a configuration
        error."""
        return _checker(provers)

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        grade, theorems = self.theorems_at(difficulty)
        theorem = rng.choice(theorems)
        assert theorem.proof is not None
        context = (
            f"Context (already loaded):\n```lean\n{theorem.prelude.strip()}\n```\n\n"
            if theorem.prelude.strip()
            else ""
        )
        prompt = (
            "Prove the following theorem in Lean 4 (core library only, no Mathlib).\n\n"
            f"{context}Theorem:\n```lean\n{theorem.statement}\n```"
        )
        data = {
            # kept as written before the rename to "lean": problems stay byte-identical
            "system": "lean4",
            "theorem": theorem.name,
            "statement": theorem.statement,
            "prelude": theorem.prelude,
            "grade": grade,
        }
        return Instance(prompt=prompt, answer=_fence(theorem.proof), data=data)

    @staticmethod
    def formal_problem(problem: Problem) -> FormalProblem:
        d = problem.data
        return FormalProblem(
            system="lean",
            name=str(d["theorem"]),
            statement=str(d["statement"]),
            prelude=str(d.get("prelude", "")),
        )

    def _prepare(self, problem: Problem, output: str) -> Verdict | tuple[str, int]:
        """The proof text and its offset in ``output``, or the verdict when there is nothing
        to send to Lean (no proof found, rejected by the safety filter, no tactic)."""
        try:
            fp = self.formal_problem(problem)
        except KeyError as exc:
            raise UserInputError(
                f"lean_proofs problem data lacks {exc}: it needs 'theorem' and 'statement'"
            ) from None
        extracted = extract_lean_proof(output, fp.statement, fp.prelude)
        if extracted is None:
            return Verdict(
                0.0,
                False,
                "no proof found: write the tactic proof in a ```lean block",
                extra={"status": "format"},
            )
        text, offset = extracted
        plan = plan_lean_check(fp, text)
        if plan.rejection is not None or not plan.layout:
            steps = tuple(Span(offset + t.start, offset + t.end) for t in plan.layout)
            detail = (
                f"rejected: {plan.rejection}" if plan.rejection else "the proof contains no tactic"
            )
            status = "rejected" if plan.rejection else "incomplete"
            return Verdict(0.0, False, detail, steps, None, {"status": status})
        return text, offset

    def check(self, problem: Problem, answer: str) -> Verdict:
        """``answer`` is a proof (with or without a fence); same as :meth:`verify`."""
        return self.verify(problem, answer if "```" in answer else _fence(answer))

    def solve(self, problem: Problem) -> str:
        """The reference proof of the bundled theorem named in ``problem.data``."""
        theorem = bundled_bank("lean").get(str(problem.data["theorem"]))
        assert theorem.proof is not None
        return _fence(theorem.proof)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        """Insert ``fail`` (a tactic that always fails) before a random tactic, on its own
        line at that tactic's column."""
        fp = self.formal_problem(problem)
        extracted = extract_lean_proof(answer, fp.statement, fp.prelude)
        if extracted is None:
            return answer + f"\n```lean\n  {_FAILING_TACTIC}\n```"
        text, offset = extracted
        tactics = plan_lean_check(fp, text).layout
        if not tactics:
            return answer[:offset] + f"\n  {_FAILING_TACTIC}" + answer[offset:]
        where = offset + rng.choice(tactics).start
        line_start = answer.rfind("\n", 0, where) + 1
        indent = answer[line_start:where]
        if indent.strip():  # the tactic does not start its line: `fail; tactic`
            return answer[:where] + f"{_FAILING_TACTIC}; " + answer[where:]
        return answer[:where] + f"{_FAILING_TACTIC}\n{indent}" + answer[where:]

    def size(self, problem: Problem) -> float:
        """The number of top-level tactics in the reference proof."""
        fp = self.formal_problem(problem)
        extracted = extract_lean_proof(problem.answer, fp.statement, fp.prelude)
        return float(len(plan_lean_check(fp, extracted[0]).layout)) if extracted else 0.0


def _checker(provers: Provers) -> ProofChecker:
    """The run's Lean checker; a missing installation or server is a configuration error."""
    try:
        return provers.checker("lean")
    except (LeanReplError, KiminaError) as exc:
        raise UserInputError(
            "lean_proofs needs a Lean checker: set provers.lean.command (backend 'repl': the "
            "leanprover-community/repl command line, e.g. ['lake', 'env', "
            "'/opt/repl/.lake/build/bin/repl']) or provers.lean.url (backend 'kimina': a "
            f"Kimina Lean Server address) in the run config ({exc})"
        ) from exc
