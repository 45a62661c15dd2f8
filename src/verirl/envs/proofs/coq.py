"""Coq theorem proving: whole-proof generation checked by Coq, with tactic spans for credit.

``generate(difficulty, seed)`` picks one of the bundled theorems
(:func:`verirl.provers.coq.theorems.bundled_theorems`) whose grade is ``difficulty``; grades
above the hardest bundled one use the hardest (difficulty is unbounded). The prompt shows the
prelude (imports and definitions) and the statement and asks for the proof only (a non-CoT
prompt, as in the process-verified proving paper).

**Output format.** The model writes its proof as a Coq tactic script in a fenced block::

    ```coq
    Proof.
      intros n. induction n as [| n IH].
      - reflexivity.
      - simpl. rewrite IH. reflexivity.
    Qed.
    ```

:func:`extract_coq_proof` takes the *last* fenced block tagged ``coq``/``rocq`` (or untagged);
an unclosed final fence (a truncated generation) runs to the end of the output. Without a
fenced block it takes the text from the last ``Proof.`` to the first ``Qed.``/``Defined.``
after it (or to the end). Inside the block, leading sentences that repeat the prelude and a
restated theorem identical to the statement (up to whitespace) are skipped. ``Proof.`` and
``Qed.`` are optional (``Qed.`` is added when missing). It returns the proof text and its
character offset in the output, so the checker's tactic spans map back onto the output.

**Verdict.** Reward 1.0 when Coq accepts the proof, else 0.0 (no proof found, a rejected cheat
such as ``admit``/``Admitted``/new axioms or commands, an error, unsolved goals, a timeout);
``correct`` = passed; ``steps`` = tactic spans in the coordinates of the full output;
``first_failed_step`` = the first failing tactic; ``extra["status"]`` is the checker's status
(``pass``/``error``/``incomplete``/``timeout``/``rejected``/``crash``) or ``format``. Garbage
is rejected before any Coq process starts.

**Checker.** Training verifies a whole batch at once through :meth:`CoqProofs.verify_batch`
with the run's :class:`~verirl.provers.settings.Provers` (built from the ``provers.coq``
config: backend, workers, timeout, memory), so the checker's worker pool checks the batch's
proofs in parallel. A direct :meth:`CoqProofs.verify` call outside a run uses a checker with
the default settings, owned by the environment instance.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from verirl.envs.base import ENVIRONMENTS, Instance
from verirl.envs.proofs.proof_env import ProofEnvironment
from verirl.envs.reading.formats import code_block
from verirl.provers.bank import bundled_bank
from verirl.provers.base import FormalProblem
from verirl.provers.coq.attempt import prepare_attempt
from verirl.provers.coq.sentences import scan
from verirl.types import Problem, Span, Verdict

FORMAT_INSTRUCTION = (
    "Write only the proof, as a Coq tactic script in one ```coq code block: start with "
    "`Proof.`, end with `Qed.`, and do not restate the theorem. Use tactics only: no `admit`, "
    "`Admitted`, new lemmas, axioms or other commands."
)

_FENCE_OPEN = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n`]*\n")
_PROOF_WORD = re.compile(r"(?<![A-Za-z0-9_'.])Proof\.(?=\s|$)")
_END_WORD = re.compile(r"(?<![A-Za-z0-9_'.])(?:Qed|Defined)\.(?=\s|$)")
_COQ_TAGS = {"", "coq", "rocq", "v", "gallina"}
_MAX_OUTPUT = 200_000


def _norm(text: str) -> str:
    return " ".join(text.split())


def extract_coq_proof(
    output: str, statement: str = "", prelude: str = ""
) -> tuple[str, int] | None:
    """``(proof_text, offset)`` with ``output[offset:offset + len(proof_text)] == proof_text``,
    or None when the output holds no proof (see the module docstring for the format)."""
    if not isinstance(output, str) or len(output) > _MAX_OUTPUT:
        return None
    region = _last_fenced_block(output)
    if region is None:
        m = None
        for found in _PROOF_WORD.finditer(output):
            m = found
        if m is None:
            return None
        end = _END_WORD.search(output, m.end())
        region = (m.start(), end.end() if end else len(output))
    start, stop = region
    start = _skip_restated(output, start, stop, statement, prelude)
    text = output[start:stop]
    lead = len(text) - len(text.lstrip())
    text = text.strip()
    if not text:
        return None
    return text, start + lead


def _last_fenced_block(output: str) -> tuple[int, int] | None:
    pos, found = 0, None
    while True:
        m = _FENCE_OPEN.search(output, pos)
        if m is None:
            return found
        close = output.find("```", m.end())
        stop = close if close >= 0 else len(output)
        if m.group(1).lower() in _COQ_TAGS:
            found = (m.end(), stop)
        if close < 0:
            return found
        pos = close + 3


def _skip_restated(output: str, start: int, stop: int, statement: str, prelude: str) -> int:
    """Skip leading sentences that repeat the prelude, then one that repeats the statement."""
    if not statement and not prelude:
        return start
    known = {_norm(s.text) for s in scan(prelude).sentences} if prelude else set()
    target = _norm(statement)
    pos = start
    for s in scan(output[start:stop]).sentences:
        t = _norm(s.text)
        if t in known:
            known.discard(t)
            pos = start + s.end
            continue
        if target and t == target:
            return start + s.end
        break
    return pos


# ---- the environment ---------------------------------------------------------------------
def coq_prompt(statement: str, prelude: str = "") -> str:
    """The non-CoT proving prompt: the prelude (when there is one) and the statement."""
    context = (
        f"Context (already loaded):\n```coq\n{prelude.strip()}\n```\n\n" if prelude.strip() else ""
    )
    return (
        f"Prove the following theorem in Coq 8.16.\n\n{context}Theorem:\n```coq\n{statement}\n```"
    )


def _fence(proof: str) -> str:
    return f"```coq\n{proof.strip()}\n```"


@ENVIRONMENTS.register("coq_proofs")
class CoqProofs(ProofEnvironment):
    """Prove a bundled Coq theorem; reward 1 when Coq accepts the whole proof."""

    size_measure = "tactics in the checked proof"
    difficulty_scales = (
        "theorem grade: 0 one tactic, 1 intros + a step or a stdlib lemma, 2 case analysis, "
        "3 induction, 4 induction with lemmas, 5 strengthened induction / helper facts; "
        "higher difficulties use the hardest grade"
    )
    tags = ("coq", "formal", "process")
    answer_format = code_block("coq")  # the prompt builder asks for a ```coq block, not \boxed{}
    answer_instruction = FORMAT_INSTRUCTION
    prover: ClassVar[str | None] = "coq"
    prover_label = "Coq"

    def bank(self) -> Mapping[int, Sequence[Any]]:
        return bundled_bank("coq").by_grade()

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        grade, theorems = self.theorems_at(difficulty)
        theorem = rng.choice(theorems)
        assert theorem.proof is not None
        prompt = coq_prompt(theorem.statement, theorem.prelude)
        data = {
            "system": "coq",
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
            system="coq",
            name=str(d["theorem"]),
            statement=str(d["statement"]),
            prelude=str(d.get("prelude", "")),
        )

    def _prepare(self, problem: Problem, output: str) -> Verdict | tuple[str, int]:
        """The proof text and its offset in ``output``, or the verdict when there is none
        to check (no proof found, rejected by the pre-filter, no tactic)."""
        data = problem.data
        extracted = extract_coq_proof(
            output, str(data.get("statement", "")), str(data.get("prelude", ""))
        )
        if extracted is None:
            return Verdict(
                0.0,
                False,
                "no proof found: write the proof in a ```coq block",
                extra={"status": "format"},
            )
        text, offset = extracted
        attempt = prepare_attempt(text)
        if attempt.rejection is not None or not attempt.tactics:
            steps = tuple(Span(offset + t.start, offset + t.end) for t in attempt.tactics)
            detail = (
                f"rejected: {attempt.rejection}"
                if attempt.rejection
                else "the proof contains no tactic"
            )
            status = "rejected" if attempt.rejection else "incomplete"
            return Verdict(0.0, False, detail, steps, None, {"status": status})
        return text, offset

    def check(self, problem: Problem, answer: str) -> Verdict:
        """``answer`` is a proof (with or without a fence); same as :meth:`verify`."""
        return self.verify(problem, answer if "```" in answer else _fence(answer))

    def solve(self, problem: Problem) -> str:
        """The reference proof of the bundled theorem named in ``problem.data``."""
        theorem = bundled_bank("coq").get(str(problem.data["theorem"]))
        assert theorem.proof is not None
        return _fence(theorem.proof)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        """Insert ``fail.`` (which always fails on a goal) before a random tactic."""
        extracted = extract_coq_proof(answer)
        if extracted is None:
            return answer + "\nfail."
        text, offset = extracted
        att = prepare_attempt(text)
        commands = [
            s
            for k, s in enumerate(att.sentences)
            if not s.structural and att.sentence_tactic[k] is not None
        ]
        if not commands:
            return answer.replace("```coq\n", "```coq\nfail.\n", 1)
        where = offset + rng.choice(commands).start
        return answer[:where] + "fail. " + answer[where:]

    def size(self, problem: Problem) -> float:
        """The number of tactics in the reference proof."""
        extracted = extract_coq_proof(problem.answer)
        return float(len(prepare_attempt(extracted[0]).tactics)) if extracted else 0.0
