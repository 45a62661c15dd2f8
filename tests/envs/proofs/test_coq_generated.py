"""The generated Coq environments (implication chains, list lengths, ring identities):
theorems that keep growing with the difficulty, checked by real Coq."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

from tests.provers.coq.marks import needs_coq
from verirl.envs import get_env

ENV = "coq_implication_chains"


def test_statements_are_new_per_seed_and_grow_with_difficulty() -> None:
    env = get_env(ENV)
    assert len({env.generate(3, s).data["statement"] for s in range(40)}) >= 35
    sizes = [sum(env.size(env.generate(d, s)) for s in range(6)) / 6 for d in (0, 5, 20, 50)]
    assert sizes == sorted(sizes) and sizes[-1] > 5 * sizes[0]  # no plateau (coq_proofs has one)


@needs_coq
def test_reference_proofs_pass_and_broken_ones_fail() -> None:
    env = get_env(ENV)
    rng = random.Random(0)
    for d in (0, 2, 7, 30):
        for seed in (0, 1):
            problem = env.generate(d, seed)
            good = env.verify(problem, problem.answer)
            assert good.correct and good.reward == 1.0, (d, seed, good)
            assert good.steps  # tactic spans for process credit
            assert not env.verify(problem, env.corrupt(problem, problem.answer, rng)).correct
            # skipping the chain: the start atom h0 does not prove the goal
            intros = problem.data["proof"].splitlines()[1].strip()
            wrong = f"```coq\nProof.\n  {intros}\n  exact h0.\nQed.\n```"
            assert not env.verify(problem, wrong).correct


@needs_coq
def test_any_accepted_proof_counts_not_only_the_reference() -> None:
    env = get_env(ENV)
    problem = env.generate(4, 3)
    assert env.verify(problem, "```coq\nProof.\n  tauto.\nQed.\n```").correct
    assert not env.verify(problem, "```coq\nProof.\n  admit.\nAdmitted.\n```").correct


GENERATED = {  # environment -> difficulties spanning its range
    "coq_list_lengths": (0, 1, 4, 12, 30, 60),
    "coq_ring_identities": (0, 1, 6, 18, 30),
}


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_statements_are_new_per_seed_and_grow(name: str) -> None:
    env = get_env(name)
    levels = GENERATED[name]
    assert len({env.generate(levels[2], s).data["statement"] for s in range(40)}) >= 35
    sizes = [sum(env.size(env.generate(d, s)) for s in range(6)) / 6 for d in levels]
    assert sizes == sorted(sizes) and sizes[-1] > 5 * sizes[0]


def _expansion(statement: str) -> dict[tuple[str, ...], int]:
    """The right side of a ring identity as {sorted variables: coefficient} (an independent
    reading of the text the generator wrote)."""
    rhs = statement.split(" = ", 1)[1].rstrip(".")
    poly: dict[tuple[str, ...], int] = {}
    for mono in rhs.split(" + "):
        coeff, names = 1, []
        for f in mono.split(" * "):
            if f.isdigit():
                coeff *= int(f)
            else:
                names.append(f)
        key = tuple(sorted(names))
        poly[key] = poly.get(key, 0) + coeff
    return poly


def test_ring_identities_state_the_true_expansion() -> None:
    import sympy

    env = get_env("coq_ring_identities")
    for d in (0, 3, 9):
        for seed in range(5):
            st = env.generate(d, seed).data["statement"]
            lhs = st.split(", ", 1)[1].split(" = ")[0]
            expanded = sympy.Poly(sympy.expand(sympy.sympify(lhs)))
            got = {
                tuple(
                    sorted(str(v) for v, k in zip(expanded.gens, m, strict=True) for _ in range(k))
                ): c
                for m, c in expanded.terms()
            }
            assert got == _expansion(st), st


def test_list_lengths_state_the_true_length() -> None:
    env = get_env("coq_list_lengths")
    rng = random.Random(1)
    for d in (0, 2, 7, 20):
        for seed in range(5):
            st = env.generate(d, seed).data["statement"]
            names = st.split("forall ", 1)[1].split(" : ")[0].split()
            lists = {n: [rng.randrange(9) for _ in range(rng.randrange(5))] for n in names}
            expr, rhs = st.split(", length ", 1)[1].rstrip(".").split(" = ")
            py = (
                expr.replace("[", "(")
                .replace("]", ",)")
                .replace(";", ",")
                .replace("map S ", "_map @ ")
                .replace("rev ", "_rev @ ")
            )
            value = _eval_list(py, lists)
            total = sum(
                int(t.split(" * ")[0]) * len(lists[t.split()[-1]])
                if " * " in t
                else len(lists[t.split()[-1]])
                if t.startswith("length")
                else int(t)
                for t in rhs.split(" + ")
            )
            assert len(value) == total, st


def _eval_list(expr: str, lists: dict[str, list[int]]) -> list[int]:
    """Evaluate a Coq list expression (``++``, ``::``, ``rev``, ``map S``, literals) by
    parsing it as Python with ``::`` as ``<<``, ``++`` as ``+`` and application as ``@``
    (the generator parenthesises every compound operand, so precedence never decides)."""
    import ast

    src = expr.replace("::", "<<").replace("++", "+")  # both right-associative in Coq
    tree = ast.parse(src, mode="eval")

    def ev(node: ast.AST) -> Any:  # a list, or an int (a literal's item)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.LShift):
            return [ev(node.left), *ev(node.right)]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return [*ev(node.left), *ev(node.right)]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):  # application
            assert isinstance(node.left, ast.Name)
            arg = ev(node.right)
            assert isinstance(arg, list)
            return arg[::-1] if node.left.id == "_rev" else [x + 1 for x in arg]
        if isinstance(node, ast.Tuple):
            return [ev(e) for e in node.elts]
        if isinstance(node, ast.Name):
            return list(lists[node.id])
        if isinstance(node, ast.Constant):
            assert isinstance(node.value, int)
            return node.value
        raise AssertionError(ast.dump(node))

    out = ev(tree.body)
    assert isinstance(out, list)
    return out


@needs_coq
@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_reference_proofs_pass_and_a_false_statement_fails(name: str) -> None:
    env = get_env(name)
    rng = random.Random(0)
    for d in GENERATED[name][::2]:
        problem = env.generate(d, 1)
        good = env.verify(problem, problem.answer)
        assert good.correct and good.reward == 1.0 and good.steps, (d, good)
        assert not env.verify(problem, env.corrupt(problem, problem.answer, rng)).correct
        # the same proof of a statement one off: the generator's arithmetic is what holds
        st = problem.data["statement"]
        off = replace(problem, data={**problem.data, "statement": st[:-1] + " + 1."})
        assert not env.verify(off, problem.answer).correct, st
