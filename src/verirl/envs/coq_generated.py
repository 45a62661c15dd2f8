"""Generated Coq theorems whose size keeps growing with the difficulty: chains of
implications among propositional atoms, hidden among distractor hypotheses, proving one
atom or a conjunction of two.

``coq_proofs`` draws from a fixed bank and stops growing at its hardest grade; here every
``(difficulty, seed)`` builds a new statement: a path of 2 + d implications from the given
atom to the goal, 2 + d//2 distractor implications, the hypotheses shuffled, and from d = 2
on, half of the problems ask for a conjunction of two atoms reached by two paths. The
reference proof (``intros``, one ``apply`` per step of the path, ``exact``; ``split`` with
two bullets for a conjunction) grows with the path. Any proof Coq accepts earns the reward:
the checker is the run's Coq backend (:class:`~verirl.provers.settings.Provers`), exactly as
for ``coq_proofs``, with the same output format, pre-filter against cheats and tactic spans
for process credit (Kim & Yun 2026, "Process-Verified Reinforcement Learning for Theorem
Proving via Lean", arXiv:2606.20068).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence
from typing import Any

from verirl.envs.base import Instance, register_env
from verirl.envs.coq_proofs import CoqProofs, _fence
from verirl.types import Problem


def _path_proof(path: list[int], hyp_of: dict[tuple[int, int], str], start: str) -> list[str]:
    """``apply`` the implication into each atom of ``path`` from the goal backwards."""
    steps = [f"apply {hyp_of[(a, b)]}." for a, b in itertools.pairwise(path)][::-1]
    return [*steps, f"exact {start}."]


@register_env
class CoqImplicationChains(CoqProofs):
    """Prove a generated propositional theorem (implication chains with distractors)."""

    name = "coq_implication_chains"
    size_measure = "tactics in the reference proof"
    family = "proofs"
    difficulty_scales = (
        "a path of 2 + d implications (two paths to a conjunction from d = 2, half the time), "
        "2 + d//2 distractor implications, hypotheses shuffled"
    )
    tags = ("coq", "formal", "process")
    max_difficulty = 60

    def bank(self) -> Mapping[int, Sequence[Any]]:
        return {0: ()}  # not drawn from a bank: every statement is generated

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        length = 2 + difficulty
        conj = difficulty >= 2 and rng.random() < 0.5
        atoms = length + 2 + (length // 2 + 1 if conj else 0) + difficulty // 3
        order = list(range(atoms))
        rng.shuffle(order)
        start, first = order[0], order[: length + 1]
        edges = list(itertools.pairwise(first))
        paths = [first]
        if conj:  # a second path leaving the first one at a random point
            branch = rng.randrange(len(first) - 1)
            rest = order[length + 1 : length + 1 + length // 2 + 1]
            second = [*first[: branch + 1], *rest]
            edges += list(zip(second[branch:], second[branch + 1 :], strict=False))
            paths.append(second)
        for _ in range(2 + difficulty // 2):
            a, b = rng.sample(range(atoms), 2)
            if (a, b) not in edges and b != start:
                edges.append((a, b))
        rng.shuffle(edges)
        hyp_of = {e: f"h{i + 1}" for i, e in enumerate(edges)}
        names = [f"P{i}" for i in range(atoms)]
        goals = [names[p[-1]] for p in paths]
        premises = " -> ".join(f"({names[a]} -> {names[b]})" for a, b in edges)
        goal = " /\\ ".join(goals)
        statement = (
            f"Theorem chain : forall {' '.join(names)} : Prop, {premises} -> "
            f"{names[start]} -> {goal}."
        )
        intros = f"intros {' '.join(names)} {' '.join(hyp_of[e] for e in edges)} h0."
        if conj:
            body = ["split."]
            for p in paths:
                steps = _path_proof(p, hyp_of, "h0")
                body += [f"- {steps[0]}", *(f"  {s}" for s in steps[1:])]
        else:
            body = _path_proof(paths[0], hyp_of, "h0")
        proof = "Proof.\n  " + "\n  ".join([intros, *body]) + "\nQed."
        prompt = f"Prove the following theorem in Coq 8.16.\n\nTheorem:\n```coq\n{statement}\n```"
        data = {
            "system": "coq",
            "theorem": "chain",
            "statement": statement,
            "prelude": "",
            "proof": proof,
            "grade": difficulty,
        }
        return Instance(prompt=prompt, answer=_fence(proof), data=data)

    def solve(self, problem: Problem) -> str:
        """The constructed proof (the paths are known to the generator)."""
        return _fence(str(problem.data["proof"]))

    def problem_space(self, difficulty: int) -> int | None:
        return None
