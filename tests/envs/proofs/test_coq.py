"""The ``coq_proofs`` environment: output format, extraction offsets, verdicts, shared checker."""

from __future__ import annotations

import random

import pytest

from tests.provers.coq.marks import needs_coq
from verirl.envs import get_env
from verirl.envs.proofs.coq import CoqProofs, extract_coq_proof
from verirl.errors import UserInputError
from verirl.provers.bank import bundled_bank
from verirl.provers.settings import CoqSettings, Provers, ProversConfig

STATEMENT = "Theorem t : forall n : nat, n + 0 = n."
PRELUDE = "Require Import Arith."


# ---- extraction ------------------------------------------------------------------------
def test_last_coq_block_is_taken_with_its_offset() -> None:
    out = (
        "Idea: induction.\n```coq\nProof. auto. Qed.\n```\nBetter:\n```coq\n"
        "Proof.\n  intros n. lia.\nQed.\n```\nDone."
    )
    text, offset = extract_coq_proof(out) or ("", -1)
    assert text == "Proof.\n  intros n. lia.\nQed."
    assert out[offset : offset + len(text)] == text


@pytest.mark.parametrize(
    ("out", "expected"),
    [
        ("```\nintros. auto.\n```", "intros. auto."),
        ("```rocq\nintros. auto.\n```", "intros. auto."),
        ("```python\nprint(1)\n```", None),
        ("```coq\nProof.\n  intros n.", "Proof.\n  intros n."),  # truncated generation
        ("So:\nProof. intros. lia. Qed. That is all.", "Proof. intros. lia. Qed."),
        ("Proof. intros.\n", "Proof. intros."),
        ("no proof here", None),
        ("```coq\n   \n```", None),
        ("\\boxed{```coq\nProof. auto. Qed.\n```}", "Proof. auto. Qed."),
    ],
)
def test_extraction_formats(out: str, expected: str | None) -> None:
    got = extract_coq_proof(out)
    assert (got[0] if got else None) == expected
    if got:
        assert out[got[1] : got[1] + len(got[0])] == got[0]


def test_restated_prelude_and_statement_are_skipped() -> None:
    restated = STATEMENT.replace(" : ", "  :  ")
    out = f"```coq\nRequire Import Arith.\n{restated}\nProof. lia. Qed.\n```"
    text, offset = extract_coq_proof(out, STATEMENT, PRELUDE) or ("", -1)
    assert text == "Proof. lia. Qed." and out[offset:].startswith(text)
    other = "```coq\nTheorem t : 1 = 2.\nProof. lia. Qed.\n```"
    text2, _ = extract_coq_proof(other, STATEMENT, PRELUDE) or ("", -1)
    assert text2.startswith("Theorem t : 1 = 2.")  # a changed statement is kept (and rejected)


def test_generation_is_graded_and_wraps_to_the_hardest() -> None:
    env = get_env("coq_proofs")
    groups = bundled_bank("coq").by_grade()
    top = max(groups)
    for d in (0, 1, top):
        p = env.generate(d, 3)
        assert p.data["grade"] == d
        assert p.data["theorem"] in {t.name for t in groups[d]}
        assert p.data["statement"] in p.prompt and "```coq" in p.prompt
    assert env.generate(top + 1, 0).data["grade"] == top
    assert env.generate(env.max_difficulty, 5).data["grade"] == top
    names = {env.generate(1, s).data["theorem"] for s in range(40)}
    assert len(names) > 5  # seeds spread over the grade


# ---- live verdicts -----------------------------------------------------------------------
@pytest.mark.coq
@needs_coq
def test_steps_are_spans_of_the_full_output() -> None:
    env = get_env("coq_proofs")
    p = env.generate(3, 0)
    out = "Let me think.\n" + env.solve(p) + "\nThat's it."
    v = env.verify(p, out)
    assert v.correct and v.reward == 1.0 and v.extra["status"] == "pass"
    texts = [out[s.start : s.end] for s in v.steps]
    assert texts[0].startswith("intros") and len(texts) >= 3
    wrong = env.corrupt(p, env.solve(p), random.Random(1))
    bad = env.verify(p, "Reasoning.\n" + wrong)
    assert not bad.correct and bad.extra["status"] == "error"
    assert bad.first_failed_step is not None
    failed = bad.steps[bad.first_failed_step]
    assert ("Reasoning.\n" + wrong)[failed.start : failed.end].startswith("fail.")
    assert p.answer not in bad.detail


@pytest.mark.coq
@needs_coq
def test_incomplete_and_error_verdicts() -> None:
    env = get_env("coq_proofs")
    p = next(
        env.generate(3, s)
        for s in range(50)
        if env.generate(3, s).data["theorem"] == "add_zero_right_induction"
    )
    v = env.verify(
        p, "```coq\nProof.\n  intros n.\n  induction n as [| n IH].\n  - reflexivity.\nQed.\n```"
    )
    assert v.extra["status"] == "incomplete" and v.first_failed_step is None
    v = env.verify(p, "```coq\nProof. intros n. rewrite IH. Qed.\n```")
    assert v.extra["status"] == "error" and v.first_failed_step == 1
    assert "IH" in v.detail


@pytest.mark.coq
@needs_coq
def test_checker_is_built_from_the_config() -> None:
    env: CoqProofs = get_env("coq_proofs")  # type: ignore[assignment]
    p = env.generate(0, 0)
    with Provers(ProversConfig(coq=CoqSettings(backend="coqc", workers=1))) as provers:
        assert provers.checker("coq").name == "coq-coqc"
        v = env.verify_batch([p], [env.solve(p)], provers)[0]
        assert v.correct and v.extra["backend"] == "coq-coqc"
    with Provers() as provers:
        assert provers.checker("coq").name == "coq-ide"
        with pytest.raises(UserInputError, match="unknown proof system"):
            provers.checker("isabelle")
    with pytest.raises(ValueError, match="backend"):
        CoqSettings(backend="lean")  # type: ignore[arg-type]
