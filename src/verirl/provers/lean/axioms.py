"""What a passing Lean proof rests on: ``#print axioms`` after the theorem checks.

Lean accepts a declaration whose proof uses an axiom as readily as one that uses none, and the
REPL reports nothing about it: ``native_decide`` closes its goal through
``Lean.ofReduceBool`` (and, since 2025, ``Lean.trustCompiler``), a ``sorry`` hidden where no
warning is attached still elaborates to ``sorryAx``, and a proof may use an axiom declared
anywhere it can reach. The safety filter (:mod:`verirl.provers.lean.safety`) rejects the words
that lead there, but a filter reads text and Lean reads terms, so the last word belongs to
Lean: after a proof passes, the checker runs ``#print axioms <theorem>`` and rejects the proof
when the theorem depends on anything outside an allow-list (by default the three axioms of
Lean's standard foundations, ``propext``, ``Classical.choice`` and ``Quot.sound``; de Moura &
Ullrich 2021, "The Lean 4 Theorem Prover and Programming Language", CADE-28), plus the axioms
the problem's own prelude declares (the problem author vouches for those, as the Coq backends
do with ``Print Assumptions``). ``sorryAx``, ``Lean.ofReduceBool``, ``Lean.ofReduceNat`` and
``Lean.trustCompiler`` are never allowed, whatever the configuration says.

The reply is Lean's ``printAxiomsOf`` (``Lean/Elab/Print.lean``): one ``info`` message per
constant the name resolves to, at the ``#print`` token, reading

- ``'<name>' depends on axioms: [<a>, <b>, ...]`` (the list is a pretty-printed ``List Name``,
  so a long one wraps onto several lines; its order changed across versions), or
- ``'<name>' does not depend on any axioms``.

``<name>`` is the full name of the resolved constant, with ``«»`` quoting where a component
needs it. Only the message belonging to the ``#print axioms`` command counts: the REPL backend
sends it as a command of its own in the proof's environment (so the proof's own output is in
another reply), the Kimina backend appends it to the snippet and takes only the messages on
its line (:func:`split_axioms_messages`). The message must name exactly the constant the
statement declares, with the namespace the prelude leaves open (:func:`theorem_constant`); any
other reply (none, two, an error, another constant, text that does not parse) rejects the
proof, because it means the check did not run on the theorem that was asked.

A statement that declares no name (``example``, an anonymous ``instance``) cannot be asked
about, so a proof of it fails closed when the axiom check is on; so does a ``private``
theorem, whose constant Lean mangles (``_private.<module>.0.<name>``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from typing import Any

from verirl.provers.base import FormalProblem, ProofCheck, ProverMessage
from verirl.provers.lean.text import mask_comments_and_strings

DEFAULT_ALLOWED_AXIOMS: tuple[str, ...] = ("propext", "Classical.choice", "Quot.sound")
# Axioms that turn "Lean checked it" into "someone said so": never allowed.
NEVER_ALLOWED_AXIOMS: frozenset[str] = frozenset(
    {"sorryAx", "Lean.ofReduceBool", "Lean.ofReduceNat", "Lean.trustCompiler"}
)

_COMPONENT = r"(?:«[^»\n]*»|[^\W\d][\w'!?]*)"
_NAME = rf"{_COMPONENT}(?:\.{_COMPONENT})*"
_NAME_RE = re.compile(_NAME)
_ATTRS = r"(?:@\[[^\]]*\]\s*)*"
_DECL_MODIFIERS = r"(?:(?:private|protected|noncomputable|nonrec|partial|unsafe|scoped|local)\s+)*"
_DECLARATION = re.compile(
    rf"\s*{_ATTRS}(?P<mods>{_DECL_MODIFIERS})"
    r"(?P<kw>theorem|lemma|def|abbrev|instance|opaque|example)(?![\w'!?])"
    r"(?:\s*\(priority\s*:=[^)]*\))?",
    re.DOTALL,
)
_DECL_NAME = re.compile(rf"\s+(?P<name>{_NAME})(?![\w'!?])")
_NAMESPACE = re.compile(rf"\s*namespace\s+(?P<name>{_NAME})")
_SECTION = re.compile(rf"\s*(?:noncomputable\s+)?section(?:\s+(?P<name>{_NAME}))?\s*$")
_MUTUAL = re.compile(r"\s*mutual\s*$")
_END = re.compile(rf"\s*end(?:\s+(?P<name>{_NAME}))?\s*$")
_AXIOM_DECL = re.compile(
    rf"\s*{_ATTRS}(?:(?:private|protected|noncomputable|unsafe)\s+)*axiom\s+(?P<name>{_NAME})"
)
_REPLY = re.compile(
    r"'(?P<name>.+)' (?:depends on axioms: \[(?P<axioms>.*)\]|does not depend on any axioms)",
    re.DOTALL,
)


def name_components(name: str) -> tuple[str, ...] | None:
    """The components of a Lean name, ``«»`` quotes removed (``Foo.«my thm»`` →
    ``("Foo", "my thm")``); ``None`` when ``name`` is not a name."""
    if not _NAME_RE.fullmatch(name):
        return None
    return tuple(c[1:-1] if c.startswith("«") else c for c in re.findall(_COMPONENT, name))


def _join(components: Iterable[str]) -> str:
    parts = []
    for c in components:
        plain = re.fullmatch(r"[^\W\d][\w'!?]*", c) is not None
        parts.append(c if plain else f"«{c}»")
    return ".".join(parts)


def declared_name(statement: str) -> str | None:
    """The name the statement declares (``theorem foo.bar (x : ℕ) : ... := by`` →
    ``"foo.bar"``), or ``None`` for ``example``, an anonymous ``instance``, a ``private``
    declaration (Lean mangles its name) or text that declares nothing recognisable."""
    masked = mask_comments_and_strings(statement)
    m = _DECLARATION.match(masked)
    if m is None or m.group("kw") == "example" or "private" in m.group("mods").split():
        return None
    named = _DECL_NAME.match(masked, m.end())
    if named is None:
        return None
    return statement[named.start("name") : named.end("name")]


def _prelude_scan(prelude: str) -> tuple[tuple[str, ...], frozenset[tuple[str, ...]]]:
    """(the namespace open at the end of the prelude, the full names of the axioms it
    declares). Reads command lines by layout: ``namespace``/``section``/``mutual``/``end``
    and ``axiom`` at the start of a line (comments and strings masked)."""
    scopes: list[tuple[str, str]] = []  # ("namespace", component) | ("section", "")
    axioms: set[tuple[str, ...]] = set()
    for line in mask_comments_and_strings(prelude).splitlines():
        if m := _NAMESPACE.match(line):
            scopes.extend(("namespace", c) for c in name_components(m.group("name")) or ())
        elif _SECTION.match(line) or _MUTUAL.match(line):
            scopes.append(("section", ""))
        elif m := _END.match(line):
            count = len(name_components(m.group("name")) or ()) if m.group("name") else 1
            del scopes[max(0, len(scopes) - count) :]
        elif m := _AXIOM_DECL.match(line):
            components = name_components(m.group("name")) or ()
            if components[:1] == ("_root_",):
                axioms.add(components[1:])
            else:
                axioms.add(tuple(c for kind, c in scopes if kind == "namespace") + components)
    namespace = tuple(c for kind, c in scopes if kind == "namespace")
    return namespace, frozenset(axioms)


def theorem_constant(problem: FormalProblem) -> str | None:
    """The full name of the constant the statement declares, in the namespace the prelude
    leaves open (``namespace Foo`` + ``theorem bar`` → ``"Foo.bar"``; ``_root_.bar`` →
    ``"bar"``); ``None`` when the statement declares no name (:func:`declared_name`)."""
    name = declared_name(problem.statement)
    components = name_components(name) if name else None
    if not components:
        return None
    if components[0] == "_root_":
        return _join(components[1:]) if len(components) > 1 else None
    namespace, _ = _prelude_scan(problem.prelude)
    return _join(namespace + components)


def prelude_axioms(prelude: str) -> frozenset[str]:
    """Full names of the axioms the prelude declares (the problem's own assumptions)."""
    return frozenset(_join(c) for c in _prelude_scan(prelude)[1])


def allowed_axioms_for(problem: FormalProblem, allowed: Sequence[str]) -> frozenset[str]:
    """The axioms a proof of ``problem`` may rest on: ``allowed`` and the prelude's own, less
    :data:`NEVER_ALLOWED_AXIOMS`."""
    names = {_join(name_components(a) or (a,)) for a in allowed} | prelude_axioms(problem.prelude)
    return frozenset(names - NEVER_ALLOWED_AXIOMS)


def validate_allowed_axioms(allowed: Iterable[str]) -> tuple[str, ...]:
    """``allowed`` as a tuple; ``ValueError`` for a non-name or a never-allowed axiom."""
    out = tuple(allowed)
    for a in out:
        if name_components(a) is None:
            raise ValueError(f"allowed_axioms: {a!r} is not a Lean name")
        if a in NEVER_ALLOWED_AXIOMS:
            raise ValueError(
                f"allowed_axioms: {a!r} can never be allowed (it stands for an unchecked "
                "proof: sorry or compiled code)"
            )
    return out


def print_axioms_command(constant: str) -> str:
    return f"#print axioms {constant}"


def parse_axioms_reply(text: str) -> tuple[str, tuple[str, ...]] | None:
    """``(constant, axioms)`` from one ``#print axioms`` message, or ``None`` when the text
    is not in Lean's format. The list may wrap over lines; every entry must be a name."""
    m = _REPLY.fullmatch(text.strip())
    if m is None:
        return None
    if name_components(m.group("name")) is None:
        return None
    listed = m.group("axioms")
    if listed is None:
        return m.group("name"), ()
    axioms = tuple(a.strip() for a in listed.split(","))
    if not axioms or any(name_components(a) is None for a in axioms):
        return None
    return m.group("name"), axioms


def axioms_rejection(
    messages: Sequence[Any], constant: str | None, allowed: Iterable[str]
) -> str | None:
    """Why the proof must be rejected given the messages of the ``#print axioms`` command
    (objects with ``severity`` and ``data``), or ``None`` when the theorem ``constant``
    depends only on ``allowed`` axioms. Exactly one message may name ``constant``; an error,
    a second claim about it or a reply about another constant only is a rejection."""
    if constant is None:
        return (
            "the statement declares no usable constant name (`example`, an anonymous "
            "`instance` or a `private` theorem), so `#print axioms` cannot say what the proof "
            "rests on"
        )
    target = name_components(constant)
    errors = [m.data for m in messages if m.severity == "error"]
    if errors:
        return f"`#print axioms {constant}` failed: {errors[0][:200]}"
    claims = []
    for m in messages:
        parsed = parse_axioms_reply(m.data)
        if m.severity == "info" and parsed and name_components(parsed[0]) == target:
            claims.append(parsed[1])
    if len(claims) != 1:
        seen = "; ".join(m.data[:120] for m in messages) or "no message"
        what = "no reply" if not claims else f"{len(claims)} replies"
        return f"`#print axioms {constant}` gave {what} about the theorem ({seen})"
    ok = set(allowed)
    extra = [a for a in claims[0] if _join(name_components(a) or (a,)) not in ok]
    if extra:
        return (
            f"the proof depends on axioms outside the allow-list: {', '.join(extra)} "
            f"(`#print axioms {constant}`; allowed: {', '.join(sorted(ok)) or 'none'})"
        )
    return None


def split_axioms_messages(messages: Sequence[Any], axioms_line: int) -> tuple[list[Any], list[Any]]:
    """(the proof's messages, the ``#print axioms`` command's messages) of one reply to a
    snippet whose last command, on line ``axioms_line``, is ``#print axioms``. Objects with
    ``pos`` (``line``); a message without a position belongs to the proof."""
    proof: list[Any] = []
    command: list[Any] = []
    for m in messages:
        line = m.pos.line if m.pos is not None else 0
        (command if line >= axioms_line else proof).append(m)
    return proof, command


def rejected_for_axioms(
    check: ProofCheck, reason: str, *, raw: dict[str, Any] | None = None
) -> ProofCheck:
    """``check`` (a pass) turned into a ``rejected`` answer for ``reason``; the tactics are
    kept, no tactic is blamed (``first_error_index`` None)."""
    return dataclasses.replace(
        check,
        passed=False,
        status="rejected",
        rejection=reason,
        first_error_index=None,
        messages=(*check.messages, ProverMessage(severity="error", text=reason)),
        raw={**check.raw, **(raw or {})},
    )


def failed_axioms_check(
    check: ProofCheck, status: str, detail: str, *, raw: dict[str, Any] | None = None
) -> ProofCheck:
    """``check`` (a pass) turned into a ``timeout``/``crash`` answer: the axiom check could
    not run, so the proof is not accepted."""
    return dataclasses.replace(
        check,
        passed=False,
        status=status,  # type: ignore[arg-type]
        timed_out=status == "timeout",
        first_error_index=None,
        messages=(*check.messages, ProverMessage(severity="error", text=detail)),
        raw={**check.raw, **(raw or {})},
    )


__all__ = [
    "DEFAULT_ALLOWED_AXIOMS",
    "NEVER_ALLOWED_AXIOMS",
    "allowed_axioms_for",
    "axioms_rejection",
    "declared_name",
    "failed_axioms_check",
    "name_components",
    "parse_axioms_reply",
    "prelude_axioms",
    "print_axioms_command",
    "rejected_for_axioms",
    "split_axioms_messages",
    "theorem_constant",
    "validate_allowed_axioms",
]
