"""Every script in ``bench/`` runs end to end at tiny sizes, as a user runs it
(``python bench/<script> <args>`` in a subprocess), and prints what it promises: its ratio or
summary line parses as a number, the JSON it writes has its keys and positive counts.

:data:`SMOKES` is the table: one :class:`Smoke` per run (a script may have several, e.g. the
server bench's load and soak modes). :data:`MODULES` lists the files in ``bench/`` that are
plug-ins rather than scripts, each with the smoke run that loads it. A file in ``bench/`` that
is in neither fails :func:`test_every_bench_script_has_a_smoke_run`: a new bench script comes
with its smoke run.

Markers follow ``./run.sh test``'s stages: ``slow`` (over ~20 s here) runs in the second
stage, ``vllm`` in the vLLM stage, ``ray`` and ``coq`` mark what a run needs (skipped where it
is missing). The speed claims themselves are the scripts' business (a ratio against a baseline
measured in the same run); nothing here asserts a wall-clock time.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.provers.coq.marks import HAVE_COQ
from verirl.allocator import find_tcmalloc

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"


@dataclass(frozen=True)
class Ran:
    """What a smoke run left: its output and its temporary directory (``{tmp}`` in the args)."""

    stdout: str
    stderr: str
    tmp: Path

    def tail(self) -> str:
        return f"--- stdout:\n{self.stdout[-3000:]}\n--- stderr:\n{self.stderr[-3000:]}"

    def number(self, pattern: str, text: str | None = None) -> float:
        """The first group of ``pattern`` (a regular expression) in stdout, as a float."""
        match = re.search(pattern, self.stdout if text is None else text, re.MULTILINE)
        assert match is not None, f"no line matches {pattern!r}\n{self.tail()}"
        return float(match.group(1).replace(",", ""))

    def shows(self, value: float, pattern: str) -> None:
        """Assert that stdout shows ``value`` where ``pattern``'s first group is, at the
        precision it was printed with (a ratio printed as 0.46 is 0.455 to 0.465)."""
        match = re.search(pattern, self.stdout, re.MULTILINE)
        assert match is not None, f"no line matches {pattern!r}\n{self.tail()}"
        shown = match.group(1).replace(",", "")
        decimals = len(shown.partition(".")[2])
        assert shown == f"{value:.{decimals}f}", (shown, value)

    def json_file(self, name: str) -> Any:
        path = self.tmp / name
        assert path.is_file(), f"the script wrote no {name}\n{self.tail()}"
        return json.loads(path.read_text())

    def last_json_line(self) -> Any:
        lines = [ln for ln in self.stdout.splitlines() if ln.startswith("{")]
        assert lines, f"no JSON line in the output\n{self.tail()}"
        return json.loads(lines[-1])


@dataclass(frozen=True)
class Smoke:
    """One smoke run: ``python bench/<script> <args>`` (cwd: a fresh directory), then ``check``
    on what it left.

    ``args`` may hold ``{tmp}`` (a fresh directory), ``{tiny_model}`` (a tiny random Llama with
    SmolLM2's tokenizer, saved) and ``{vllm_model}`` (the same with head dimension 64, which
    vLLM's CPU attention needs). ``needs``: modules that must be installed (skipped with the
    reason otherwise); ``coq``: needs coqc and coqidetop."""

    script: str
    args: str  # as on the command line (split with shlex)
    check: Callable[[Ran], None]
    marks: Sequence[pytest.MarkDecorator] = ()
    mode: str = ""  # told apart in the test id when a script has several runs
    needs: Sequence[str] = ()
    coq: bool = False
    timeout_s: float = 900.0

    @property
    def id(self) -> str:
        return self.script.removesuffix(".py") + (f"-{self.mode}" if self.mode else "")


# ---- the checks ------------------------------------------------------------------------------
def _simulate_curriculum(r: Ran) -> None:
    names = ("adaptive", "static [0,1]", "static [0,20]", "static [0,100]")
    for name in names:
        mean = r.number(rf"^{re.escape(name)}\s+([\d.]+)\s")
        assert 0.0 <= mean <= 1.0, (name, mean)
    assert "columns @k" in r.stdout


def _verification(r: Ran) -> None:
    assert r.number(r"^inline:\s+([\d.]+) s") > 0
    assert r.number(r"^processes \(2 workers\):\s+([\d.]+) s") > 0
    assert r.number(r"^speed-up: ([\d.]+)x") > 0


def _coq_checkers(r: Ran) -> None:
    out = r.last_json_line()
    assert out["proofs"] == 4 and out["disagreements"] == 0, out
    assert out["coqc_per_s"] > 0 and out["ide_per_s"] > 0
    assert out["ratio"] == pytest.approx(out["ide_per_s"] / out["coqc_per_s"])
    assert "proofs: 4 (2 pass, 2 fail)" in r.stdout  # every other proof corrupted


def _sandbox(r: Ran) -> None:
    assert re.search(r"^isolation mode: \w+", r.stdout, re.MULTILINE), r.tail()
    for label in ("warm pool", "python -c", "cold sandbox", "checked runs"):
        assert r.number(rf"^{re.escape(label)}\s*:\s+([\d.]+) exec/s") > 0, label
    assert r.number(r"warm / python -c: ([\d.]+)x") > 0
    assert r.number(r"\(2 per execution, (\d+) tests\)") == 10
    assert r.number(r"([\d.]+) tests/s") > 0


def _fuzz_verifiers(r: Ran) -> None:
    assert "40 outputs over 2 environments" in r.stdout, r.tail()
    assert r.number(r"^(\d+) failures") == 0
    cases = r.json_file("slow.json")
    assert len(cases) == 2
    assert {c["env"] for c in cases} <= {"addition", "derivative"}
    assert all(set(c) == {"env", "difficulty", "seed", "output"} for c in cases)


def _bench_envs(r: Ran) -> None:
    out = r.json_file("envs.json")
    assert [row["env"] for row in out["rows"]] == ["addition", "chain_sum"]
    for row in out["rows"]:
        assert "ours_error" not in row, row
        assert row["ours"]["rate"] > 0 and row["ours"]["ref_failures"] == 0, row
    if importlib.util.find_spec("reasoning_gym") is not None:
        assert {p["env"] for p in out["pairs"]} == {"addition", "chain_sum"}
        assert out["pair_count"] == 2 and out["median_ratio"] > 0, out
        assert all(p["ratio"] > 0 for p in out["pairs"])


def _fuzz_server(r: Ran) -> None:
    assert r.number(r"^HTTP requests: ([\d,]+) ") == 100
    assert r.number(r"^5xx: (\d+);") == 0
    assert r.number(r"4xx without a one-line detail: (\d+)") == 0
    assert r.number(r"^WebSocket messages: ([\d,]+)") >= 20
    assert "server alive at the end: True" in r.stdout


def _server_load(r: Ran) -> None:
    assert r.number(r"Environment\.verify ([\d,]+)/s") > 0
    for stack in ("fast", "plain"):
        block = r.stdout.split(f"server stack '{stack}'", 1)[1]
        for clients in (1, 2):
            assert r.number(rf"^\s+{clients}\s+([\d,]+)\s", block) > 0, (stack, clients)
    for clients in (1, 2):
        assert r.number(rf"^p99 at {clients} clients: fast / plain = ([\d.]+)") > 0


def _server_soak(r: Ran) -> None:
    assert r.number(r"^t=\s*\d+s rss=\s*([\d.]+) MiB") > 0
    assert re.search(r"peak \d+ MiB: (within|ABOVE)", r.stdout), r.tail()
    assert r.number(r"received (\d+) verdicts") > 0
    assert r.number(r": lost (\d+);") == 0
    assert r.number(r"wrong verdicts (\d+);") == 0
    assert r.number(r"; 5xx (\d+);") == 0
    assert ": True (after kill -9 and restart)" in r.stdout  # the seed counter survived


def _cer_scoring(r: Ran) -> None:
    out = r.json_file("cer.json")
    assert out["pairs"] > 0 and out["unique_pairs"] > 0, out
    assert out["answer_share"] == 1.0  # --append-answers gives every rollout an answer
    assert out["max_rel_reward_diff"] < 1e-4  # the two scorers agree
    assert 0 < out["tokens_fast"] < out["tokens_reference"]  # the prefix cache forwards less
    assert out["speedup"] > 0 and out["generation_s"] > 0
    assert r.number(r"→ ([\d.]+)x") > 0
    assert r.last_json_line() == out


def _cer_auroc(r: Ran) -> None:
    out = r.last_json_line()
    assert 0 < out["positives"] < out["rows"], out
    assert out["problems"] > 0
    for subset in ("all", "non_canonical"):
        for method in ("exact_match", "math_verify", "verifree", "cer", "cer_closed"):
            for kind in ("pooled", "per_problem_mean"):
                assert 0.0 <= out[subset][method][kind] <= 1.0, (subset, method, kind)
    rows = (r.tmp / "rows.jsonl").read_text().splitlines()
    assert len(rows) == out["rows"]


def _tcpo(r: Ran) -> None:
    start = r.stdout.index("\n{") + 1
    out = json.loads(r.stdout[start:])
    assert out["update"].startswith("verirl.train.learner.Learner.update"), out["update"]
    assert (out["K"], out["L"], out["M"]) == (2, 2, 2)
    assert out["step_off_s"] > 0 and out["step_on_s"] > 0
    assert out["cf_s"] > 0 and out["cf_extra_token_share"] > 0  # the counterfactual ran
    assert 0 < out["cf_share_of_step"] < 1
    assert re.search(r"^rep 0: off .* \| on .*cf", r.stdout, re.MULTILINE), r.tail()


def _precision(r: Ran) -> None:
    assert re.search(r"^placement: \S", r.stdout, re.MULTILINE), r.tail()
    for side in ("fp32", "bf16"):
        assert r.number(rf"^repeat 0 {side}: ([\d.]+) ms/generated token") > 0
    for key in ("rollout_ms_per_generated_token", "train_ms_per_trained_token", "step_s"):
        assert r.number(rf"^{key}: .* ratio bf16/fp32 = ([\d.]+)") > 0, key


def _async(r: Ran) -> None:
    assert r.number(r"latency-k0-r0: .* staleness max (\d+)") == 0
    assert r.number(r"latency-k1-r0: .* staleness max (\d+)") == 1
    # k = 0 waits for every batch's verification: the plug-in's 0.2 s sleep
    assert r.number(r"latency-k0-r0: .* waiting for rollouts ([\d.]+) s") >= 0.2
    for k in (0, 1):
        assert r.number(rf"^repeat 0 latency\s+k{k}:\s+([\d.]+) steps/h") > 0
    assert r.number(r"ratio k1/k0 ([\d.]+)x") > 0


def _async_accuracy(r: Ran) -> None:
    assert "sync-seed1: accuracy after 0.250 (given, not run here)" in r.stdout, r.tail()
    before = r.number(r"k1-seed1: accuracy ([\d.]+) ->")
    after = r.number(r"k1-seed1: accuracy [\d.]+ -> ([\d.]+) after 2 steps")
    assert 0 <= before <= 1 and 0 <= after <= 1
    assert r.number(r"k1-seed1: .* staleness max (\d+)") == 1
    assert r.number(r"^k=0 \(sync\)\s+after: mean ([\d.]+)") == 0.25
    assert r.number(r"^k=1 - k=0: ([+-][\d.]+)") == pytest.approx(after - 0.25, abs=1e-3)


def _ray(r: Ran) -> None:
    assert r.number(r"coq proofs \(mixed\): 4 per pass \((\d+) pass\)") == 2
    assert r.number(r"^1 verifier actor : +([\d.]+) proofs/s") > 0
    assert r.number(r"^2 verifier actors: +([\d.]+) proofs/s") > 0
    assert r.number(r"^ratio 2/1 +: +([\d.]+)x") > 0
    for backend in ("local", "ray  "):
        line = re.search(rf"^{backend} step s: (.+)$", r.stdout, re.MULTILINE)
        assert line is not None, r.tail()
        assert [float(t) > 0 for t in line.group(1).split(", ")] == [True, True]
    assert re.search(r"^steps 2\.\.2: .* overhead [+-][\d.]+%", r.stdout, re.MULTILINE)


def _trl_throughput(r: Ran) -> None:
    out = r.json_file("trl.json")
    r.shows(out["fp32"]["ratio"], r"ratio = verirl / TRL = ([\d.]+)x")
    for side in ("verirl", "trl"):
        s = out["fp32"]["sides"][side]
        assert s["steps"] == 1 and s["completion_tokens"] > 0, (side, s)
        assert s["tokens"] > s["completion_tokens"]  # trained tokens counted too
        assert s["autocast"] == "off / off", (side, s)  # fp32: no autocast anywhere
        [run] = out["fp32"]["runs"][side]
        assert run["param_dtype"] == "torch.float32" and run["trained_tokens"] > 0


def _memory(r: Ran) -> None:
    out = r.json_file("memory.json")
    [row] = out["rows"]
    assert row["plan_gb"] > 0
    for side in ("verirl", "trl"):
        [run] = row["runs"][side]
        assert "error" not in run, (side, run.get("error"), run.get("tail"))
        assert run["peak_gb"] > 0 and len(run["step_s"]) == 1, (side, run)
    assert row["runs"]["verirl"][0]["checkpointing"] is True
    assert row["runs"]["trl"][0]["micro_batch"] == 4  # P·G = 2 x 2 in one micro-batch
    assert r.number(r"ratio verirl/trl ([\d.]+)") > 0
    longest = out["longest_response_20gib"]  # from the plan: chunked head + checkpointing
    assert longest["now"] > longest["before"] > 0, longest
    assert r.number(r"before \d+ tokens, now (\d+) tokens") == longest["now"]
    # every side under one allocator: by default TCMalloc where installed, as verirl train runs
    allocator = out["args"]["allocator"]
    assert f"allocator={allocator}" in r.stdout
    if "random" not in out["args"]["responses"]:
        assert allocator == ("tcmalloc" if find_tcmalloc() else "system")


def _memory_phases(r: Ran) -> None:
    """``--phases``: each side's step split; the phases inside the step add up to at most it."""
    _memory(r)
    runs = r.json_file("memory.json")["rows"][0]["runs"]
    for side in ("verirl", "trl"):
        split = runs[side][0]["phases"]
        assert split["forward"] > 0 and split["backward"] > 0, (side, split)
        assert 0 < split["forward_head"] < split["forward"], (side, split)
        assert 0 < split["backward_head"] < split["backward"], (side, split)
        assert split["backward_recompute"] > 0, (side, split)  # checkpointing on, both sides
        top = ("generation", "rollout_other", "forward", "backward", "optimizer", "other")
        assert sum(split[k] for k in top) == pytest.approx(split["step"]), (side, split)
    assert re.search(r"^\s+of which layer recompute\s+[\d.]+ \(", r.stdout, re.MULTILINE)


def _memory_random(r: Ran) -> None:
    """``--responses random``: both sides train full-length responses (the stub's tokens);
    verirl's side builds its engine with a w8a16 sampling copy."""
    _memory(r)
    assert "responses=random" in r.stdout and "allocator=system" in r.stdout
    assert "verirl's sampling precision=w8a16" in r.stdout
    runs = r.json_file("memory.json")["rows"][0]["runs"]
    for side in ("verirl", "trl"):  # every response at the full 8 tokens, on both sides
        assert runs[side][0]["response_tokens"] == [8.0], (side, runs[side][0])


def _vllm_engine(r: Ran) -> None:
    for side in ("hf", "vllm"):
        assert r.number(rf"^{side}\s+start-up .* generate ([\d.]+) tok/s") > 0
    assert r.number(r"generated tokens/s ratio vllm/hf: ([\d.]+)x") > 0
    # a tiny model's weights sync in well under 0.05% of its step: printed as 0.0
    assert 0 <= r.number(r"weight-sync share of a vllm step: ([\d.]+)%") <= 100
    assert r.number(r"step time ratio hf/vllm: ([\d.]+)x") > 0
    assert "engine/learner drift" in r.stdout


def _lora_sync(r: Ran) -> None:
    for side in ("merged", "adapter"):
        assert r.number(rf"^{side}\s+start-up .* \| sync ([\d.]+) s") > 0
        assert r.number(rf"^{side}\s+start-up .* generate ([\d.]+) tok/s") > 0
    assert r.number(r"sync seconds ratio merged/adapter: ([\d.]+)x") > 0
    # a tiny model's merged layers still outweigh its adapter (1.1 MiB against 0.3)
    assert r.number(r"sync MiB ratio merged/adapter: ([\d.]+)x") > 1
    assert r.number(r"generated tokens/s ratio adapter/merged: ([\d.]+)x") > 0


def _gpu_check(r: Ran) -> None:
    rows = {ln.split()[0]: ln for ln in r.stdout.splitlines()[2:] if ln.strip()}
    runs_here = ("doctor", "grpo", "lora", "cer", "process_credit", "tcpo")
    memory = ("logprob_memory", "checkpointing", "memory_flat", "memory_plan")
    cuda_only = ("fsdp2", "torchrun_dp2", "vllm", "vllm_fp8", "copy_bf16", "vllm_lora")
    assert set(rows) == {*runs_here, *memory, *cuda_only}, r.tail()
    for name in (*runs_here, *memory):
        assert rows[name].split()[1] == "ok", rows[name]
    for name in cuda_only:
        assert "skipped (CUDA only)" in rows[name], rows[name]


def _gpu_step(r: Ran) -> None:
    assert r.number(r"^hf\s+generated ([\d.]+) tok/s") > 0
    assert r.number(r"\| step ([\d.]+) tok/s") > 0
    assert "peak n/a (CPU)" in r.stdout
    assert "vllm" not in r.stdout.split("CPU smoke run", 1)[1]  # the hf engine only on CPU


def _rollout(r: Ran) -> None:
    """One process runs the three workloads (each pays the imports and the model once)."""
    out = r.json_file("rollout.json")
    _rollout_fixed(r, out["fixed"])
    _rollout_mixed(r, out["mixed"])
    _rollout_stream(r, out["stream"])
    _rollout_mismatch(r, out["mismatch"])


def _rollout_fixed(r: Ran, out: dict[str, Any]) -> None:
    rates = out["4x8"]
    assert set(rates) == {"hf", "hf-w8a16", "hf-int8", "hf-bf16", "generate", "floor"}
    assert rates["hf"]["ratio"] == [1.0]
    for arm, row in rates.items():
        assert row["tok_s"][0] > 0, arm
        assert r.number(rf"^  {re.escape(arm)}\s+([\d.]+) tok/s") > 0
        assert r.number(rf"^  {re.escape(arm)}\s.*ratio ([\d.]+)") > 0


def _rollout_mixed(r: Ran, out: dict[str, Any]) -> None:
    rates = out["4x2 batch 4"]
    assert set(rates) == {"chunked", "continuous"} and rates["chunked"]["ratio"] == [1.0]
    assert rates["continuous"]["tok_s"][0] > 0
    assert r.number(r"max (\d+) \(of 8\)") <= 8


def _rollout_stream(r: Ran, out: dict[str, Any]) -> None:
    assert out["identical"] is True and "verdicts identical: yes" in r.stdout
    assert len(out["seconds"]["after"]) == len(out["seconds"]["streamed"]) == 1
    assert r.number(r"^speed-up after/streamed: ([\d.]+)") > 0


def _rollout_mismatch(r: Ran, out: dict[str, Any]) -> None:
    assert set(out) == {"w8a16", "bf16", "int8"}
    for copy, row in out.items():  # a copy is near fp32, never equal to it
        assert 0 < row["diff_mean"] <= row["diff_max"] and row["kl"] > 0, (copy, row)
        r.shows(row["diff_mean"], rf"^  {copy}\s+mean \|Δ log-prob\| ([\d.]+)")
    assert r.number(r"over (\d+) sampled tokens of 4 responses") > 0


SERVE = ("fastapi", "uvicorn", "httpx")
SMOKES: list[Smoke] = [
    Smoke(
        "simulate_curriculum.py",
        "--steps 20 --prompts 8 --group-size 4 --tau-num 16",
        _simulate_curriculum,
    ),
    Smoke("bench_verification.py", "--rollouts 8 --sleep 0.02 --workers 2", _verification),
    Smoke(
        "bench_coq_checkers.py",
        "--proofs 4 --repeats 1 --json",
        _coq_checkers,
        marks=[pytest.mark.coq],
        coq=True,
    ),
    Smoke("bench_sandbox.py", "--tests 10 --rounds 1 --per-program 2", _sandbox),
    Smoke(
        "fuzz_verifiers.py",
        "--count 40 --envs addition,derivative --top 2 --save-slowest {tmp}/slow.json",
        _fuzz_verifiers,
    ),
    Smoke(
        "bench_envs.py",
        "--n 4 --reps 1 --envs addition,chain_sum --json {tmp}/envs.json",
        _bench_envs,
    ),
    Smoke(
        "fuzz_server.py",
        "--requests 100 --ws-messages 20 --workers 2",
        _fuzz_server,
        needs=SERVE,
    ),
    Smoke(
        "bench_server.py",
        "--clients 1 2 --requests 20 --inproc 64 --stacks fast plain",
        _server_load,
        mode="load",
        needs=SERVE,
    ),
    Smoke(
        "bench_server.py",
        "--soak 10 --kill9 --good 1 --hostile 1",  # the first verdicts take seconds to come
        _server_soak,
        marks=[pytest.mark.slow],
        mode="soak",
        needs=SERVE,
    ),
    Smoke(
        "bench_cer_scoring.py",
        "--model tiny --prompts 2 --group-size 2 --n-samples 2 --max-new-tokens 8"
        " --append-answers --reps 1 --out {tmp}/cer.json",
        _cer_scoring,
    ),
    Smoke(
        "cer_auroc.py",
        "--model tiny --problems-per-env 1 --group-size 2 --max-new-tokens 8 --wrong 2"
        " --out {tmp}/rows.jsonl",
        _cer_auroc,
        marks=[pytest.mark.slow],
    ),
    Smoke(
        "bench_tcpo_counterfactual.py",
        "--model tiny --problems 2 --group 2 --turns 2 --top-l 2 --alternatives 2"
        " --max-new-tokens 8 --repeats 1",
        _tcpo,
        marks=[pytest.mark.slow],
    ),
    Smoke(
        "bench_precision.py",
        "--smoke --steps 1 --warmup 0 --repeats 1 --threads 1",
        _precision,
        marks=[pytest.mark.slow],
    ),
    Smoke(
        "bench_async.py",
        "--workloads latency --repeats 1 --steps 2 --latency 0.2",
        _async,
        marks=[pytest.mark.slow],
    ),
    Smoke(
        "bench_async_accuracy.py",
        "--seeds 1 --given sync:1=0.25 --problems 2 model.name={tiny_model} run.steps=2"
        " rollout.prompts_per_step=2 rollout.group_size=2 rollout.max_new_tokens=8"
        " eval.environments=[addition] eval.difficulties=[0] eval.problems=2"
        " eval.unseen_prompt=false",
        _async_accuracy,
        marks=[pytest.mark.slow],
    ),
    Smoke(
        "bench_ray.py",
        "--smoke --proofs 4 --repeats 1 --steps 2",
        _ray,
        marks=[pytest.mark.ray, pytest.mark.coq, pytest.mark.slow],
        needs=("ray",),
        coq=True,
    ),
    Smoke(
        "bench_trl_throughput.py",
        "--model tiny --steps 1 --warmup 0 --prompts 2 --group-size 2 --max-new-tokens 8"
        " --precision fp32 --json {tmp}/trl.json",
        _trl_throughput,
        marks=[pytest.mark.slow],
        needs=("trl", "datasets"),
    ),
    Smoke(
        "bench_memory.py",
        # verirl-auto and trl-best are the same code with one setting changed
        "--smoke --sides verirl,trl --steps 1 --phases --json {tmp}/memory.json",
        _memory_phases,
        marks=[pytest.mark.slow],
        needs=("trl", "datasets"),
    ),
    Smoke(
        "bench_memory.py",
        "--smoke --sides verirl,trl --steps 1 --responses random --allocator system"
        " --precision w8a16 --json {tmp}/memory.json",
        _memory_random,
        marks=[pytest.mark.slow],
        needs=("trl", "datasets"),
        mode="random",
    ),
    Smoke(
        "bench_vllm_engine.py",
        "--model {vllm_model} --prompts 2 --group-size 2 --max-new-tokens 8 --rounds 1 --steps 1",
        _vllm_engine,
        marks=[pytest.mark.vllm],
        needs=("vllm",),
    ),
    Smoke(
        "bench_rollout.py",
        "--workload fixed mixed stream mismatch --model tiny --sizes 4x8 --prompts 4"
        " --group-size 2"
        " --batch 4 --max-new-tokens 8 --latency 0.05 --workers 2 --repeats 1 --threads 1"
        " --json {tmp}/rollout.json",
        _rollout,
    ),
    Smoke(
        "bench_lora_sync.py",
        "--model {vllm_model} --syncs 2 --prompts 2 --group-size 2 --max-new-tokens 8 --rounds 1",
        _lora_sync,
        marks=[pytest.mark.vllm],
        needs=("vllm",),
    ),
    Smoke("gpu_check.py", "--device cpu --timeout 600", _gpu_check, marks=[pytest.mark.slow]),
    Smoke("gpu_step.py", "--device cpu --steps 1", _gpu_step),
]
"""The smoke runs, one entry per run: add one with every new script in ``bench/``."""

MODULES: dict[str, str] = {
    "plugin_slow_verifier.py": "bench_async.py",
    "step_phases.py": "bench_memory.py",
    "vllm_child.py": "bench_lora_sync.py",
}
"""Files in ``bench/`` that are plug-ins, not scripts: the smoke run that loads each (its
check asserts what the plug-in does there), plus a test of its own below."""


SMOKED_ELSEWHERE: dict[str, str] = {
    "bench_coq_headers.py": "test_bench_coq_headers.py",
}
"""Scripts whose smoke run is a test file of its own in this directory (it needs data from
``../shared`` and Coq libraries that a ``Smoke`` entry cannot skip on)."""


def test_every_bench_script_has_a_smoke_run() -> None:
    files = {p.name for p in BENCH.glob("*.py")}
    covered = {s.script for s in SMOKES}
    for script, test_file in SMOKED_ELSEWHERE.items():
        text = (Path(__file__).parent / test_file).read_text(encoding="utf-8")
        assert f"bench/{script}" in text or f'"{script}"' in text, (script, test_file)
    missing = files - covered - set(MODULES) - set(SMOKED_ELSEWHERE)
    assert not missing, (
        f"bench/ scripts without a smoke run: {sorted(missing)}; add a Smoke entry to SMOKES "
        "in tests/bench/test_smoke.py (tiny sizes, a check that reads the output)"
    )
    named = covered | set(MODULES) | set(SMOKED_ELSEWHERE)
    assert not named - files, "SMOKES names a script bench/ no longer has"
    assert set(MODULES.values()) <= covered
    assert len({s.id for s in SMOKES}) == len(SMOKES), "two runs of a script need a mode each"


def test_the_slow_verifier_plugin_scores_the_share_of_even_tokens() -> None:
    from bench.plugin_slow_verifier import SlowVerifier

    from verirl.rewards import REWARDS, RewardContext
    from verirl.types import Problem, Rollout

    source = REWARDS.get("bench_slow_verifier").build({"latency_s": 0.0})
    assert isinstance(source, SlowVerifier)
    problem = Problem("addition", 0, 0, "1 + 1?", "2", {})

    def rollout(ids: tuple[int, ...]) -> Rollout:
        return Rollout(problem, 0, (1,), ids, (0.0,) * len(ids), "", "stop")

    verdicts = source.score([rollout((2, 4, 5)), rollout((1, 3, 4)), rollout(())], RewardContext())
    assert [v.reward for v in verdicts] == pytest.approx([2 / 3, 1 / 3, 0.0])
    assert [v.correct for v in verdicts] == [True, False, False]


def test_a_vllm_child_gets_its_threads_no_reserved_core_and_the_repositorys_src(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from bench.vllm_child import ROOT, child_env

    monkeypatch.delenv("VLLM_CPU_KVCACHE_SPACE", raising=False)
    monkeypatch.setenv("PYTHONPATH", "elsewhere")
    env = child_env(3)
    assert env["OMP_NUM_THREADS"] == "3" and env["VLLM_CPU_NUM_OF_RESERVED_CPU"] == "0"
    assert env["VLLM_CPU_KVCACHE_SPACE"] == "1"
    assert env["PYTHONPATH"].split(os.pathsep) == [str(ROOT / "src"), "elsewhere"]
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "4")
    assert child_env(1)["VLLM_CPU_KVCACHE_SPACE"] == "4"


def test_step_phases_split_a_step_into_its_phases_and_time_a_nested_phase_once() -> None:
    from bench.step_phases import Phases

    phases = Phases()
    with phases.timing("generation"), phases.timing("generation"):  # counted once
        pass
    phases.seconds.update(generation=3.0, forward=2.0, backward=2.5, optimizer=0.5)
    split = phases.split(10.0, rollout_s=4.0)
    # rollout 4 s of which generation 3; other = 10 - (3 + 1 + 2 + 2.5 + 0.5)
    assert (split["rollout_other"], split["other"], split["step"]) == (1.0, 1.0, 10.0)
    phases.reset()
    assert phases.split(1.0)["generation"] == 0.0


@pytest.fixture(scope="module")
def vllm_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.vllm_support import peaked_model_dir

    return peaked_model_dir(tmp_path_factory.mktemp("vllm-model"))


@pytest.mark.parametrize("smoke", [pytest.param(s, marks=list(s.marks), id=s.id) for s in SMOKES])
def test_smoke_run(smoke: Smoke, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    for module in smoke.needs:  # found, not imported: the script imports it
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"bench/{smoke.script} needs {module}, not installed here")
    if smoke.coq and not HAVE_COQ:
        pytest.skip("Coq not installed (apt-get install coq)")
    places = {"tmp": str(tmp_path)}
    if "{tiny_model}" in smoke.args:
        places["tiny_model"] = str(request.getfixturevalue("tiny_model_dir"))
    if "{vllm_model}" in smoke.args:
        places["vllm_model"] = str(request.getfixturevalue("vllm_model"))
    args = [a.format(**places) for a in shlex.split(smoke.args)]
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "src"), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]
    )
    cmd = [sys.executable, str(BENCH / smoke.script), *args]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=smoke.timeout_s
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{' '.join(cmd)} ran past {smoke.timeout_s:.0f} s: {exc.output!r:.3000}")
    ran = Ran(proc.stdout, proc.stderr, tmp_path)
    assert proc.returncode == 0, f"{' '.join(cmd)} exited {proc.returncode}\n{ran.tail()}"
    smoke.check(ran)
