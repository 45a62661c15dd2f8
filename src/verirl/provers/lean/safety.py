"""The safety filter for model-written Lean proofs (untrusted text is data).

A proof is checked by running Lean on it, and Lean can do much more than check proofs: run
arbitrary code at elaboration time (``#eval``, ``run_cmd``, ``by_elab``, ``IO``), add axioms,
switch off the kernel (``set_option debug.skipKernelTC``) or the heartbeat limit, trust the
compiler (``native_decide``, ``implemented_by``, ``@[extern]``), or simply give up
(``sorry``, ``admit``). The REPL would report some of these (a ``sorry`` warning) and not
others (an ``axiom`` is silent), so the filter rejects them before any process sees the
text. Checks run on the text with comments and string contents blanked, so a keyword in a
comment is harmless and a keyword hidden in a comment cannot slip through.

The statement is fixed by the problem: either the submitted text is only the proof (what
follows ``:= by``), or it contains the exact statement, preceded by nothing but blank lines,
comments and lines of the problem's own prelude (models often repeat the imports). Anything
else (a changed statement, an extra declaration, a new axiom) is rejected.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from verirl.provers.lean.text import is_ident_char, mask_comments_and_strings

# Whole tokens that end a check with a rejection; the value is the reason shown.
_BANNED_WORDS: Mapping[str, str] = {
    "sorry": "`sorry` leaves the goal unproved",
    "admit": "`admit` leaves the goal unproved",
    "sorryAx": "`sorryAx` is `sorry`",
    "axiom": "`axiom` adds an unproved assumption",
    "unsafe": "`unsafe` code is not allowed",
    "implemented_by": "`implemented_by` swaps in unverified code",
    "extern": "`@[extern]` swaps in unverified code",
    "csimp": "`@[csimp]` swaps in unverified code",
    "native_decide": "`native_decide` trusts the compiler (axiom `Lean.ofReduceBool`)",
    "ofReduceBool": "`Lean.ofReduceBool` trusts the compiler",
    "ofReduceNat": "`Lean.ofReduceNat` trusts the compiler",
    "run_cmd": "`run_cmd` runs arbitrary code",
    "run_tac": "`run_tac` runs arbitrary code",
    "run_elab": "`run_elab` runs arbitrary code",
    "run_meta": "`run_meta` runs arbitrary code",
    "by_elab": "`by_elab` runs arbitrary code",
    "include_str": "`include_str` reads files",
    "IO": "`IO` actions are not allowed",
    "EIO": "`IO` actions are not allowed",
    "BaseIO": "`IO` actions are not allowed",
    "System": "`System` (files, processes) is not allowed",
    "dbg_trace": "`dbg_trace` runs code for its output",
}
# Command keywords: none of them can appear inside a tactic proof, and all of them are
# reserved tokens, so a whole-token match has no false positives.
_COMMAND_WORDS = frozenset(
    {
        "theorem",
        "lemma",
        "def",
        "abbrev",
        "instance",
        "example",
        "opaque",
        "structure",
        "class",
        "inductive",
        "coinductive",
        "namespace",
        "section",
        "universe",
        "variable",
        "import",
        "initialize",
        "builtin_initialize",
        "macro",
        "macro_rules",
        "syntax",
        "elab",
        "elab_rules",
        "notation",
        "infix",
        "infixl",
        "infixr",
        "prefix",
        "postfix",
        "declare_syntax_cat",
        "attribute",
        "mutual",
        "deriving",
        "private",
        "protected",
        "noncomputable",
        "partial",
        "export",
        "omit",
        "include",
        # also commands (closing a prelude scope, or adding syntax, unification hints,
        # simprocs, aliases, options or reducibility changes to the environment)
        "end",
        "nonrec",
        "notation3",
        "variable?",
        "alias",
        "add_decl_doc",
        "unif_hint",
        "simproc",
        "simproc_decl",
        "dsimproc",
        "dsimproc_decl",
        "register_simp_attr",
        "register_option",
        "register_label_attr",
        "irreducible_def",
        "recall",
        "seal",
        "unseal",
        "binder_predicate",
        "grind_pattern",
        "declare_simp_like_tactic",
        "declare_config_elab",
        "initialize_simps_projections",
        "compile_inductive",
        "suppress_compilation",
    }
)
# `Lean.` gives access to the elaborator, the environment and the compiler.
_BANNED_NAMESPACES = frozenset({"Lean", "IO", "System", "Unsafe"})
# set_option: harmless display/diagnostic prefixes, and resource limits with a cap.
_SAFE_OPTION_PREFIXES = ("pp.", "trace.", "linter.")
_CAPPED_OPTIONS: Mapping[str, int] = {
    "maxHeartbeats": 400_000,
    "synthInstance.maxHeartbeats": 400_000,
    "maxRecDepth": 10_000,
    "synthInstance.maxSize": 1_000,
}

# Lone surrogates (no UTF-8 form: no prover can read them) and C0 controls but \t \n \r.
_NOT_TEXT = re.compile("[\ud800-\udfff\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_IDENT = re.compile(r"[^\W\d][\w'!?]*(?:\.[^\W\d][\w'!?]*)*")
_HASH_COMMAND = re.compile(r"#[A-Za-z_]\w*")
_SET_OPTION = re.compile(r"\bset_option\s+([\w.]+)\s+(\S+)")
_OPEN = re.compile(r"(?<![\w.'])open\b([^\n]*)")


def _tokens(masked: str) -> list[tuple[int, str]]:
    """(offset, identifier) for every identifier token of the masked text."""
    out = []
    for m in _IDENT.finditer(masked):
        s = m.start()
        if s > 0 and (is_ident_char(masked[s - 1]) or masked[s - 1] == "."):
            continue  # the tail of a longer token (e.g. `2.x` or `h.1.foo`)
        out.append((s, m.group(0)))
    return out


def lean_proof_violation(proof: str) -> str | None:
    """The reason ``proof`` must not be run, or ``None`` when it passes the filter.

    Rejected: ``sorry``/``admit``/``sorryAx``; ``axiom``; ``unsafe`` (also inside names
    like ``unsafeCast``); ``implemented_by``, ``@[extern]``, ``@[csimp]``, ``native_decide``
    and ``Lean.ofReduceBool`` (they trust compiled code); ``run_cmd``/``run_tac``/
    ``run_elab``/``run_meta``/``by_elab`` and any ``#command`` (``#eval``, ``#exit``...);
    ``IO``/``System`` and every ``Lean.*`` name (elaborator and environment access);
    ``include_str``; every command keyword (``theorem``, ``def``, ``import``, ``macro``,
    ``attribute``...), which also catches a repeated or changed statement; ``open ... in``
    of ``Lean``/``IO``/``System`` namespaces and a bare ``open`` (a command, not a tactic);
    ``set_option`` except ``pp.*``/``trace.*``/``linter.*`` and the resource limits
    ``maxHeartbeats``/``maxRecDepth``/``synthInstance.*`` with a positive value under a
    cap (``maxHeartbeats 0`` disables the limit; ``debug.skipKernelTC`` skips the kernel).
    Identifiers quoted with ``«»`` are checked unquoted.

    The text is lexed as Lean lexes it (:func:`~verirl.provers.lean.text.mask_comments_and_strings`:
    raw strings, ``s!"{...}"`` interpolation, nested comments, char literals), and checked a
    second time with *every* string read as interpolated (``throwError "{...}"``); a
    violation in either reading rejects. Text that is not Unicode (a lone surrogate) or holds
    a control character other than tab/newline/carriage return is rejected outright.
    """
    bad = _NOT_TEXT.search(proof)
    if bad:
        return f"the proof contains the character U+{ord(bad.group()):04X}, which is not allowed"
    for interpolate_all in (False, True):
        masked = mask_comments_and_strings(proof, interpolate_all=interpolate_all)
        reason = _masked_violation(masked.replace("«", "").replace("»", ""))
        if reason is not None:
            return reason
    return None


def _masked_violation(masked: str) -> str | None:
    """The first rule the comment- and string-masked text ``masked`` breaks."""
    m = _HASH_COMMAND.search(masked)
    if m:
        return f"`{m.group(0)}` is a command, not a tactic (commands may run code)"
    for _, ident in _tokens(masked):
        parts = ident.split(".")
        if parts[0] == "_root_" and len(parts) > 1:
            parts = parts[1:]
        for part in parts:
            if part in _BANNED_WORDS:
                return _BANNED_WORDS[part]
            if "unsafe" in part.lower():
                return f"`{ident}`: unsafe code is not allowed"
        if parts[0] in _BANNED_NAMESPACES and len(parts) > 1:
            return f"`{ident}`: the `{parts[0]}` namespace gives access beyond the proof"
        if ident in _COMMAND_WORDS:
            return (
                f"`{ident}` is a command keyword; a proof may hold only tactics "
                "(a changed or repeated theorem statement is rejected)"
            )
    for m in _OPEN.finditer(masked):
        parts = re.split(r"\bin\b", m.group(1), maxsplit=1)
        if len(parts) < 2:
            return "bare `open` is a command; only `open ... in <tactic>` may appear in a proof"
        for name in re.findall(r"[^\s()]+", parts[0]):
            if name.split(".")[0] in _BANNED_NAMESPACES:
                return f"`open {name} in` gives access beyond the proof"
    for m in _SET_OPTION.finditer(masked):
        reason = _option_violation(m.group(1), m.group(2))
        if reason:
            return reason
    if re.search(r"\bset_option\b", masked) and not _SET_OPTION.search(masked):
        return "malformed `set_option`"
    return None


def _option_violation(name: str, value: str) -> str | None:
    if name.startswith(_SAFE_OPTION_PREFIXES):
        return None
    if name in _CAPPED_OPTIONS:
        cap = _CAPPED_OPTIONS[name]
        try:
            number = int(value)
        except ValueError:
            return f"`set_option {name} {value}`: the value must be a number"
        if number <= 0:
            return f"`set_option {name} {number}` disables the limit"
        if number > cap:
            return f"`set_option {name} {number}` exceeds the cap {cap}"
        return None
    if name.startswith("debug."):
        return f"`set_option {name}` changes what the kernel checks"
    return f"`set_option {name}` is not allowed in a proof"


@dataclass(frozen=True)
class LeanSubmission:
    """Where the proof is in the submitted text.

    - ``proof_start``: offset in the submitted text where the proof (after ``:= by``) starts.
    - ``statement_start``: offset of the statement when the text contains it, else ``None``
      (the text is the proof alone).
    - ``rejection``: why the text must not be run, or ``None``.
    """

    proof_start: int
    statement_start: int | None
    rejection: str | None = None


def locate_lean_proof(submitted: str, statement: str, prelude: str = "") -> LeanSubmission:
    """Find the proof in ``submitted`` and apply the safety filter.

    When ``submitted`` contains ``statement`` verbatim (outside comments and strings), the
    proof is what follows it, and the text before it may hold only blank lines, comments and
    lines of ``prelude`` (repeated imports). Otherwise ``submitted`` is taken to be the proof
    alone. Either way :func:`lean_proof_violation` runs on the proof part."""
    stmt = statement.strip()
    masked = mask_comments_and_strings(submitted)
    masked_stmt = mask_comments_and_strings(stmt)
    index = submitted.find(stmt) if stmt else -1
    while index >= 0 and masked[index : index + len(stmt)] != masked_stmt:
        index = submitted.find(stmt, index + 1)
    if index < 0:
        return LeanSubmission(0, None, lean_proof_violation(submitted))
    allowed = {line.strip() for line in mask_comments_and_strings(prelude).splitlines()}
    for line in masked[:index].splitlines():
        if line.strip() and line.strip() not in allowed:
            return LeanSubmission(
                index + len(stmt),
                index,
                f"text before the theorem statement is not part of the problem: "
                f"{line.strip()[:60]!r}",
            )
    proof_start = index + len(stmt)
    return LeanSubmission(proof_start, index, lean_proof_violation(submitted[proof_start:]))
