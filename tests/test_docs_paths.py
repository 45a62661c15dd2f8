"""Every module path the documentation names exists: a dotted ``verirl.x.y`` (a module, or a
module and a name it defines: ``verirl.backends.PLACEMENTS``), and a file path under ``src/``,
``tests/``, ``bench/`` or ``examples/`` (``src/verirl/trainer.py``), in the docs pages and the
README. A dotted name that is no module may also be a logger the library writes to
(``verirl.health``) or an entry-point group ``pyproject.toml`` declares (``verirl.plugins``).
So a moved or renamed module cannot leave a page pointing at nothing."""

from __future__ import annotations

import ast
import re
import tomllib
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PAGES = sorted([*(ROOT / "docs").rglob("*.md"), ROOT / "README.md"])

# ``verirl.a.b`` not preceded by a word character or a dot (``+reward.verirl.executor`` is a
# verl config key, not a module path).
DOTTED = re.compile(r"(?<![\w.])verirl(?:\.[A-Za-z_]\w*)+")
# A file (with its suffix) or a folder (with its slash); ``NAME`` in capitals is a placeholder.
FILE = re.compile(r"(?<![\w./-])(?:src|tests|bench|examples)/(?:[\w./-]*\.[a-z]+\b|[\w/-]*/)")
PLACEHOLDER = re.compile(r"/[A-Z][A-Z_]*\.")


@cache
def defined_names(path: Path) -> frozenset[str]:
    """The names a module defines at its top level (classes, functions, assignments,
    imports), read with ``ast`` (nothing imported: some modules need optional packages)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return frozenset(names)


@cache
def logger_names() -> frozenset[str]:
    """The loggers the library creates by a literal name (``getLogger("verirl.health")``)."""
    found: set[str] = set()
    for path in (SRC / "verirl").rglob("*.py"):
        found.update(re.findall(r"getLogger\(\s*[\"'](verirl[\w.]*)[\"']", path.read_text()))
    return frozenset(found)


@cache
def entry_point_groups() -> frozenset[str]:
    """The entry-point groups of ``pyproject.toml`` (``verirl.plugins``)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return frozenset(project.get("entry-points", {}))


def dotted_exists(dotted: str) -> bool:
    """``dotted`` is a module or package of ``src/``, or such a module and a name it
    defines (further attributes of that name are not checked), or a logger's name, or an
    entry-point group."""
    parts = dotted.split(".")
    here = SRC
    module: Path | None = None
    for i, part in enumerate(parts):
        if (here / part / "__init__.py").is_file():
            here, module = here / part, here / part / "__init__.py"
            continue
        if (here / f"{part}.py").is_file():
            module = here / f"{part}.py"
            rest = parts[i + 1 :]
        else:
            rest = parts[i:]
        if not rest:
            return True
        return (
            (module is not None and rest[0] in defined_names(module))
            or dotted in logger_names()
            or dotted in entry_point_groups()
        )
    return True


def named_paths(text: str) -> tuple[list[str], list[str]]:
    """The dotted module paths and the file paths named in ``text``."""
    files = [f for f in FILE.findall(text) if not PLACEHOLDER.search(f)]
    return DOTTED.findall(text), files


def test_the_reader_finds_dotted_and_file_paths_and_tells_missing_ones() -> None:
    """The reader the page check rests on: it must see both kinds and refuse a wrong one,
    or the check could pass by not looking."""
    text = (
        "see `verirl.trainer.Trainer`, verirl.backends. and src/verirl/trainer.py; "
        "`+reward.verirl.executor=x`; tests/test_layering.py, bench/nothing_here.py, tests/s, "
        "bench/NAME.py, src/verirl/envs/."
    )
    dotted, files = named_paths(text)
    assert dotted == ["verirl.trainer.Trainer", "verirl.backends"]
    assert files == [
        "src/verirl/trainer.py",
        "tests/test_layering.py",
        "bench/nothing_here.py",
        "src/verirl/envs/",
    ]
    assert dotted_exists("verirl.trainer.Trainer")
    assert dotted_exists("verirl.backends.PLACEMENTS")
    assert dotted_exists("verirl.health")  # a logger
    assert not dotted_exists("verirl.trainer.NoSuchThing")
    assert not dotted_exists("verirl.no_such_module")
    assert not dotted_exists("verirl.train.no_such_module.Trainer")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_module_path_a_page_names_exists(page: Path) -> None:
    dotted, files = named_paths(page.read_text())
    missing = sorted({d for d in dotted if not dotted_exists(d)})
    missing += sorted({f for f in files if not (ROOT / f).exists()})
    assert not missing, f"{page.relative_to(ROOT)} names what does not exist: {missing}"
