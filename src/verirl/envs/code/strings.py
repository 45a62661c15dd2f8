"""Program synthesis of string transforms: pipelines of string and word steps, run-length
encoding, balanced brackets (see :mod:`verirl.envs.code.synthesis`). Difficulty adds pipeline
steps and variants, and longer inputs."""

from __future__ import annotations

import random
import string
from typing import Any

from verirl.envs.base import ENVIRONMENTS
from verirl.envs.code.synthesis import ProgramSynthesis, step_text

LETTERS = string.ascii_lowercase


def _word(rng: random.Random, lo: int, hi: int, alphabet: str = LETTERS) -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi)))


# ---- string pipeline ------------------------------------------------------------------------
def ref_string_pipeline(p: dict[str, Any], s: str) -> str:
    for op, k, c in p["steps"]:
        if op == "reverse":
            s = s[::-1]
        elif op == "caesar":
            s = "".join(chr((ord(ch) - 97 + k) % 26 + 97) if "a" <= ch <= "z" else ch for ch in s)
        elif op == "rotate":
            s = s[k % len(s) :] + s[: k % len(s)] if s else s
        elif op == "dedupe":
            s = "".join(ch for i, ch in enumerate(s) if i == 0 or s[i - 1] != ch)
        elif op == "drop":
            s = s.replace(c, "")
        elif op == "double_vowels":
            s = "".join(ch * 2 if ch in "aeiou" else ch for ch in s)
        elif op == "upper_every":
            s = "".join(ch.upper() if i % k == 0 else ch for i, ch in enumerate(s))
        elif op == "sort":
            s = "".join(sorted(s))
    return s


_STRING_STEPS = {
    "reverse": "reverse the string",
    "caesar": "shift every lowercase letter {k} places forward in the alphabet (z wraps to a)",
    "rotate": "rotate left by {k} positions (the first {k} characters, counted modulo the "
    "length, move to the end; an empty string stays empty)",
    "dedupe": "collapse every run of equal adjacent characters to one character",
    "drop": "delete every '{c}'",
    "double_vowels": "write every lowercase vowel (a, e, i, o, u) twice",
    "upper_every": "upper-case the characters at positions 0, {k}, 2*{k}, ... (0-based)",
    "sort": "sort the characters by code point",
}


@ENVIRONMENTS.register("code_string_pipeline")
class CodeStringPipeline(ProgramSynthesis):
    difficulty_scales = "pipeline steps: 1 + difficulty // 3; longer inputs"
    signature = "def solve(s: str) -> str"
    reference = ref_string_pipeline

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        steps = []
        for _ in range(1 + difficulty // 3):
            op = rng.choice(sorted(_STRING_STEPS))
            steps.append([op, rng.randint(1, 9 + difficulty), rng.choice(LETTERS)])
        return {"steps": steps}

    def spec(self, p: dict[str, Any]) -> str:
        lines = [
            f"{i + 1}. " + step_text(_STRING_STEPS[op], k=k, c=c)
            for i, (op, k, c) in enumerate(p["steps"])
        ]
        return "It transforms s by applying these steps in order:\n" + "\n".join(lines)

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        out: list[list[Any]] = [[_word(rng, 4, 9 + difficulty)] for _ in range(3)]
        out += [[""], ["a"], ["zz"]]
        out += [[_word(rng, 0, 20 + 5 * difficulty, LETTERS + "  ")] for _ in range(20)]
        return out


# ---- word pipeline --------------------------------------------------------------------------
def ref_word_pipeline(p: dict[str, Any], text: str) -> str:
    words = text.split()
    for op, k in p["steps"]:
        if op == "reverse_order":
            words = words[::-1]
        elif op == "capitalize":
            words = [w[:1].upper() + w[1:] for w in words]
        elif op == "drop_short":
            words = [w for w in words if len(w) >= k]
        elif op == "sort_len":
            words = sorted(words, key=lambda w: (len(w), w))
        elif op == "reverse_each":
            words = [w[::-1] for w in words]
        elif op == "first":
            words = words[:k]
        elif op == "unique":
            words = list(dict.fromkeys(words))
    return p["sep"].join(words)


_WORD_STEPS = {
    "reverse_order": "reverse the order of the words",
    "capitalize": "upper-case the first letter of every word",
    "drop_short": "remove the words with fewer than {k} characters",
    "sort_len": "sort the words by length, ties alphabetically (by code point)",
    "reverse_each": "reverse the letters of every word",
    "first": "keep only the first {k} words",
    "unique": "keep only the first occurrence of every word",
}


@ENVIRONMENTS.register("code_word_pipeline")
class CodeWordPipeline(ProgramSynthesis):
    difficulty_scales = "pipeline steps: 1 + difficulty // 3; longer texts"
    signature = "def solve(text: str) -> str"
    reference = ref_word_pipeline

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        steps = [
            [rng.choice(sorted(_WORD_STEPS)), rng.randint(2, 5)] for _ in range(1 + difficulty // 3)
        ]
        return {"steps": steps, "sep": rng.choice([" ", "-", ", ", "|"])}

    def spec(self, p: dict[str, Any]) -> str:
        lines = [
            f"{i + 1}. " + step_text(_WORD_STEPS[op], k=k) for i, (op, k) in enumerate(p["steps"])
        ]
        return (
            "It splits text into words (separated by any whitespace), applies these steps in "
            "order and joins the words with " + repr(p["sep"]) + ":\n" + "\n".join(lines)
        )

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        def text(n: int) -> str:
            return " ".join(_word(rng, 1, 7, "abcde") for _ in range(n))

        out: list[list[Any]] = [[text(rng.randint(3, 6))] for _ in range(3)]
        out += [[""], ["  one  "], ["a a a"]]
        out += [[text(rng.randint(0, 8 + 2 * difficulty))] for _ in range(20)]
        return out


# ---- run-length encoding --------------------------------------------------------------------
def ref_run_length(p: dict[str, Any], s: str) -> str:
    out = []
    i = 0
    while i < len(s):
        j = i
        while j < len(s) and s[j] == s[i] and j - i < p["max_run"]:
            j += 1
        n = j - i
        out.append(s[i] if n == 1 and p["omit_one"] else f"{s[i]}{n}")
        i = j
    return "".join(out)


@ENVIRONMENTS.register("code_run_length")
class CodeRunLength(ProgramSynthesis):
    difficulty_scales = "variants: omit count 1 (d >= 2), runs capped (d >= 5); longer inputs"
    signature = "def solve(s: str) -> str"
    reference = ref_run_length

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        cap = rng.randint(3, 9) if difficulty >= 5 else 10**9
        return {"omit_one": difficulty >= 2, "max_run": cap, "steps": [1] * (1 + difficulty // 3)}

    def spec(self, p: dict[str, Any]) -> str:
        text = "It run-length encodes s: each maximal run of one repeated character becomes the "
        text += "character followed by the run's length in decimal"
        if p["omit_one"]:
            text += ", except that a run of length 1 is written as the character alone"
        if p["max_run"] < 10**9:
            text += (
                f". Runs longer than {p['max_run']} are split into runs of {p['max_run']} "
                "from the left, the remainder last"
            )
        return text + "."

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        def runs(k: int) -> str:
            return "".join(rng.choice("abc") * rng.randint(1, 4 + difficulty) for _ in range(k))

        return [[runs(3)], [runs(4)], [runs(2)], [""], ["a"], ["ab"]] + [
            [runs(rng.randint(1, 5 + difficulty))] for _ in range(20)
        ]


# ---- balanced brackets ----------------------------------------------------------------------
def ref_brackets(p: dict[str, Any], s: str) -> int:
    pairs = dict(zip(p["close"], p["open"], strict=True))
    stack: list[str] = []
    best = 0
    for i, ch in enumerate(s):
        if ch in p["open"]:
            stack.append(ch)
        elif ch in pairs:
            if not stack or stack[-1] != pairs[ch]:
                return best if p["prefix"] else -1
            stack.pop()
        if not stack:
            best = i + 1
    if p["prefix"]:
        return best
    return 1 if not stack else -1


@ENVIRONMENTS.register("code_balanced_brackets")
class CodeBrackets(ProgramSynthesis):
    difficulty_scales = (
        "bracket kinds 1..4, other characters (d >= 3), longest balanced prefix (d >= 6)"
    )
    signature = "def solve(s: str) -> int"
    reference = ref_brackets

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        kinds = min(4, 1 + difficulty // 2)
        return {
            "open": "([{<"[:kinds],
            "close": ")]}>"[:kinds],
            "noise": difficulty >= 3,
            "prefix": difficulty >= 6,
            "steps": [1] * (kinds + (difficulty >= 3) + (difficulty >= 6)),
        }

    def spec(self, p: dict[str, Any]) -> str:
        kinds = ", ".join(f"{o}{c}" for o, c in zip(p["open"], p["close"], strict=True))
        text = f"The brackets are the pairs {kinds}; every other character is ignored. "
        if p["prefix"]:
            text += (
                "It returns the length of the longest prefix of s that is balanced (every "
                "bracket closed by the matching kind, properly nested), scanning left to right "
                "and stopping at the first closing bracket that does not match."
            )
        else:
            text += "It returns 1 if s is balanced (properly nested, matching kinds), else -1."
        return text

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        alphabet = p["open"] + p["close"] + ("xy" if p["noise"] else "")

        def balanced(n: int) -> str:
            if n <= 0:
                return ""
            k = rng.randrange(len(p["open"]))
            inner = rng.randint(0, n - 1)
            return p["open"][k] + balanced(inner) + p["close"][k] + balanced(n - 1 - inner)

        out: list[list[Any]] = [[balanced(3)], [balanced(2) + p["close"][0]], [""]]
        for _ in range(20):
            if rng.random() < 0.5:
                out.append([balanced(rng.randint(1, 3 + difficulty))])
            else:
                out.append(["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))])
        return out


__all__ = ["LETTERS"]
