"""Every verdict on a fixed set of outputs, to check that a speed-up changed no verdict.

For each environment (without a proof assistant), difficulties and seeds, it generates the
problem and verifies a fixed list of outputs: the reference answer boxed and tagged, the
solver's answer, every surface form and near miss, a corruption, written variants of the
reference (``$…$``, ``\\text{}``, a trailing period, separators, case, other digit scripts,
unbalanced and repeated markers, ...) and random edits of it from a hostile alphabet (seeded,
so the same outputs in every run). It writes ``{env: [[output, verdict], ...]}`` as JSON;
``--compare OLD NEW`` names every output whose verdict (reward, correct, detail, steps,
extra) differs. Run it with the old code and with the new code on the path, with one hash
seed (a few solvers' choice among several valid answers follows set order)::

    PYTHONHASHSEED=0 PYTHONPATH=<old>/src python -m tests.envs.verdicts --out /tmp/old.json
    PYTHONHASHSEED=0 PYTHONPATH=src python -m tests.envs.verdicts --out /tmp/new.json
    python -m tests.envs.verdicts --compare /tmp/old.json /tmp/new.json

This is a tool, not a test: the golden digest (``tests/envs/golden.py``) pins problems; this
pins verdicts for the duration of a change.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from typing import Any

_HOSTILE = "0123456789 ,.;-+{}[]()\\$/_^xX=\u00a0\u0661\uff13abcABC"
_DIGITS = str.maketrans(
    "0123456789", "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669"
)
_WIDE = str.maketrans("0123456789", "０１２３４５６７８９")


def _variants(answer: str) -> list[str]:
    boxed = f"\\boxed{{{answer}}}"
    return [
        boxed,
        f"<answer>{answer}</answer>",
        f"Reasoning...\n{boxed}",
        answer,
        f"\\boxed{{ {answer} }}",
        f"\\boxed{{${answer}$}}",
        f"\\boxed{{\\text{{{answer}}}}}",
        f"\\boxed{{{answer}.}}",
        f"\\boxed{{{answer.upper()}}}",
        f"\\boxed{{{answer.lower()}}}",
        f"\\boxed{{{answer.replace(', ', ',')}}}",
        f"\\boxed{{{answer.replace(',', '')}}}",
        f"\\boxed{{{answer.replace(' ', '')}}}",
        f"\\boxed{{{answer.replace(' ', '  ')}}}",
        f"\\boxed{{{answer.replace(', ', '; ')}}}",
        f"\\boxed{{[{answer}]}}",
        f"\\boxed{{({answer})}}",
        f"\\boxed{{{answer[:-1]}}}",
        f"\\boxed{{{answer}0}}",
        f"\\boxed{{-{answer}}}",
        f"\\boxed{{{answer.translate(_DIGITS)}}}",
        f"\\boxed{{{answer.translate(_WIDE)}}}",
        f"\\boxed{{{answer.replace('000', '{,}000')}}}",
        f"\\boxed{{x = {answer}}}",
        f"\\boxed{{{answer}}} \\boxed{{0}}",
        f"\\boxed{{0}} \\boxed{{{answer}}}",
        f"\\boxed{{{answer}",
        f"\\boxed{{{{{answer}}}}}",
        f"\\boxed{{{answer}\\}}}}",
        f"<answer>{answer}</answer> \\boxed{{1}}",
        f"\\boxed{{{answer}\n}}",
        f"\\boxed{{{answer}\u3002}}",
        f"\\boxed{{\\mathrm{{{answer}}}}}",
        f"\\boxed{{{answer.replace('-', '−')}}}",
        f"\\boxed{{{answer}$}}",
        f"\\boxed{{\\({answer}\\)}}",
    ]


def _edits(answer: str, rng: random.Random, count: int) -> list[str]:
    out = []
    for _ in range(count):
        chars = list(answer)
        for _ in range(rng.randint(1, 3)):
            op = rng.randrange(3)
            pos = rng.randint(0, len(chars))
            if op == 0 or not chars:
                chars.insert(pos, rng.choice(_HOSTILE))
            elif op == 1:
                del chars[min(pos, len(chars) - 1)]
            else:
                chars[min(pos, len(chars) - 1)] = rng.choice(_HOSTILE)
        out.append("\\boxed{" + "".join(chars) + "}")
    return out


def _verdict(verdict: Any) -> list[Any]:
    return [
        repr(verdict.reward),
        verdict.correct,
        verdict.detail,
        repr(verdict.steps),
        repr(verdict.first_failed_step),
        repr(verdict.extra),
    ]


def outputs(env: Any, problem: Any) -> list[str]:
    """The outputs verified for ``problem`` (the same in every run)."""
    fmt = env.answer_format
    rng = random.Random(f"verdicts/{env.name}/{problem.difficulty}/{problem.seed}")
    out = _variants(problem.answer)
    solution = env.solve(problem)
    out.append(fmt.render(solution))
    out += [fmt.render(form) for form in env.surface_forms(problem)]
    out += [fmt.render(miss) for miss in env.near_misses(problem)]
    out.append(fmt.render(env.corrupt(problem, solution, random.Random(rng.random()))))
    out += _edits(problem.answer, rng, 12)
    return out


def compute(names: list[str], difficulties: list[int], seeds: list[int]) -> dict[str, Any]:
    from verirl.envs import get_env

    result: dict[str, Any] = {}
    for name in names:
        env = get_env(name)
        if env.prover is not None:
            continue
        rows: list[Any] = []
        for difficulty in sorted({min(d, env.max_difficulty) for d in difficulties}):
            for seed in seeds:
                problem = env.generate(difficulty, seed)
                for output in outputs(env, problem):
                    rows.append([difficulty, seed, output, _verdict(env.verify(problem, output))])
        result[name] = rows
    return result


def compare(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    diffs = []
    for name in sorted(set(old) | set(new)):
        if name not in old or name not in new:
            diffs.append(f"{name}: only in {'new' if name not in old else 'old'}")
            continue
        if len(old[name]) != len(new[name]):
            diffs.append(f"{name}: {len(old[name])} outputs before, {len(new[name])} after")
        for a, b in zip(old[name], new[name], strict=False):
            if a != b:
                what = repr(a[2]) if a[2] == b[2] else f"{a[2]!r} / {b[2]!r}"
                diffs.append(f"{name}: d={a[0]} seed={a[1]} {what}: {a[3]} -> {b[3]}")
    return diffs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="")
    parser.add_argument("--envs", default="", help="comma-separated (default: all)")
    parser.add_argument("--difficulties", default="0,2,5")
    parser.add_argument("--seeds", default="0,1")
    parser.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"))
    args = parser.parse_args()
    if args.compare:
        with open(args.compare[0]) as f_old, open(args.compare[1]) as f_new:
            diffs = compare(json.load(f_old), json.load(f_new))
        for line in diffs[:50]:
            print(line)
        print(f"{len(diffs)} differences")
        sys.exit(1 if diffs else 0)
    from verirl.envs import env_names

    names = args.envs.split(",") if args.envs else env_names()
    result = compute(
        names,
        [int(d) for d in args.difficulties.split(",")],
        [int(s) for s in args.seeds.split(",")],
    )
    with open(args.out, "w") as f:
        json.dump(result, f)
    print(f"{sum(len(v) for v in result.values())} verdicts over {len(result)} environments")


if __name__ == "__main__":
    main()
