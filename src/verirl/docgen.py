"""Reference pages generated from the code: the environment catalogue and the config reference.

``verirl envs list --markdown`` prints the catalogue from the environment registry and
``verirl config explain FIELD`` one field of :class:`~verirl.config.TrainConfig` (type, default,
description). ``docs/environments.md`` and ``docs/configuration.md`` hold a hand-written
introduction and the generated table between two marker lines; ``python -m verirl.docgen``
rewrites the tables in place (``--check`` only reports stale pages, exit 1), and a test fails,
naming that command, when a committed page is stale.
"""

from __future__ import annotations

import argparse
import difflib
import sys
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Union

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from verirl.errors import UserInputError

BEGIN = "<!-- BEGIN GENERATED: {name} (python -m verirl.docgen) -->"
END = "<!-- END GENERATED: {name} -->"
REGENERATE = "python -m verirl.docgen"


# ---- environments -------------------------------------------------------------------------
def _cell(text: str) -> str:
    """``text`` as one Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def answer_format_label(cls: Any) -> str:
    """How an environment's answers are written: ``boxed``, ``tagged`` or ``code (lang)``."""
    fmt = getattr(cls, "answer_format", None)
    if fmt is None:
        return ""
    return f"code ({fmt.language})" if fmt.style == "code" else str(fmt.style)


def envs_markdown(family: str | None = None) -> str:
    """The registered environments as a Markdown table, sorted by name, with the module that
    defines each (its family, :mod:`verirl.envs.families`); the whole catalogue ends with
    the old family names and the modules each stands for."""
    from verirl.envs import ENVIRONMENTS, FAMILY_ALIASES, env_names

    names = sorted(env_names(family=family))
    families = {ENVIRONMENTS.get(name).part.family for name in names}
    lines = [
        f"{_count(len(names), 'environment')} in {_count(len(families), 'module')}.",
        "",
        "| name | module | what difficulty scales | answer format |",
        "|---|---|---|---|",
    ]
    for name in names:
        cls = ENVIRONMENTS.get(name).part
        row = (name, cls.family, cls.difficulty_scales, answer_format_label(cls))
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    if family is None:
        lines += [
            "",
            "Old family names, still accepted wherever a family is named (`--family`):",
            "",
            "| old name | modules |",
            "|---|---|",
        ]
        for old, modules in sorted(FAMILY_ALIASES.items()):
            lines.append(f"| {_cell(old)} | {_cell(', '.join(modules))} |")
    return "\n".join(lines) + "\n"


# ---- configuration ------------------------------------------------------------------------
@dataclass(frozen=True)
class FieldDoc:
    """One config field: its dotted path, type, default (as text) and description."""

    path: str
    type: str
    default: str
    description: str
    section: bool  # a nested section (its own fields follow), not a value


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside ``annotation`` (``X``, ``X | None``), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (Union, types.UnionType):
        models = [m for a in typing.get_args(annotation) if (m := _model_in(a)) is not None]
        return models[0] if len(models) == 1 else None
    return None


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:  # constraints (MinLen, Gt, ...) are in the description
        return _type_name(typing.get_args(annotation)[0])
    if origin is Literal:
        return " | ".join(repr(a) for a in typing.get_args(annotation))
    if origin in (Union, types.UnionType):
        return " | ".join(_type_name(a) for a in typing.get_args(annotation))
    if origin is not None:
        args = ", ".join(_type_name(a) for a in typing.get_args(annotation))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]"
    if annotation is type(None):
        return "None"
    return getattr(annotation, "__name__", str(annotation).replace("typing.", ""))


def _default_text(value: Any) -> str:
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    if isinstance(value, tuple):
        value = list(value)
    return repr(value) if isinstance(value, str) else str(value)


_MISSING = object()


def _walk(
    model: type[BaseModel], instance: Any, prefix: str, out: list[FieldDoc]
) -> list[FieldDoc]:
    for name, info in model.model_fields.items():
        path = f"{prefix}{name}"
        value = getattr(instance, name, _MISSING) if instance is not None else _MISSING
        if value is _MISSING:
            value = _class_default(info)
        sub = _model_in(info.annotation)
        description = " ".join((info.description or "").split())
        if sub is not None and not _is_plugin(sub):
            if not description and sub.__doc__ and sub.__module__.startswith("verirl"):
                description = " ".join(sub.__doc__.split())
            default = "None" if value is None else "(section)"
            out.append(FieldDoc(path, _type_name(info.annotation), default, description, True))
            _walk(sub, value if isinstance(value, BaseModel) else None, path + ".", out)
            continue
        out.append(
            FieldDoc(
                path,
                _plugin_type(sub) if sub is not None else _type_name(info.annotation),
                "required" if value is _MISSING else _default_text(value),
                description,
                False,
            )
        )
    return out


def _is_plugin(model: type[BaseModel]) -> bool:
    from verirl.config import Plugin

    return model is Plugin


def _plugin_type(model: type[BaseModel]) -> str:
    return "{name: str, params: dict}"


def _class_default(info: FieldInfo) -> Any:
    if info.default is not PydanticUndefined:
        return info.default
    if info.default_factory is not None:
        return info.default_factory()  # type: ignore[call-arg]
    return _MISSING


def config_fields() -> list[FieldDoc]:
    """Every field of the training config, depth first, with the default job's values."""
    from verirl.config import TrainConfig

    return _walk(TrainConfig, TrainConfig(), "", [])


def config_markdown() -> str:
    """The configuration reference: one table per top-level section."""
    fields = config_fields()
    lines: list[str] = []
    for top in (f for f in fields if "." not in f.path):
        lines += [f"### `{top.path}`", ""]
        if top.description:
            lines += [top.description, ""]
        # values, and the optional sections (None by default: e.g. model.lora) that hold some
        members = [
            f
            for f in fields
            if f.path.startswith(top.path + ".") and (not f.section or f.default == "None")
        ]
        if not top.section:
            members = [top]
        lines += ["| field | type | default | description |", "|---|---|---|---|"]
        for f in members:
            row = (f"`{f.path}`", _cell(f.type), f"`{_cell(f.default)}`", _cell(f.description))
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    return "\n".join(lines)


def explain(path: str) -> str:
    """One field (or section) of the config as text; unknown: :class:`UserInputError`."""
    fields = config_fields()
    by_path = {f.path: f for f in fields}
    found = by_path.get(path)
    if found is None:
        near = difflib.get_close_matches(path, list(by_path), n=3, cutoff=0.5)
        if not near:  # fall back to the fields of the closest section, or the top level
            head = path.rsplit(".", 1)[0] if "." in path else ""
            near = [p for p in by_path if p.startswith(head + ".")][:3] if head else []
            near = near or [f.path for f in fields if "." not in f.path][:3]
        raise UserInputError(
            f"unknown config field {path!r}; nearest valid fields: {', '.join(near)}"
        )
    lines = [found.path, f"  type: {found.type}", f"  default: {found.default}"]
    if found.description:
        lines.append(f"  {found.description}")
    if found.section:
        children = [f.path for f in fields if f.path.rsplit(".", 1)[0] == path and f is not found]
        lines.append("  fields: " + ", ".join(children))
    return "\n".join(lines)


# ---- pages --------------------------------------------------------------------------------
DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES: dict[str, tuple[str, Any]] = {
    "environments": ("environments.md", envs_markdown),
    "configuration": ("configuration.md", config_markdown),
}


def splice(page: str, name: str, generated: str) -> str:
    """``page`` with the text between ``name``'s markers replaced by ``generated``."""
    begin, end = BEGIN.format(name=name), END.format(name=name)
    if page.count(begin) != 1 or page.count(end) != 1 or page.index(begin) > page.index(end):
        raise ValueError(f"the page must hold the lines {begin!r} and {end!r} once, in order")
    head, rest = page.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n\n{generated.strip()}\n\n{end}{tail}"


def stale_pages(docs: Path = DOCS, write: bool = False) -> list[str]:
    """The generated pages under ``docs`` whose tables differ from the code (rewritten if
    ``write``)."""
    stale = []
    for name, (file, generate) in PAGES.items():
        path = docs / file
        text = path.read_text(encoding="utf-8")
        fresh = splice(text, name, generate())
        if fresh != text:
            stale.append(str(path))
            if write:
                path.write_text(fresh, encoding="utf-8")
    return stale


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=REGENERATE, description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale pages (exit 1)")
    parser.add_argument("--docs", type=Path, default=DOCS, help="the docs directory")
    ns = parser.parse_args(argv)
    stale = stale_pages(ns.docs, write=not ns.check)
    for path in stale:
        print(f"{'stale' if ns.check else 'rewrote'}: {path}")
    return 1 if ns.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
