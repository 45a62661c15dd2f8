"""Program-synthesis environments: partial credit, time limits that rule out brute force,
a harness that cannot be forged, and code-block extraction."""

from __future__ import annotations

import pytest

from verirl.envs import env_names, get_env
from verirl.envs.code.synthesis import extract_code

CODE_ENVS = [n for n in env_names() if get_env(n).family.startswith("code/")]


def block(code: str) -> str:
    return f"Here it is:\n```python\n{code}\n```\nDone."


def test_at_least_twenty_code_environments_in_five_families() -> None:
    assert len(CODE_ENVS) >= 20
    families = {get_env(n).family for n in CODE_ENVS}
    assert families == {
        "code/strings",
        "code/lists",
        "code/numbers",
        "code/dynamic_programming",
        "code/simulation",
    }


def test_extraction_takes_the_last_python_block() -> None:
    text = "```python\nA\n```\n```bash\nB\n```\n```py\nC\n```"
    assert extract_code(text) == "C\n"
    assert extract_code("no fence") is None
    assert extract_code("```python\nunclosed") == "unclosed"


def test_no_code_block_is_the_format_penalty() -> None:
    env = get_env("code_max_subarray")
    verdict = env.verify(env.generate(3, 0), "def solve(xs): return max(xs)")
    assert verdict.reward == -1.0 and not verdict.correct


def test_partial_credit_is_the_share_of_tests_passed() -> None:
    env = get_env("code_list_pipeline")
    problem = env.generate(5, 1)
    first_only = env.near_misses(problem)[1]
    verdict = env.verify(problem, block(first_only))
    n = len(env.hidden_tests(problem))
    assert not verdict.correct and verdict.reward == pytest.approx(1 / n)
    assert verdict.detail.startswith(f"1 of {n} tests pass")


def test_brute_force_is_ruled_out_by_the_time_limit() -> None:
    env = get_env("code_pair_sums")
    problem = env.generate(14, 0)
    assert problem.data["stress"], "large tests from difficulty 6"
    brute = (
        "def solve(xs, target):\n"
        "    n = len(xs)\n"
        "    return sum(1 for i in range(n) for j in range(i + 1, n) if xs[i] + xs[j] == target)"
    )
    if problem.data["params"]["distinct"]:
        brute = (
            "def solve(xs, target):\n"
            "    total = 0\n"
            "    for j in range(len(xs)):\n"
            "        total += len({x for x in xs[:j] if x + xs[j] == target})\n"
            "    return total"
        )
    slow = env.verify(problem, block(brute))
    assert not slow.correct and 0.5 < slow.reward < 1.0, slow
    assert "CPU-time limit" in slow.detail or "time limit" in slow.detail
    assert env.verify(problem, block(env.solve(problem))).correct


def test_forged_harness_output_does_not_pass() -> None:
    env = get_env("code_inversions")
    problem = env.generate(4, 2)
    n = len(env.hidden_tests(problem))
    forged = (
        "import json, sys\n"
        "chan = sys.modules['__main__']._chan\n"
        f"for i in range({n}):\n"
        "    chan.write(json.dumps({'i': i, 'got': 0}) + '\\n')\n"
        "chan.flush()\n"
        "import os\n"
        "os._exit(0)\n"
        "def solve(xs):\n    return 0\n"
    )
    verdict = env.verify(problem, block(forged))
    assert not verdict.correct
    assert verdict.reward < 1.0


def test_a_program_that_kills_the_harness_scores_zero() -> None:
    env = get_env("code_run_length")
    problem = env.generate(2, 0)
    verdict = env.verify(problem, block("import os\nos.kill(os.getpid(), 9)\ndef solve(s): pass"))
    assert verdict.reward == 0.0 and not verdict.correct
