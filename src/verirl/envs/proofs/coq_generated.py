"""Generated Coq theorems whose size keeps growing with the difficulty, in three kinds:

- ``coq_implication_chains`` (logic): chains of implications among propositional atoms,
  hidden among distractor hypotheses, proving one atom or a conjunction of two. A path of
  2 + d implications from the given atom to the goal, 2 + d//2 distractor implications, the
  hypotheses shuffled, and from d = 2 on, half of the problems ask for a conjunction of two
  atoms reached by two paths. The reference proof (``intros``, one ``apply`` per step of the
  path, ``exact``; ``split`` with two bullets for a conjunction) grows with the path.
- ``coq_list_lengths`` (lists): ``length E = Σ c_i · length l_i + k`` for a random list
  expression ``E`` of 2 + d operations (``++``, ``rev``, ``map S``, ``n ::``) over list
  variables and literal lists; the generator computes the right side.
- ``coq_ring_identities`` (arithmetic): a product of 2 + d//6 sums over ``Z`` equals its
  expansion, the monomials and their factors shuffled; the generator expands it.

``coq_proofs`` draws from a fixed bank and stops growing at its hardest grade; here every
``(difficulty, seed)`` builds a new statement. Any proof Coq accepts earns the reward: the
checker is the run's Coq backend (:class:`~verirl.provers.settings.Provers`), exactly as for
``coq_proofs``, with the same output format, pre-filter against cheats and tactic spans for
process credit (Kim & Yun 2026, "Process-Verified Reinforcement Learning for Theorem Proving
via Lean", arXiv:2606.20068).
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from verirl.envs.base import ENVIRONMENTS, Instance
from verirl.envs.proofs.coq import CoqProofs, _fence, coq_prompt
from verirl.types import Problem


def generated_instance(
    theorem: str, statement: str, prelude: str, proof: str, difficulty: int, **extra: int
) -> Instance:
    """A generated theorem as an instance: the proving prompt, the reference proof as the
    answer, and what the checker and :meth:`CoqImplicationChains.solve` read in ``data``."""
    data = {
        "system": "coq",
        "theorem": theorem,
        "statement": statement,
        "prelude": prelude,
        "proof": proof,
        "grade": difficulty,
        **extra,
    }
    return Instance(prompt=coq_prompt(statement, prelude), answer=_fence(proof), data=data)


def _path_proof(path: list[int], hyp_of: dict[tuple[int, int], str], start: str) -> list[str]:
    """``apply`` the implication into each atom of ``path`` from the goal backwards."""
    steps = [f"apply {hyp_of[(a, b)]}." for a, b in itertools.pairwise(path)][::-1]
    return [*steps, f"exact {start}."]


@ENVIRONMENTS.register("coq_implication_chains")
class CoqImplicationChains(CoqProofs):
    """Prove a generated propositional theorem (implication chains with distractors)."""

    size_measure = "tactics in the reference proof"
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
        return generated_instance("chain", statement, "", proof, difficulty)

    def solve(self, problem: Problem) -> str:
        """The constructed proof (the paths are known to the generator)."""
        return _fence(str(problem.data["proof"]))

    def problem_space(self, difficulty: int) -> int | None:
        return None


LIST_PRELUDE = "Require Import List Lia.\nImport ListNotations."
LIST_PROOF = (
    "Proof.\n  intros.\n"
    "  repeat progress (simpl; rewrite ?app_length, ?rev_length, ?map_length).\n"
    "  lia.\nQed."
)


def _list_expr(budget: int, nvars: int, rng: random.Random) -> tuple[str, list[int], int]:
    """A list expression with ``budget`` operations (``++``, ``rev``, ``map S``, ``n ::``)
    over ``nvars`` list variables (written ``@i@``) and literal lists, with its length:
    ``(text, counts, constant)``, the length being ``Σ counts[i] · length(@i@) + constant``.
    Compound operands are parenthesised."""
    if budget == 0:
        counts = [0] * nvars
        if rng.random() < 0.15:
            items = [str(rng.randrange(10)) for _ in range(rng.randint(1, 3))]
            return "[" + "; ".join(items) + "]", counts, len(items)
        var = rng.randrange(nvars)
        counts[var] = 1
        return f"@{var}@", counts, 0  # a placeholder: the used variables are named at the end
    op = rng.choice(("app", "app", "rev", "map", "cons"))
    if op == "app":
        left = rng.randint(0, budget - 1)
        a, ca, ka = _list_expr(left, nvars, rng)
        b, cb, kb = _list_expr(budget - 1 - left, nvars, rng)
        return f"{_paren(a)} ++ {_paren(b)}", [x + y for x, y in zip(ca, cb, strict=True)], ka + kb
    inner, counts, k = _list_expr(budget - 1, nvars, rng)
    if op == "rev":
        return f"rev {_paren(inner)}", counts, k
    if op == "map":
        return f"map S {_paren(inner)}", counts, k
    return f"{rng.randrange(10)} :: {_paren(inner)}", counts, k + 1


def _paren(expr: str) -> str:
    return expr if _ATOM.fullmatch(expr) else f"({expr})"


_ATOM = re.compile(r"@\d+@|\[[0-9; ]*\]")  # a variable placeholder or a literal list


@ENVIRONMENTS.register("coq_list_lengths")
class CoqListLengths(CoqImplicationChains):
    """Prove a generated lemma about the length of a list expression (``++``, ``rev``,
    ``map``, ``::`` over list variables and literals) equal to a linear sum of lengths."""

    size_measure = "list operations in the statement"
    difficulty_scales = (
        "2 + d list operations (++, rev, map S, n ::) over 1 + d//3 (at most 6) list "
        "variables; the right side a shuffled sum of the variables' lengths and a constant"
    )
    max_difficulty = 60

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        nvars = min(1 + difficulty // 3, 6)
        while True:
            expr, counts, const = _list_expr(2 + difficulty, nvars, rng)
            if any(counts):
                break
        used = [i for i, c in enumerate(counts) if c]  # named l1, l2, ... in order of index
        name_of = {i: f"l{k + 1}" for k, i in enumerate(used)}
        expr = re.sub(r"@(\d+)@", lambda m: name_of[int(m.group(1))], expr)
        terms: list[str] = []
        for k, i in enumerate(used):
            c, var = counts[i], f"length l{k + 1}"
            if c > 1 and rng.random() < 0.5:
                terms += [var] * c  # the same length written out c times
            else:
                terms.append(var if c == 1 else f"{c} * {var}")
        if const:
            terms.append(str(const))
        rng.shuffle(terms)
        names = " ".join(f"l{k + 1}" for k in range(len(used)))
        statement = (
            f"Theorem lengths : forall {names} : list nat, length ({expr}) = {' + '.join(terms)}."
        )
        return generated_instance(
            "lengths", statement, LIST_PRELUDE, LIST_PROOF, difficulty, operations=2 + difficulty
        )

    def size(self, problem: Problem) -> float:
        """The number of list operations in the statement's expression."""
        return float(problem.data["operations"])


RING_PRELUDE = "Require Import ZArith.\nOpen Scope Z_scope."
RING_PROOF = "Proof.\n  intros.\n  ring.\nQed."
_VARS = "abcdefgh"


def _factor(variables: str, rng: random.Random) -> tuple[str, dict[tuple[str, ...], int]]:
    """A sum of one or two distinct variables with small coefficients, and a constant a
    third of the time: its text and its polynomial ``{sorted variables: coefficient}``."""
    chosen = rng.sample(variables, min(len(variables), rng.choice((1, 2, 2))))
    poly: dict[tuple[str, ...], int] = {}
    parts = []
    for v in chosen:
        coeff = rng.choice((1, 1, 1, 2, 3))
        parts.append(v if coeff == 1 else f"{coeff} * {v}")
        poly[(v,)] = coeff
    if len(chosen) == 1 or rng.random() < 0.35:
        const = rng.randint(1, 5)
        parts.insert(rng.randrange(len(parts) + 1), str(const))
        poly[()] = const
    return "(" + " + ".join(parts) + ")", poly


def _times(
    p: dict[tuple[str, ...], int], q: dict[tuple[str, ...], int]
) -> dict[tuple[str, ...], int]:
    out: dict[tuple[str, ...], int] = {}
    for m1, c1 in p.items():
        for m2, c2 in q.items():
            m = tuple(sorted(m1 + m2))
            out[m] = out.get(m, 0) + c1 * c2
    return out


@ENVIRONMENTS.register("coq_ring_identities")
class CoqRingIdentities(CoqImplicationChains):
    """Prove that a product of sums over ``Z`` equals its expansion (the monomials and each
    monomial's factors shuffled). ``Z``, not ``nat``: ``ring`` over ``nat`` takes minutes on
    six factors (unary literals such as 480), over ``Z`` about a second."""

    size_measure = "monomials in the expanded side"
    difficulty_scales = (
        "a product of 2 + d//6 sums (one or two variables and a constant) over 2 + d//5 (at "
        "most 6) variables; "
        "the right side is its expansion, monomials and factors shuffled"
    )
    max_difficulty = 40  # 8 factors, a few hundred monomials: a check stays within seconds

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        variables = _VARS[: min(2 + difficulty // 5, 6)]
        texts: list[str] = []
        poly: dict[tuple[str, ...], int] = {(): 1}
        for _ in range(2 + difficulty // 6):
            text, factor = _factor(variables, rng)
            texts.append(text)
            poly = _times(poly, factor)
        monomials = []
        for mono, coeff in sorted(poly.items()):
            factors = list(mono)
            rng.shuffle(factors)
            if coeff != 1 or not factors:
                factors.insert(0 if rng.random() < 0.8 else len(factors), str(coeff))
            monomials.append(" * ".join(factors))
        rng.shuffle(monomials)
        used = sorted({v for mono in poly for v in mono})
        statement = (
            f"Theorem expand : forall {' '.join(used)} : Z, {' * '.join(texts)} = "
            f"{' + '.join(monomials)}."
        )
        return generated_instance(
            "expand", statement, RING_PRELUDE, RING_PROOF, difficulty, monomials=len(monomials)
        )

    def size(self, problem: Problem) -> float:
        """The number of monomials on the expanded side."""
        return float(problem.data["monomials"])
