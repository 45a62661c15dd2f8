"""Program synthesis: the base of every environment whose answer is a Python function.

A task gives a specification, the function's signature and a few examples; the model answers
with a fenced ```` ```python ```` block. The verifier runs the block in the sandbox
(:mod:`verirl.sandbox`, never in this process) against hidden tests whose expected values come
from the environment's reference solution:

- reward = share of hidden tests passed (partial credit), ``correct`` only when all pass;
- −1 when no code block can be extracted (RLVE's wrong-format penalty);
- the tests run in order in one sandboxed execution with a CPU-time limit sized so that the
  intended algorithm passes and brute force does not; tests not reached count as failed;
- feedback (``Verdict.detail``) names *one* failing test — its input, the expected and the
  returned value, or the error's last line — never the hidden tests as a whole.

Trust boundary: the program runs in the sandbox's candidate process; the harness
(:data:`HARNESS`) runs in its checker process, calls the function on each test's arguments
and reports what it *returned* (plain data) on a channel the program cannot reach
(:meth:`verirl.sandbox.Sandbox.run_checked`, ``docs/security.md``). Expected values never
enter the sandbox and the comparison happens here; the program's own output is never read.

Subclasses declare ``entry`` and ``signature`` and implement :meth:`params`, :meth:`spec`,
:meth:`cases` (small inputs, edge cases first), optionally :meth:`stress` (large inputs built
from ``(n, seed)`` at check time, so problems stay small), and :meth:`reference` (a
module-level, self-contained function: its source is the reference program).
"""

from __future__ import annotations

import functools
import inspect
import json
import random
import re
import textwrap
from abc import abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from verirl.envs.base import WRONG_FORMAT, Environment, Instance, graded, seeded_rng
from verirl.envs.reading.formats import AnswerFormat, code_block
from verirl.sandbox import Execution, default_sandbox
from verirl.types import Problem, Verdict

MAX_CODE_CHARS = 50_000

# The trusted half of a checked run (see verirl.sandbox.Sandbox.run_checked): it calls the
# candidate's function on each test's arguments in the checker process (all calls sent at
# once, answers read as they come) and reports what came back, as plain data, on the channel
# only the checker holds.
HARNESS = r"""
try:
    for _i, (_ok, _got) in enumerate(candidate.map(data["tests"])):
        if not _ok:
            report({"i": _i, "error": _got[:300]})
            continue
        try:
            report({"i": _i, "got": _got})
        except (TypeError, ValueError) as _e:
            report({"i": _i, "error": ("%s: %s" % (type(_e).__name__, _e))[:300]})
except CandidateLoadError as _e:
    report({"load": str(_e)[:300]})
except CandidateGone:
    pass
"""


def extract_code(text: str) -> str | None:
    """The last fenced code block of ``text`` (```` ```python ````, ```` ```py ````,
    ```` ```python3 ```` or no language); an unclosed last fence yields the rest of the text.
    ``None`` without a fence. Linear in ``len(text)``."""
    if not isinstance(text, str):
        return None
    blocks: list[str] = []
    pos = 0
    while True:
        start = text.find("```", pos)
        if start < 0:
            break
        eol = text.find("\n", start + 3)
        if eol < 0:
            break
        lang = text[start + 3 : eol].strip().lower()
        end = text.find("```", eol + 1)
        body = text[eol + 1 : end if end >= 0 else len(text)]
        if lang in ("", "python", "py", "python3"):
            blocks.append(body)
        if end < 0:
            break
        pos = end + 3
    return blocks[-1] if blocks else None


_ONE_OF_MANY = re.compile(r"\b1 (place|position|character|word|item)s\b")


def step_text(template: str, **values: Any) -> str:
    """A pipeline step's wording with its parameters filled in, "1 places" made "1 place"."""
    return _ONE_OF_MANY.sub(r"1 \1", template.format(**values))


def _show(value: Any, limit: int = 160) -> str:
    text = json.dumps(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _args_text(args: Sequence[Any], limit: int = 200) -> str:
    return (
        _show(list(args), limit)[1:-1]
        if len(_show(list(args), limit)) < limit
        else _show(list(args), limit)
    )


class ProgramSynthesis(Environment):
    """Base of the program-synthesis environments (see the module docstring)."""

    answer_format: ClassVar[AnswerFormat] = code_block("python")
    answer_instruction: ClassVar[str] = (
        "Write the function in a ```python code block. It is called on hidden tests; "
        "printing does nothing."
    )
    clean_answers: ClassVar[bool] = False
    size_measure: ClassVar[str | None] = "specification steps plus the largest test's size"
    tags: ClassVar[tuple[str, ...]] = ("code",)
    max_difficulty: ClassVar[int] = 60

    entry: ClassVar[str] = "solve"
    signature: ClassVar[str]
    cpu_s: ClassVar[float] = 4.0
    """CPU seconds for the whole hidden-test run (the reference needs far less; brute force
    on the stress tests far more)."""
    n_cases: ClassVar[int] = 10
    n_examples: ClassVar[int] = 3

    # ---- what a task declares --------------------------------------------------------------
    @abstractmethod
    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        """The task's parameters (JSON values): which steps, constants, variants."""

    @abstractmethod
    def spec(self, p: dict[str, Any]) -> str:
        """The specification text for parameters ``p``."""

    @abstractmethod
    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        """Argument lists of the small hidden tests (edge cases first)."""

    def stress(self, p: dict[str, Any], difficulty: int) -> list[int]:
        """Sizes n of the large tests at ``difficulty`` (none by default)."""
        return []

    def stress_args(self, p: dict[str, Any], n: int, seed: int) -> list[Any]:
        """The arguments of a large test of size ``n`` (deterministic in ``seed``)."""
        raise NotImplementedError

    reference: ClassVar[Callable[..., Any]]
    """``reference(p, *args)``: a module-level, self-contained function (its imports inside)."""

    helpers: ClassVar[tuple[Callable[..., Any], ...]] = ()
    """Module-level functions the reference calls (their source joins the program)."""

    # ---- the generator ---------------------------------------------------------------------
    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        p = self.params(difficulty, rng)
        cases = self.cases(p, difficulty, rng)[: self.n_cases + difficulty]
        ref = type(self).reference
        tests = [[list(args), _jsonable(ref(p, *args))] for args in cases]
        sizes = self.stress(p, difficulty)
        stress = [[n, rng.randrange(10**9)] for n in sizes]
        shown = sorted(rng.sample(range(len(tests)), min(self.n_examples, len(tests))))
        examples = "\n".join(
            f"    {self.entry}({_args_text(tests[i][0], 300)}) == {_show(tests[i][1], 300)}"
            for i in shown
        )
        limits = ""
        if sizes:
            limits = (
                f"\n\nInputs can be as large as n = {max(sizes)}; all tests together must "
                f"finish within {self.cpu_s:g} CPU seconds, so choose an efficient algorithm."
            )
        prompt = (
            f"Write a Python function\n\n    {self.signature}\n\n{self.spec(p)}{limits}\n\n"
            f"Examples:\n{examples}"
        )
        data = {"params": p, "tests": tests, "stress": stress, "steps": p.get("steps", [])}
        return Instance(prompt=prompt, answer=self.reference_program(p), data=data)

    def reference_program(self, p: dict[str, Any]) -> str:
        """The reference solution as a program: the reference's source with ``p`` bound."""
        funcs = [*type(self).helpers, type(self).reference]
        source = "\n\n".join(textwrap.dedent(inspect.getsource(f)) for f in funcs)
        source = "\n".join(ln for ln in source.splitlines() if not ln.startswith("@"))
        ref_name = type(self).reference.__name__
        params = _signature_params(self.signature)
        return (
            f"from typing import Any\n\n\n{source}\n\nP = {p!r}\n\n\n{self.signature}:\n"
            f"    return {ref_name}(P, {', '.join(params)})\n"
        )

    # ---- hidden tests ----------------------------------------------------------------------
    def hidden_tests(self, problem: Problem) -> list[tuple[list[Any], Any]]:
        """Every hidden test (arguments, expected value): the small ones, then the large
        ones built from ``(n, seed)`` with expected values from the reference."""
        tests = [(list(a), e) for a, e in problem.data["tests"]]
        key = json.dumps([problem.env, problem.data["params"], problem.data["stress"]])
        return tests + list(self._stress_tests(key))

    @functools.lru_cache(maxsize=64)  # noqa: B019  (instances are registry singletons)
    def _stress_tests(self, key: str) -> tuple[tuple[list[Any], Any], ...]:
        _, p, stress = json.loads(key)
        out = []
        for n, seed in stress:
            args = self.stress_args(p, n, seed)
            out.append((args, _jsonable(type(self).reference(p, *args))))
        return tuple(out)

    # ---- the verifier ----------------------------------------------------------------------
    def verify(self, problem: Problem, output: str) -> Verdict:
        code = extract_code(output)
        if code is None:
            return Verdict(WRONG_FORMAT, False, "no ```python code block found")
        return self.check(problem, code)

    def check(self, problem: Problem, answer: str) -> Verdict:
        if len(answer) > MAX_CODE_CHARS:
            return graded(0.0, False, f"the program is longer than {MAX_CODE_CHARS} characters")
        tests = self.hidden_tests(problem)
        run = run_tests(answer, self.entry, [a for a, _ in tests], self.cpu_s)
        return score_tests(self.entry, tests, run)

    def solve(self, problem: Problem) -> str:
        return self.reference_program(problem.data["params"])

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        """The answer with every return value perturbed (wrong on every test)."""
        return perturbed(answer, self.entry)

    def surface_forms(self, problem: Problem) -> list[str]:
        """Equivalent programs: the reference, under a ```` ```py ```` fence, with a comment
        and docstring, and behind an alias."""
        code = self.solve(problem)
        alias = code.replace(f"def {self.entry}(", f"def _impl_{self.entry}(") + (
            f"\n\n{self.entry} = _impl_{self.entry}\n"
        )
        return [
            code,
            f"```py\n{code}\n```",
            f'# solution\n"""Reference."""\nimport math\n\n{code}\n\n# end',
            alias,
        ]

    def near_misses(self, problem: Problem) -> list[str]:
        """Buggy programs: every value perturbed, right on the first call only, a syntax
        error, the wrong function name."""
        code = self.solve(problem)
        first_only = (
            f"{code}\n\n_real = {self.entry}\n_calls = [0]\n\n\n"
            f"def {self.entry}(*args):\n    _calls[0] += 1\n    r = _real(*args)\n"
            f"    return r if _calls[0] == 1 else _bump(r)\n\n\n{_BUMP}"
        )
        return [
            perturbed(code, self.entry),
            first_only,
            code + "\n\ndef broken(:\n    pass\n",
            code.replace(f"def {self.entry}(", f"def {self.entry}_v2("),
        ]

    def size(self, problem: Problem) -> float:
        stress = problem.data["stress"]
        return float(len(problem.data["steps"]) * 10 + (max(n for n, _ in stress) if stress else 0))

    def feedback(self, problem: Problem, output: str, verdict: Verdict) -> str:
        return verdict.detail or ("correct" if verdict.correct else "not correct yet")


_BUMP = """def _bump(r):
    if isinstance(r, bool):
        return not r
    if isinstance(r, int):
        return r + 1
    if isinstance(r, str):
        return r + "#"
    if isinstance(r, list):
        return r + [0]
    return [r]
"""


def perturbed(code: str, entry: str) -> str:
    """``code`` with ``entry`` wrapped so that every value it returns changes."""
    return (
        f"{code}\n\n_real_{entry} = {entry}\n\n\n{_BUMP}\n\n"
        f"def {entry}(*args):\n    return _bump(_real_{entry}(*args))\n"
    )


def _signature_params(signature: str) -> list[str]:
    inside = signature[signature.index("(") + 1 : signature.rindex(")")]
    return [part.split(":")[0].strip() for part in inside.split(",") if part.strip()]


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value))


def run_tests(code: str, entry: str, tests: Sequence[Sequence[Any]], cpu_s: float) -> Execution:
    """Run ``entry`` of ``code`` on each argument list of ``tests`` in one checked sandbox
    run (the harness reports one result per test as it goes: ``Execution.reports``)."""
    return default_sandbox().run_checked(
        code,
        entry,
        HARNESS,
        data={"tests": [list(t) for t in tests]},
        cpu_s=cpu_s,
        wall_s=1.5 * cpu_s + 1,
        output_bytes=4_000_000,
    )


def score_tests(entry: str, tests: Sequence[tuple[Sequence[Any], Any]], run: Execution) -> Verdict:
    """The verdict of a harness run: share of tests passed, one failing test as feedback."""
    results: dict[int, dict[str, Any]] = {}
    load_error = None
    for item in run.reports:
        if not isinstance(item, dict):
            continue
        if "load" in item and load_error is None:
            load_error = str(item["load"])
        i = item.get("i")
        if isinstance(i, int) and i not in results:
            results[i] = item
    if load_error is not None:
        return graded(0.0, False, f"the program does not load: {load_error}")
    if run.status == "sandbox_error":
        return Verdict(
            0.0,
            False,
            "the sandbox could not run the program",
            extra={"status": "sandbox_error", "error": run.error_line},
        )
    passed = 0
    first_fail = None
    for i, (args, expected) in enumerate(tests):
        item = results.get(i)
        if item is not None and "got" in item and item["got"] == expected:
            passed += 1
        elif first_fail is None:
            first_fail = (i, args, expected, item)
    if first_fail is None:
        return graded(1.0, True, f"all {len(tests)} tests pass")
    i, args, expected, item = first_fail
    call = f"{entry}({_args_text(args)})"
    if item is None:
        why = {
            "cpu_time": "did not finish within the CPU-time limit (too slow)",
            "timeout": "did not finish within the time limit (too slow)",
        }.get(run.status, f"was not reached: the program {run.reason()}")
        what = f"{call} {why}"
    elif "error" in item:
        what = f"{call} raised {item['error']}"
    else:
        what = f"{call} should return {_show(expected)}, got {_show(item.get('got'))}"
    return graded(
        passed / len(tests),
        False,
        f"{passed} of {len(tests)} tests pass; failing test: {what}",
    )


__all__ = [
    "ProgramSynthesis",
    "extract_code",
    "perturbed",
    "run_tests",
    "score_tests",
    "seeded_rng",
]
