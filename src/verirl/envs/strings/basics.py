"""Strings: reversal, letter counts, palindromes, anagrams, Caesar decoding, edit distance,
run-length encoding and decoding.

Rewards: a string answer whose length is fixed by the task (a reversal, a decoding) is invalid
at another length, otherwise it earns element-wise credit per character (β = 5); counts get
(min/max)^10; yes/no questions are binary. The longest palindromic substring accepts any
longest one: the answer must be a palindrome occurring in the string (else invalid) and earns
(length/optimum)^5.
"""

from __future__ import annotations

import itertools
import random
import re
import string

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    IntegerAnswer,
    graded,
    invalid,
    optimum_verdict,
    sequence_reward,
    wrong_format,
)
from verirl.envs.kit.strings import random_word
from verirl.types import Problem, Verdict

_MAX_ANSWER = 5000  # characters; longer answers are not read


def _letters(answer: str) -> str | None:
    """The answer as lowercase ASCII letters (spaces and quotes dropped), or None."""
    t = re.sub(r"[\s\"'`]", "", answer)
    if len(t) > _MAX_ANSWER or not (t.isascii() and (t.isalpha() or not t)):
        return None
    return t.lower()


def _string_verdict(answer: str, gold: str) -> Verdict:
    """A string whose length the task fixes: another length is invalid, else per-character
    credit."""
    if len(answer) != len(gold):
        return invalid("the answer does not have the required length")
    ok = answer == gold
    score = sequence_reward(list(answer), list(gold))
    return graded(score, ok, "correct" if ok else "some characters are not right")


def _letters_verdict(answer: str, gold: str) -> Verdict:
    """:func:`_string_verdict` on the letters of ``answer``; anything else is wrong format."""
    t = _letters(answer)
    if t is None:
        return wrong_format("expected a string of letters")
    return _string_verdict(t, gold)


@ENVIRONMENTS.register("reverse_string")
class ReverseString(Environment):
    size_measure = "string length"
    difficulty_scales = "length of the string: 3 + d"
    size_key = "word"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        word = random_word(rng, 3 + difficulty, string.ascii_lowercase)
        prompt = f'Write the string "{word}" backwards (its letters in reverse order).'
        return Instance(prompt, word[::-1], {"word": word})

    def check(self, problem: Problem, answer: str) -> Verdict:
        return _letters_verdict(answer, self.solve(problem))

    def solve(self, problem: Problem) -> str:
        return "".join(reversed(problem.data["word"]))


@ENVIRONMENTS.register("count_letter")
class CountLetter(IntegerAnswer):
    size_measure = "string length"
    difficulty_scales = "length of the string: 5 + 2d; alphabet of 3 + d//2 letters"
    size_key = "word"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        alphabet = string.ascii_lowercase[: min(26, 3 + difficulty // 2)]
        word = random_word(rng, 5 + 2 * difficulty, alphabet)
        letter = rng.choice(word)
        prompt = f'How many times does the letter "{letter}" occur in the string "{word}"?'
        return Instance(prompt, str(word.count(letter)), {"word": word, "letter": letter})

    def solve_int(self, problem: Problem) -> int:
        return sum(1 for c in problem.data["word"] if c == problem.data["letter"])


class _YesNo(Environment):
    """A yes/no question: binary reward; anything but yes/no/true/false is wrong format."""

    def truth(self, problem: Problem) -> bool:
        raise NotImplementedError

    def check(self, problem: Problem, answer: str) -> Verdict:
        t = answer.strip().strip(".!\"'").strip().lower()
        if t not in ("yes", "no", "true", "false"):
            return wrong_format("answer yes or no")
        ok = (t in ("yes", "true")) == self.truth(problem)
        return graded(0.0, ok, "correct" if ok else "wrong")

    def solve(self, problem: Problem) -> str:
        return "yes" if self.truth(problem) else "no"

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return "no" if answer == "yes" else "yes"


@ENVIRONMENTS.register("palindrome_check")
class PalindromeCheck(_YesNo):
    size_measure = "string length"
    difficulty_scales = "length of the string: 3 + d to 5 + d, letters a-d; half are palindromes"
    size_key = "word"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty + rng.randint(0, 2)
        half = random_word(rng, (n + 1) // 2, "abcd")
        chars = list(half + half[: n // 2][::-1])
        if rng.random() < 0.5:  # break the mirror symmetry at one position
            i = rng.randrange(n // 2)
            chars[i] = rng.choice([c for c in "abcd" if c != chars[n - 1 - i]])
        word = "".join(chars)
        prompt = (
            f'Is the string "{word}" a palindrome, that is, does it read the same forwards and '
            "backwards? Answer yes or no."
        )
        return Instance(prompt, "yes" if word == word[::-1] else "no", {"word": word})

    def truth(self, problem: Problem) -> bool:
        w = problem.data["word"]
        return all(w[i] == w[-1 - i] for i in range(len(w) // 2))


@ENVIRONMENTS.register("anagram_check")
class AnagramCheck(_YesNo):
    size_measure = "string length"
    difficulty_scales = "length of each string: 3 + d"
    size_key = "first"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        alphabet = string.ascii_lowercase[: min(26, 4 + difficulty // 2)]
        first = random_word(rng, 3 + difficulty, alphabet)
        chars = list(first)
        rng.shuffle(chars)
        if rng.random() < 0.5:  # replace one letter: the letter counts then differ
            i = rng.randrange(len(chars))
            chars[i] = rng.choice([c for c in alphabet if c != chars[i]])
        second = "".join(chars)
        prompt = (
            f'Are "{first}" and "{second}" anagrams of each other, that is, does the second use '
            "exactly the same letters as the first, each the same number of times? Answer yes "
            "or no."
        )
        gold = "yes" if sorted(first) == sorted(second) else "no"
        return Instance(prompt, gold, {"first": first, "second": second})

    def truth(self, problem: Problem) -> bool:
        a, b = problem.data["first"], problem.data["second"]
        return all(a.count(c) == b.count(c) for c in string.ascii_lowercase)


@ENVIRONMENTS.register("longest_palindromic_substring")
class LongestPalindromicSubstring(Environment):
    size_measure = "string length"
    difficulty_scales = "length of the string: 5 + d; alphabet of 2 + d//10 letters"
    size_key = "word"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        word = random_word(rng, 5 + difficulty, "abcdefgh"[: 2 + min(6, difficulty // 10)])
        prompt = (
            f'Find a longest palindromic substring of "{word}": a block of consecutive letters '
            "that reads the same forwards and backwards and is as long as possible. If several "
            "are equally long, any of them is accepted. Give the substring itself."
        )
        best = max(
            (
                word[i:j]
                for i in range(len(word))
                for j in range(i + 1, len(word) + 1)
                if word[i:j] == word[i:j][::-1]
            ),
            key=len,
        )
        return Instance(prompt, best, {"word": word})

    def check(self, problem: Problem, answer: str) -> Verdict:
        t = _letters(answer)
        if t is None:
            return wrong_format("expected a string of letters")
        if not t or t not in problem.data["word"]:
            return invalid("the answer is not a substring of the given string")
        if t != t[::-1]:
            return invalid("the answer is not a palindrome")
        best = len(self.solve(problem))
        return optimum_verdict(len(t), best, "a longer palindromic substring exists")

    def solve(self, problem: Problem) -> str:
        w, best = problem.data["word"], ""
        for center in range(2 * len(w) - 1):  # expand around each center
            lo, hi = center // 2, center // 2 + center % 2
            while lo >= 0 and hi < len(w) and w[lo] == w[hi]:
                lo, hi = lo - 1, hi + 1
            if hi - lo - 1 > len(best):
                best = w[lo + 1 : hi]
        return best

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer[:-1] if len(answer) > 1 else answer * 2  # shorter, or not a substring

    def problem_space(self, difficulty: int) -> int | None:
        space = (2 + min(6, difficulty // 10)) ** (5 + difficulty)  # the words themselves
        return space if space < 1000 else None


_WORDS = (
    "apple",
    "bird",
    "cake",
    "door",
    "fish",
    "game",
    "hand",
    "idea",
    "jump",
    "king",
    "lamp",
    "moon",
    "nest",
    "open",
    "park",
    "queen",
    "rain",
    "star",
    "tree",
    "under",
    "voice",
    "water",
    "yellow",
    "zebra",
    "bread",
    "chair",
    "dream",
    "earth",
    "field",
    "green",
    "house",
    "light",
    "money",
    "night",
    "ocean",
    "paper",
    "quiet",
    "river",
    "stone",
    "table",
    "smile",
    "train",
    "music",
    "sugar",
    "window",
    "garden",
    "pencil",
    "rabbit",
    "silver",
    "summer",
    "winter",
    "forest",
    "flower",
    "island",
    "planet",
)


@ENVIRONMENTS.register("caesar_decode")
class CaesarDecode(Environment):
    size_measure = "ciphertext length"
    difficulty_scales = "1 + d//3 words; shift 1..3 for d < 3, then 1..25"
    size_key = "cipher"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        plain = " ".join(rng.choice(_WORDS) for _ in range(1 + difficulty // 3))
        shift = rng.randint(1, 3 if difficulty < 3 else 25)
        cipher = "".join(_shift(c, shift) for c in plain)
        prompt = (
            f'The text "{cipher}" was encrypted with a Caesar cipher that moved every letter '
            f"{shift} place{'s' if shift > 1 else ''} forward in the alphabet (wrapping around "
            "from z to a); spaces were kept. Decrypt it. Give the original text in lowercase, "
            "words separated by single spaces."
        )
        return Instance(prompt, plain, {"cipher": cipher, "shift": shift})

    def check(self, problem: Problem, answer: str) -> Verdict:
        t = " ".join(answer.strip().strip("\"'").lower().split())
        if len(t) > _MAX_ANSWER or not all(c == " " or c in string.ascii_lowercase for c in t):
            return wrong_format("expected lowercase words separated by spaces")
        return _string_verdict(t, self.solve(problem))

    def solve(self, problem: Problem) -> str:
        return "".join(_shift(c, -problem.data["shift"]) for c in problem.data["cipher"])


def _shift(c: str, k: int) -> str:
    if c not in string.ascii_lowercase:
        return c
    return chr((ord(c) - ord("a") + k) % 26 + ord("a"))


@ENVIRONMENTS.register("edit_distance")
class EditDistance(IntegerAnswer):
    size_measure = "total length of the two strings"
    difficulty_scales = "first string 3 + d//2 letters, second one 1 + d//3 random edits away"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        alphabet = string.ascii_lowercase[: min(26, 3 + difficulty // 5)]
        first = random_word(rng, 3 + difficulty // 2, alphabet)
        chars = list(first)
        for _ in range(1 + difficulty // 3):
            op, i = rng.choice(("insert", "delete", "replace")), rng.randrange(len(chars) + 1)
            if op == "insert":
                chars.insert(i, rng.choice(alphabet))
            elif chars and i < len(chars):
                if op == "delete":
                    del chars[i]
                else:
                    chars[i] = rng.choice(alphabet)
        if chars == list(first):  # edits cancelled out: force one substitution
            chars[0] = rng.choice([c for c in alphabet if c != first[0]])
        second = "".join(chars)
        prompt = (
            f'What is the edit distance between "{first}" and "{second}": the smallest number '
            "of single-letter insertions, deletions and substitutions that turn the first "
            "string into the second?"
        )
        data = {"first": first, "second": second}
        return Instance(prompt, str(_levenshtein(first, second)), data)

    def solve_int(self, problem: Problem) -> int:
        a, b = problem.data["first"], problem.data["second"]
        # full table over suffixes: dist[i][j] = distance between a[i:] and b[j:]
        dist = [[len(a) - i + len(b) - j for j in range(len(b) + 1)] for i in range(len(a) + 1)]
        for i in range(len(a) - 1, -1, -1):
            for j in range(len(b) - 1, -1, -1):
                dist[i][j] = min(
                    dist[i + 1][j + 1] + (a[i] != b[j]), dist[i + 1][j] + 1, dist[i][j + 1] + 1
                )
        return dist[0][0]

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["first"]) + len(problem.data["second"]))


def _levenshtein(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def _runs_space(difficulty: int) -> int | None:
    """How many run lists :func:`_runs` can draw at ``difficulty`` (None when many)."""
    letters = min(26, 3 + difficulty // 6)
    count = 2 + difficulty // 2
    space = letters * (letters - 1) ** (count - 1) * (2 + difficulty // 4) ** count
    return space if space < 1000 else None


def _runs(rng: random.Random, difficulty: int) -> list[tuple[str, int]]:
    """2 + d//2 runs of 1..2 + d//4 equal letters, adjacent runs of different letters."""
    alphabet = string.ascii_lowercase[: min(26, 3 + difficulty // 6)]
    runs: list[tuple[str, int]] = []
    for _ in range(2 + difficulty // 2):
        letter = rng.choice([c for c in alphabet if not runs or c != runs[-1][0]])
        runs.append((letter, rng.randint(1, 2 + difficulty // 4)))
    return runs


def _encode(runs: list[tuple[str, int]]) -> str:
    return "".join(f"{c}{k}" for c, k in runs)


_RLE_EXAMPLE = 'For example, "aaabcc" is encoded as "a3b1c2"'


@ENVIRONMENTS.register("run_length_encode")
class RunLengthEncode(Environment):
    size_measure = "string length"
    difficulty_scales = "2 + d//2 runs of 1 to 2 + d//4 letters each"
    size_key = "word"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        runs = _runs(rng, difficulty)
        word = "".join(c * k for c, k in runs)
        prompt = (
            f'Run-length encode the string "{word}": replace every maximal block of equal '
            "letters by the letter followed by the length of the block, writing the length even "
            f"when it is 1. {_RLE_EXAMPLE}."
        )
        return Instance(prompt, _encode(runs), {"word": word})

    def check(self, problem: Problem, answer: str) -> Verdict:
        """(hits/runs)^5 element-wise over (letter, length) runs when the run count is right."""
        t = re.sub(r"[\s,\"']", "", answer).lower()
        if len(t) > _MAX_ANSWER or not re.fullmatch(r"(?:[a-z]\d{1,6})+", t):
            return wrong_format("expected letters each followed by a count, like a3b1")
        runs = [(c, int(k)) for c, k in re.findall(r"([a-z])(\d+)", t)]
        if any(k == 0 for _, k in runs) or any(a[0] == b[0] for a, b in itertools.pairwise(runs)):
            return invalid("every run must be non-empty and differ in letter from its neighbours")
        gold = self._runs(problem)
        ok = runs == gold
        score = sequence_reward(runs, gold) if len(runs) == len(gold) else 0.0
        return graded(score, ok, "correct" if ok else "the encoding is not right")

    def solve(self, problem: Problem) -> str:
        return _encode(self._runs(problem))

    @staticmethod
    def _runs(problem: Problem) -> list[tuple[str, int]]:
        runs: list[tuple[str, int]] = []
        for c in problem.data["word"]:
            if runs and runs[-1][0] == c:
                runs[-1] = (c, runs[-1][1] + 1)
            else:
                runs.append((c, 1))
        return runs

    def problem_space(self, difficulty: int) -> int | None:
        return _runs_space(difficulty)


@ENVIRONMENTS.register("run_length_decode")
class RunLengthDecode(Environment):
    size_measure = "length of the decoded string"
    difficulty_scales = "2 + d//2 runs of 1 to 2 + d//4 letters each"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        runs = _runs(rng, difficulty)
        code = _encode(runs)
        prompt = (
            f'The string "{code}" is run-length encoded: each letter is followed by how many '
            f"times it repeats. {_RLE_EXAMPLE}. Decode it and give the original string."
        )
        return Instance(prompt, "".join(c * k for c, k in runs), {"code": code})

    def check(self, problem: Problem, answer: str) -> Verdict:
        return _letters_verdict(answer, self.solve(problem))

    def solve(self, problem: Problem) -> str:
        return "".join(c * int(k) for c, k in re.findall(r"([a-z])(\d+)", problem.data["code"]))

    def size(self, problem: Problem) -> float:
        return float(len(self.solve(problem)))

    def problem_space(self, difficulty: int) -> int | None:
        return _runs_space(difficulty)
