"""The lexical safety filter run on a proof before any Coq process sees it.

The model's text may only *prove the given statement*: an optional opening ``Proof.``
(``Proof using ...`` / ``Proof with ...`` are allowed too), tactics, bullets and braces, and an
optional closing ``Qed.``/``Defined.`` as the very last sentence. Everything else is refused with
a reason naming the construct. The rules work on the comment- and string-stripped sentences
from :mod:`verirl.provers.coq.sentences`, so ``(* admit *)`` and ``idtac "Admitted"`` are fine
while ``admit.`` is not.

Rules for a proof (first match wins):

- an unterminated comment or string, or a last sentence without its closing ``.``;
- a sentence that is not a tactic. Coq's vernacular commands start with an upper-case word and
  tactics with a lower-case one, so any upper-case first word other than the allowed
  ``Proof``/``Qed``/``Defined`` placements and ``Unshelve`` is refused: ``Admitted``, ``Abort``,
  ``Axiom``/``Parameter``/``Hypothesis``/``Variable``/``Conjecture``/``Context``,
  ``Redirect``, ``Extraction``, ``Load``, ``Cd``, ``Declare ML Module``, ``Require``/``Import``,
  ``Drop``, ``Time``/``Timeout``/``Fail``/``Succeed``, ``Set``/``Unset`` (e.g.
  ``Unset Guard Checking``), ``Undo``/``Restart``/``Back``, attributes ``#[...]``, and any new
  ``Theorem``/``Lemma``/``Definition``/``Ltac``/``Hint``... **Helper lemmas are not allowed**:
  a second declaration would let the text change what is proved and would blur the tactic
  indices used for credit; the model proves helper facts inline with ``assert``;
- a banned identifier anywhere in the code: ``admit``, ``give_up`` (they close goals without
  proof), ``Admitted``/``Abort``, and ``native_compute``/``native_cast_no_check`` (they run the
  OCaml compiler; the checkers also pass ``-native-compiler no``);
- the ``par:`` goal selector (it may start worker processes).

:func:`check_prelude` applies the file-system rules to the problem's prelude (which comes from
the environment or the user, not the model) and restricts ``Require`` to an allowlist of
modules; :func:`check_statement` checks that a statement is one theorem-like declaration.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from verirl.provers.coq.sentences import THEOREM_KEYWORDS, Scan, Sentence, scan, scan_cached

_IDENT = r"[A-Za-z_][A-Za-z0-9_']*"
_WORD = re.compile(_IDENT)
# "all:", "1:", "1-3, 5:", "[name]:", "!:", "par:" in front of a tactic.
_SELECTOR = re.compile(
    r"\s*(all|par|!|\[\s*" + _IDENT + r"\s*\]|\d+(?:\s*-\s*\d+)?(?:\s*,\s*\d+(?:\s*-\s*\d+)?)*)"
    r"\s*:(?!=)"
)
_BANNED_IDENTS = {
    "admit": "the tactic admit (closes a goal without proof)",
    "give_up": "the tactic give_up (closes a goal without proof)",
    "Admitted": "Admitted (leaves the theorem unproved)",
    "Abort": "Abort (abandons the proof)",
    "native_compute": "native_compute (runs the OCaml native compiler)",
    "native_cast_no_check": "native_cast_no_check (runs the OCaml native compiler)",
}
_ASSUMPTIONS = {
    "Axiom",
    "Axioms",
    "Parameter",
    "Parameters",
    "Hypothesis",
    "Hypotheses",
    "Variable",
    "Variables",
    "Conjecture",
    "Context",
}
_DECLARATIONS = THEOREM_KEYWORDS | {
    "Definition",
    "Fixpoint",
    "CoFixpoint",
    "Inductive",
    "CoInductive",
    "Record",
    "Structure",
    "Class",
    "Instance",
    "Program",
    "Let",
    "Goal",
    "Function",
    "Equations",
    "Module",
    "Section",
    "End",
    "Ltac",
    "Ltac2",
    "Notation",
    "Infix",
    "Tactic",
    "Hint",
    "Arguments",
    "Opaque",
    "Transparent",
    "Existing",
    "Canonical",
    "Coercion",
    "Scheme",
    "Derive",
}
_VERNAC_REASONS = {
    "Redirect": "Redirect (writes command output to a file)",
    "Extraction": "Extraction (can write files)",
    "Separate": "Separate Extraction (writes files)",
    "Recursive": "Recursive Extraction (can write files)",
    "Load": "Load (reads and runs a file)",
    "Cd": "Cd (changes Coq's working directory)",
    "Declare": "Declare ML Module (loads native code)",
    "Require": "Require (loads modules; only the problem's prelude may)",
    "Import": "Import (only the problem's prelude may import modules)",
    "Export": "Export (only the problem's prelude may export modules)",
    "From": "From ... Require (loads modules; only the problem's prelude may)",
    "Drop": "Drop (leaves the Coq toplevel)",
    "Time": "the Time command (vernacular; only tactics are allowed)",
    "Timeout": "the Timeout command (vernacular; only tactics are allowed)",
    "Fail": "the Fail command (turns an error into success)",
    "Succeed": "the Succeed command (vernacular; only tactics are allowed)",
    "Set": "Set (changes Coq options, e.g. guard or universe checking)",
    "Unset": "Unset (changes Coq options, e.g. guard or universe checking)",
    "Undo": "Undo (rewinds the document)",
    "Restart": "Restart (rewinds the proof)",
    "Back": "Back (rewinds the document)",
    "BackTo": "BackTo (rewinds the document)",
    "Reset": "Reset (rewinds the document)",
    "Add": "Add (changes load paths or setoid declarations)",
    "Admitted": _BANNED_IDENTS["Admitted"],
    "Abort": _BANNED_IDENTS["Abort"],
    "Save": "Save (closes the proof under another name)",
    "Local": "a Local/Global command (vernacular; only tactics are allowed)",
    "Global": "a Local/Global command (vernacular; only tactics are allowed)",
}
_PROOF_OPENERS = re.compile(r"Proof(?:\s+(?:using|with)\b[\s\S]*)?\.\Z")
_PROOF_CLOSERS = re.compile(r"(Qed|Defined)\.\Z")
_ALLOWED_UPPER = {"Unshelve"}
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# A lone surrogate is a Python ``str`` that is not Unicode text: it has no UTF-8 encoding, so
# no prover can read it. The proof is rejected with a verdict (not re-encoded with
# ``errors="replace"``, which would check a different text than the model wrote).
_SURROGATE = re.compile("[\ud800-\udfff]")


def _surrogate_reason(what: str, char: str) -> str:
    return f"{what} contains a lone surrogate (U+{ord(char):04X}), which is not Unicode text"


# In the prelude: commands that touch files or native code, whatever the allowlist says.
_PRELUDE_FORBIDDEN = {"Redirect", "Extraction", "Separate", "Recursive", "Load", "Cd", "Drop"}
_PRELUDE_FORBIDDEN_ADD = re.compile(r"Add\s+(?:Rec\s+)?(?:LoadPath|ML\s+Path)\b")
_PRELUDE_DECLARE_ML = re.compile(r"Declare\s+ML\s+Module\b")
# Prefixes that wrap another command: strip them before looking at the command itself.
_COMMAND_PREFIX = re.compile(
    r"^(?:#\[[^\]]*\]\s*|(?:Local|Global|Export|Time|Fail|Succeed|Timeout\s+\d+)\s+)+"
)
_STATEMENT_KINDS = THEOREM_KEYWORDS | {"Definition", "Goal"}

MAX_PROOF_CHARS = 20_000
MAX_PROOF_SENTENCES = 500


@dataclass(frozen=True)
class Rejection:
    """Why a text was refused, and at which sentence (index into the scanned sentences)."""

    reason: str
    sentence_index: int | None = None


def _first_word(code: str) -> str:
    m = _WORD.match(code.lstrip())
    return m.group() if m else ""


def _tactic_body(code: str) -> tuple[str, str | None]:
    """Strip a leading goal selector from a sentence's code; return (rest, selector)."""
    m = _SELECTOR.match(code)
    if m:
        return code[m.end() :], m.group(1)
    return code, None


def _vernac_reason(word: str) -> str:
    if word in _VERNAC_REASONS:
        return _VERNAC_REASONS[word]
    if word in _ASSUMPTIONS:
        return f"{word} (declares an assumption that would be used without proof)"
    if word in _DECLARATIONS:
        return (
            f"a new {word} declaration (helper lemmas and definitions are not allowed: the "
            "proof may only contain tactics for the given statement)"
        )
    return f"the vernacular command {word} (only tactics are allowed inside the proof)"


def check_proof(proof: str, scanned: Scan | None = None) -> Rejection | None:
    """The first rule ``proof`` breaks, or None when it only contains a proof."""
    if len(proof) > MAX_PROOF_CHARS:
        return Rejection(f"the proof is longer than {MAX_PROOF_CHARS} characters")
    if _CONTROL.search(proof):
        return Rejection("the proof contains a control character")
    bad = _SURROGATE.search(proof)
    if bad:
        return Rejection(_surrogate_reason("the proof", bad.group()))
    sc = scanned if scanned is not None else scan(proof)
    if sc.unterminated is not None:
        return Rejection(f"unterminated {sc.unterminated} at the end of the proof")
    sentences = sc.sentences
    if len(sentences) > MAX_PROOF_SENTENCES:
        return Rejection(f"the proof has more than {MAX_PROOF_SENTENCES} sentences")
    if sentences and not sentences[-1].terminated:
        return Rejection("the last sentence has no terminating '.'", len(sentences) - 1)
    return _check_sentences(sentences)


def _check_sentences(sentences: Sequence[Sentence]) -> Rejection | None:
    last = len(sentences) - 1
    for k, s in enumerate(sentences):
        banned = _banned_ident(s.code)
        if banned is not None:
            return Rejection(banned, k)
        if s.structural:
            if s.kind == "selector_brace" and s.code.lstrip().startswith("par"):
                return Rejection("the par: goal selector (runs tactics in worker processes)", k)
            continue
        code = s.code.strip()
        if code.startswith("#"):
            return Rejection("an attribute #[...] (vernacular; only tactics are allowed)", k)
        word = _first_word(code)
        if word == "Proof":
            if k != 0:
                return Rejection("Proof may only open the proof, as its first sentence", k)
            if not _PROOF_OPENERS.match(" ".join(code.split())):
                return Rejection("Proof followed by a term (use tactics instead)", k)
            continue
        if word in ("Qed", "Defined"):
            if k != last:
                return Rejection(f"{word} must be the last sentence of the proof", k)
            if not _PROOF_CLOSERS.match(code):
                return Rejection(f"{word} takes no argument here", k)
            continue
        body, selector = _tactic_body(code)
        if selector == "par":
            return Rejection("the par: goal selector (runs tactics in worker processes)", k)
        body = body.lstrip()
        head = _first_word(body)
        if head in _ALLOWED_UPPER and selector is None:
            continue
        if head and head[0].isupper():
            return Rejection(_vernac_reason(head), k)
        if not body or not (body[0].islower() or body[0] == "("):
            return Rejection("a sentence that does not start with a tactic", k)
    return None


def _banned_ident(code: str) -> str | None:
    for m in _WORD.finditer(code):
        reason = _BANNED_IDENTS.get(m.group())
        if reason is not None:
            return reason
    return None


# ---- the problem side (prelude and statement) ---------------------------------------------
@functools.lru_cache(maxsize=1)
def stdlib_modules() -> frozenset[str]:
    """Names a ``Require`` may use without the ``Coq.`` prefix: the stdlib's directory names
    and module basenames, read from the installed stdlib when it is there."""
    names = {
        "Arith",
        "Bool",
        "Lists",
        "List",
        "ListNotations",
        "Lia",
        "Psatz",
        "Lra",
        "ZArith",
        "NArith",
        "PArith",
        "QArith",
        "Reals",
        "Strings",
        "String",
        "Ascii",
        "Sorting",
        "Permutation",
        "Logic",
        "Classical",
        "Setoid",
        "Morphisms",
        "Relations",
        "Wf_nat",
        "Program",
        "Init",
        "Nat",
        "PeanoNat",
        "Decidable",
        "Compare_dec",
        "EqNat",
        "Znumtheory",
        "Zdiv",
        "Vectors",
        "Vector",
        "Omega",
        "Ring",
        "Field",
        "Classes",
        "Structures",
        "Numbers",
        "MSets",
        "FSets",
        "Sets",
        "Setoids",
        "Wellfounded",
        "micromega",
        "setoid_ring",
        "Bool_nat",
        "Div2",
        "Even",
        "Factorial",
        "Max",
        "Min",
        "Minus",
        "Mult",
        "Plus",
        "Gt",
        "Ge",
        "Le",
        "Lt",
        "Between",
        "Peano_dec",
        "Arith_base",
        "BinInt",
        "BinNat",
    }
    root = _stdlib_dir()
    if root is not None:
        for dirpath, dirnames, filenames in os.walk(root):
            names.update(dirnames)
            names.update(f[:-2] for f in filenames if f.endswith(".v"))
            del dirpath
    return frozenset(names)


def _stdlib_dir() -> str | None:
    for cand in ("/usr/lib/ocaml/coq/theories", "/usr/lib/coq/theories"):
        if os.path.isdir(cand):
            return cand
    return None


def module_allowed(qualid: str, extra_roots: Iterable[str] = ()) -> bool:
    """Whether ``Require`` may load ``qualid`` (``Coq.Arith.Arith``, ``Arith``, ``Lia``...)."""
    parts = qualid.split(".")
    if parts[0] == "Coq" or parts[0] in set(extra_roots):
        return True
    names = stdlib_modules()
    return all(p in names for p in parts)


def check_prelude(prelude: str, extra_roots: Iterable[str] = ()) -> Rejection | None:
    """Refuse file-system and native-code commands in the prelude, and ``Require`` of modules
    outside the allowlist (the stdlib, plus ``extra_roots`` such as ``"mathcomp"``)."""
    roots = tuple(extra_roots)
    sc = scan_cached(prelude)
    if sc.unterminated is not None:
        return Rejection(f"unterminated {sc.unterminated} in the prelude")
    if _CONTROL.search(prelude):
        return Rejection("the prelude contains a control character")
    bad = _SURROGATE.search(prelude)
    if bad:
        return Rejection(_surrogate_reason("the prelude", bad.group()))
    for k, s in enumerate(sc.sentences):
        if s.structural:
            continue
        code = _COMMAND_PREFIX.sub("", " ".join(s.code.split()))
        word = _first_word(code)
        if word in _PRELUDE_FORBIDDEN:
            return Rejection(f"prelude: {_VERNAC_REASONS.get(word, word)}", k)
        if _PRELUDE_DECLARE_ML.match(code):
            return Rejection(f"prelude: {_VERNAC_REASONS['Declare']}", k)
        if _PRELUDE_FORBIDDEN_ADD.match(code):
            return Rejection("prelude: Add LoadPath / ML Path (changes where code is loaded)", k)
        if word in ("Require", "From"):
            rej = _check_require(code, roots)
            if rej is not None:
                return Rejection(rej, k)
    return None


def _check_require(code: str, roots: tuple[str, ...]) -> str | None:
    m = re.match(r"From\s+(" + _IDENT + r"(?:\." + _IDENT + r")*)\s+(.*)\Z", code)
    prefix = ""
    if m:
        if not module_allowed(m.group(1), roots):
            return f"prelude: From {m.group(1)} is outside the module allowlist"
        prefix, code = m.group(1) + ".", m.group(2)
    m = re.match(r"Require\s+(?:(?:Import|Export)\s+)?(.*)\.\Z", code)
    if not m:
        return "prelude: a Require that could not be read"
    for name in m.group(1).replace("(", " ").replace(")", " ").split():
        if not re.fullmatch(_IDENT + r"(?:\." + _IDENT + r")*", name):
            return f"prelude: a Require of {name!r} that could not be read"
        if not prefix and not module_allowed(name, roots):
            return f"prelude: Require of {name} is outside the module allowlist"
    return None


def check_statement(statement: str) -> str | None:
    """An error message when ``statement`` is not exactly one theorem-like declaration."""
    if _CONTROL.search(statement):
        return "the statement contains a control character"
    bad = _SURROGATE.search(statement)
    if bad:
        return _surrogate_reason("the statement", bad.group())
    sc = scan(statement)
    commands = [s for s in sc.sentences if not s.structural]
    if sc.unterminated is not None or len(sc.sentences) != 1 or len(commands) != 1:
        return "the statement must be exactly one sentence ending with '.'"
    if not commands[0].terminated:
        return "the statement must end with '.'"
    code = re.sub(r"^#\[[^\]]*\]\s*", "", " ".join(commands[0].code.split()))
    code = re.sub(r"^(?:Local|Global|Polymorphic|Monomorphic)\s+", "", code)
    word = _first_word(code)
    if word not in _STATEMENT_KINDS:
        kinds = ", ".join(sorted(_STATEMENT_KINDS))
        return f"the statement must start with one of {kinds}; it starts with {word!r}"
    return None
