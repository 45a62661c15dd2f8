"""miniF2F-rocq: reading the files, the exclusion rule, and ``verirl eval --benchmark
minif2f-rocq`` end to end (classical provers and a tiny random model, live Coq)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.provers.coq.marks import needs_coq
from verirl.cli import main
from verirl.errors import UserInputError
from verirl.evals.formal import (
    CHECK_ROOTS,
    load_minif2f,
    read_minif2f_text,
    statement_exclusions,
)
from verirl.provers.coq.stdlib import library_axioms

FILES = {
    "easy_nat": "Require Import Arith.\n\nTheorem easy_nat : forall n : nat, n + 0 = n.\n"
    "Proof.\nAdmitted.\n",
    "bad_type": "Require Import Reals.\nOpen Scope R_scope.\n\n"
    "Theorem bad_type : forall x : R, x = 1%nat.\nProof.\n",
    "stdlib_prefix": "From Stdlib Require Import ZArith.\nOpen Scope Z_scope.\n\n"
    "Theorem stdlib_prefix : forall x : Z, x + 0 = x.\nProof.\nAdmitted.",
    "real_lra": "Require Import Reals.\nOpen Scope R_scope.\n\n"
    "Theorem real_lra : forall x : R, x + 1 > x.\nProof.\nAdmitted.\n",
}


@pytest.fixture
def minif2f(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A miniF2F-rocq-shaped directory of four theorems; the verirl cache in tmp_path."""
    root = tmp_path / "minif2f"
    (root / "test").mkdir(parents=True)
    for stem, text in FILES.items():
        (root / "test" / f"{stem}.v").write_text(text)
    monkeypatch.setenv("VERIRL_CACHE", str(tmp_path / "cache"))
    return root


def test_a_file_becomes_its_named_theorem_with_the_header_before_it() -> None:
    text = (
        "From Stdlib Require Import Reals.\nRequire Import Stdlib.Arith.Arith.\n"
        "Definition f (x : R) := x.\n"
        "Theorem helper : True.\nProof.\nAdmitted.\n\n"
        "Theorem p7 (x : R) :\n  f x = x.\nProof.\nAdmitted.\n"
        "Theorem p7' : False.\nProof.\nAdmitted."
    )
    item = read_minif2f_text(text, "p7", "valid")
    assert item.id == "valid/p7" and item.name == "p7"
    assert item.statement == "Theorem p7 (x : R) :\n  f x = x."
    assert item.context.splitlines()[:2] == [
        "From Coq Require Import Reals.",
        "Require Import Coq.Arith.Arith.",
    ]
    assert "Theorem helper" in item.context and "p7'" not in item.context
    problem = item.problem()
    assert problem.prelude == item.context + "\n" and problem.statement == item.statement
    assert problem.allowed_axioms == library_axioms()  # what the stdlib itself declares
    # no theorem named like the file: the last one
    assert read_minif2f_text("Theorem a : True.\nTheorem b : True.", "x", "test").name == "b"
    with pytest.raises(UserInputError, match="holds no theorem"):
        read_minif2f_text("Require Import Arith.", "x", "test")


def test_the_data_directory_is_found_or_named(minif2f: Path, tmp_path: Path) -> None:
    items, where = load_minif2f("test", str(minif2f))
    assert where == str(minif2f / "test") and len(items) == 4
    with pytest.raises(UserInputError, match="neither test/ nor valid/"):
        load_minif2f("test", str(tmp_path))
    with pytest.raises(UserInputError, match="splits test, valid"):
        load_minif2f("dev", str(minif2f))


@pytest.mark.coq
@needs_coq
def test_the_exclusion_rule_is_computed_and_cached(minif2f: Path) -> None:
    from verirl.provers.coq.idetop import CoqIdeChecker

    items, _ = load_minif2f("test", str(minif2f))
    with CoqIdeChecker(2, extra_roots=CHECK_ROOTS) as checker:
        excluded = statement_exclusions(items, checker)
    assert sorted(excluded) == ["test/bad_type"]
    assert "has type" in excluded["test/bad_type"]  # Coq's own typing error

    class NoCoq:
        extra_roots = CHECK_ROOTS

        def statement_error(self, *args: Any) -> str:
            raise AssertionError("the cache should have answered")

    assert statement_exclusions(items, NoCoq()) == excluded


@pytest.mark.coq
@needs_coq
def test_eval_runs_classical_provers_on_the_same_checker(minif2f: Path, tmp_path: Path) -> None:
    out = tmp_path / "provers.json"
    argv = ["eval", "--benchmark", "minif2f-rocq", "--data", str(minif2f)]
    code = main([*argv, "--prover", "intros; lia,intros; lra", "--out", str(out)])
    assert code == 0
    doc = json.loads(out.read_text())["benchmarks"]
    lia, lra = doc["minif2f-rocq/test [intros; lia]"], doc["minif2f-rocq/test [intros; lra]"]
    for entry in (lia, lra):
        assert entry["excluded"]["count"] == 1 and entry["theorems"] == 4
        assert entry["problems_evaluated"] == 3
        assert entry["budget"] == {"samples": 1, "max_new_tokens": None, "seconds_per_check": 15}
    proved = {name: {p["id"] for p in e["per_problem"] if p["c"]} for name, e in doc.items()}
    assert proved["minif2f-rocq/test [intros; lia]"] == {"test/easy_nat", "test/stdlib_prefix"}
    # the reals rest on the library's axioms: allowed, as for the library's own proofs
    assert proved["minif2f-rocq/test [intros; lra]"] == {"test/real_lra"}
    assert lia["metrics"]["pass@1"]["value"] == pytest.approx(2 / 3)


@pytest.mark.coq
@needs_coq
def test_eval_of_a_tiny_model_prints_the_rule_and_the_budget(
    minif2f: Path, tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "model.json"
    code = main(
        [
            "eval",
            "--benchmark",
            "minif2f-rocq",
            "--data",
            str(minif2f),
            "--samples",
            "2",
            "--temperature",
            "1.0",
            "--max-new-tokens",
            "8",
            "--out",
            str(out),
            f"model.name={tiny_model_dir}",
        ]
    )
    assert code == 0
    captured = capsys.readouterr()
    printed = captured.out + captured.err
    assert "excluded: the header and statement are not accepted" in printed
    assert "1 of 4" in printed and "pass@2" in printed and "2 × 8 tok, 15 s/check" in printed
    entry = json.loads(out.read_text())["benchmarks"][f"minif2f-rocq/test [{tiny_model_dir}]"]
    assert entry["problems_evaluated"] == 3 and entry["excluded"]["count"] == 1
    assert entry["budget"] == {"samples": 2, "max_new_tokens": 8, "seconds_per_check": 15}
    assert all(len(p["statuses"]) == 2 for p in entry["per_problem"])
    low, high = entry["metrics"]["pass@2"]["ci95"]
    assert low <= entry["metrics"]["pass@2"]["value"] <= high


def _no_manifest() -> str | None:
    from verirl.provers.coq.stdlib_manifest import load_manifest

    try:
        load_manifest()
    except UserInputError as exc:
        return str(exc)
    return None


@pytest.mark.coq
@needs_coq
@pytest.mark.skipif(_no_manifest() is not None, reason=str(_no_manifest()))
def test_eval_on_the_stdlib_s_held_out_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from verirl.provers.coq.stdlib import file_lemmas, file_split

    out = tmp_path / "stdlib.json"
    code = main(
        [
            "eval",
            "--benchmark",
            "coq-stdlib",
            "--difficulty",
            "0",
            "--limit",
            "4",
            "--prover",
            "auto,intros; auto",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    printed = "".join(capsys.readouterr())
    rule_line = next(line for line in printed.splitlines() if "excluded" in line)
    assert re.search(r": 0 of \d+$", rule_line), rule_line  # no excluded lemma: no "()"
    doc = json.loads(out.read_text())["benchmarks"]
    entry = doc["coq-stdlib/heldout [auto]"]
    assert entry["problems_evaluated"] == 4 and entry["split"] == "heldout"
    assert "the library's own proof is not accepted" in entry["excluded"]["rule"]
    for record in entry["per_problem"]:
        file, name = record["id"].split(":")
        assert file_split(file) == "heldout"
        (lemma,) = [m for m in file_lemmas(file) if m.name == name]
        assert lemma.tactics == 1  # difficulty 0: a one-tactic library proof
    # the same seeded sample for both provers
    other = doc["coq-stdlib/heldout [intros; auto]"]
    assert [p["id"] for p in other["per_problem"]] == [p["id"] for p in entry["per_problem"]]


@pytest.mark.skipif(_no_manifest() is not None, reason=str(_no_manifest()))
def test_the_model_is_asked_exactly_what_the_environment_asks() -> None:
    from verirl.envs import get_env
    from verirl.evals.formal import load_stdlib
    from verirl.evals.proving import ModelPolicy
    from verirl.provers.coq.stdlib import file_lemmas
    from verirl.rollout.prompts import PromptFormatter

    formatter = PromptFormatter(None, "You are a Coq expert.", (("demo", "```coq\nauto.\n```"),))
    policy = ModelPolicy("m", None, None, formatter)
    env = get_env("coq_stdlib")
    problem = env.generate(0, 2**31 + 5)  # a held-out draw
    items, _, _ = load_stdlib("heldout", difficulties=[0])
    lemma = file_lemmas(problem.data["file"])[problem.data["index"]]
    (item,) = [it for it in items if it.id == lemma.id]
    chat = policy.conversation(item)
    assert chat == formatter.messages(problem)  # system, demonstration, the same user turn
    assert chat[-1]["content"] == problem.prompt
