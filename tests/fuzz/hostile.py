"""Hostile model outputs for fuzzing verifiers and proof filters (test helper).

Two sources of the same kinds of text:

- :func:`hostile_output`: a seeded, pure-Python composer, fast enough for the 10^4 (CI) to
  10^6 (``bench/fuzz_verifiers.py``) outputs of the counted runs;
- :func:`hostile_texts`: the equivalent Hypothesis strategy, which shrinks a failure to a
  small example.

Pieces: nested and unclosed answer markers (``\\boxed{``, ``<answer>``), numbers with huge
exponents and towers, long names and digit runs, Unicode edge cases (lone surrogates, NUL,
bidi controls, line/paragraph separators, non-characters, combining marks, other digit
scripts), and proof keywords hidden in strings, raw strings, interpolations and comments.
"""

from __future__ import annotations

import random

from hypothesis import strategies as st

UNICODE_EDGES = (
    "\ud800",
    "\udfff",
    "\x00",
    "\u202e",
    "\u2066",
    "\u200b",
    "\u2028",
    "\u2029",
    "\x85",
    "\r",
    "\x0b",
    "\ufeff",
    "\uffff",
    "\ufffe",
    "\U0010ffff",
    "\u0301",
    "\u0663\u0664",
    "\uff11\uff12",
    "\u00a0",
    "\U0001d7d9",
)
MARKERS = ("\\boxed{", "}", "{", "\\{", "\\}", "<answer>", "</answer>", "```", "```coq\n", "$")
MATH = (
    "((((99^{99})^{99})^{99})^{99})",
    "9^9^9^9",
    "(x+1)^{99}(x+2)^{99}(x-1)^{2}",
    "((x+1)^{10})^{10}",
    "10^{100000}",
    "1e999999",
    "\\frac{1}{0}",
    "\\sqrt{-1}",
    "0/0",
    "-0",
    "nan",
    "inf",
    "x**x**x**x",
    "2^{2^{2^{2^{2}}}}",
    "\\left(" * 40,
    "(" * 200,
    "1" * 5000,
    "-" + "9" * 4400,
    "3.14159e-400",
    "\\infty",
    # well-formed, but costly for the ANTLR LaTeX parser (issue 34): 13 s, 0.3 s, 0.3 s there
    "(" * 30 + "x" + ")" * 30,
    "x" * 150,
    "x^{2}" * 12,
)
WORDS = ("knight", "knave", "true", "false", "yes", "no", "A", "B", "x", "y", "=", ",", ";", " ")
PROOF = (
    "sorry",
    "admit",
    "native_decide",
    '#eval IO.FS.writeFile "p" "x"',
    'r"\\"',
    'r#"',
    '"#',
    's!"{(sorry : Nat)}"',
    "/-",
    "-/",
    "--",
    "(*",
    "*)",
    '"',
    "'\"'",
    "Admitted.",
    "Axiom f : False.",
    'idtac "\uffff".',
    "reflexivity.",
    "Qed.",
    'Redirect "x" Print nat.',
    "exact I.",
    "theorem t : 1 = 1 := by",
    "set_option maxHeartbeats 0 in",
    "{",
    "}",
)


def _long(rng: random.Random) -> str:
    kind = rng.randrange(4)
    n = rng.choice((100, 1000, 10_000, 30_000))
    if kind == 0:
        return "a" * n
    if kind == 1:
        return "9" * n
    if kind == 2:
        return rng.choice(MARKERS[:1] + MARKERS[5:6]) * (n // 8)
    return "".join(rng.choice("{}\\") for _ in range(n // 10))


def hostile_output(rng: random.Random, solution: str | None = None) -> str:
    """One hostile output; ``solution`` (a correct answer) is sometimes mixed in, so that
    near-correct outputs are fuzzed too."""
    parts: list[str] = []
    for _ in range(rng.randint(1, 8)):
        r = rng.random()
        if r < 0.25:
            parts.append(rng.choice(MARKERS))
        elif r < 0.4:
            parts.append(rng.choice(MATH))
        elif r < 0.55:
            parts.append(rng.choice(UNICODE_EDGES))
        elif r < 0.7:
            parts.append(rng.choice(PROOF))
        elif r < 0.8:
            parts.append(rng.choice(WORDS))
        elif r < 0.85:
            parts.append(_long(rng))
        elif solution is not None and r < 0.95:
            parts.append(solution)
        else:
            parts.append(str(rng.randint(-(10**20), 10**20)))
    text = "".join(parts)
    if rng.random() < 0.5:  # most verifiers only look inside the answer marker
        text = f"\\boxed{{{text}}}" if rng.random() < 0.7 else f"<answer>{text}</answer>"
    return text


def hostile_texts() -> st.SearchStrategy[str]:
    """The Hypothesis form of :func:`hostile_output`: any text (surrogates included) mixed
    with the pieces above, optionally wrapped in an answer marker."""
    piece = st.one_of(
        st.sampled_from(MARKERS),
        st.sampled_from(MATH),
        st.sampled_from(UNICODE_EDGES),
        st.sampled_from(PROOF),
        st.sampled_from(WORDS),
        st.text(st.characters(codec=None), max_size=20),
        st.integers().map(str),
    )
    body = st.lists(piece, max_size=8).map("".join)
    return st.one_of(
        body,
        body.map(lambda t: f"\\boxed{{{t}}}"),
        body.map(lambda t: f"<answer>{t}</answer>"),
        body.map(lambda t: f"```coq\n{t}\n```"),
    )
