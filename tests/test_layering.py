"""The package's floors, read from the source with ``ast`` (plus one import in a fresh process):

- ``config`` is the schema only: it imports none of the parts it names (reward sources,
  collectors, engines, credit estimators, losses, executors, detectors) nor the check of the
  whole system (``assembly``), so the config and the registries' consumers never import each
  other; the whole-system check lives in :mod:`verirl.assembly`, above both.
- nothing outside ``integrations/`` imports ``verirl.integrations`` — not at the top of a
  module, not inside a function: a plug-in for another trainer is named by its import path
  (a string, imported on first use) where the library offers it, e.g. the ``ray`` executor.

Imports under ``if TYPE_CHECKING:`` are annotations only and do not count.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "verirl"

# What the schema may not import: the registries' consumers and the whole-system check.
CONFIG_MUST_NOT_IMPORT = (
    "verirl.assembly",
    "verirl.requirements",
    "verirl.backends",
    "verirl.cli",
    "verirl.credit",
    "verirl.evals",
    "verirl.integrations",
    "verirl.rewards",
    "verirl.rollout",
    "verirl.train",
    "verirl.verification",
)
# ... except these schema modules (parameter models, no registry lookups).
CONFIG_MAY_IMPORT = ("verirl.verification.settings",)


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` except those under ``if TYPE_CHECKING:``."""
    out: list[ast.AST] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return out


def imports(path: Path, name: str | None = None) -> list[tuple[int, str]]:
    """``(line, absolute module)`` of every import in ``path`` (module ``name``, by default
    its place under ``src/``) run at any time (module level or inside a function);
    ``from a import b`` counts as ``a.b`` (``b`` may be a module)."""
    package = name or _module_name(path)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    out: list[tuple[int, str]] = []
    for node in _runtime_nodes(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")
                parent = parent[: len(parent) - node.level + 1]
                base = ".".join([*parent, *([base] if base else [])])
            out.extend((node.lineno, f"{base}.{a.name}") for a in node.names)
    return sorted(out)


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _sources() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)


def test_config_is_the_schema_only() -> None:
    path = SRC / "config.py"
    bad = [
        f"config.py:{line} imports {module}"
        for line, module in imports(path)
        if any(_under(module, p) for p in CONFIG_MUST_NOT_IMPORT)
        and not any(_under(module, p) for p in CONFIG_MAY_IMPORT)
    ]
    assert not bad, (
        "the config schema imports what it configures (check plugins and requirements in "
        "verirl.assembly instead): " + "; ".join(bad)
    )


def test_nothing_outside_integrations_imports_integrations() -> None:
    bad = []
    for path in _sources():
        name = _module_name(path)
        if _under(name, "verirl.integrations"):
            continue
        bad += [
            f"{path.relative_to(SRC)}:{line} imports {module}"
            for line, module in imports(path)
            if _under(module, "verirl.integrations")
        ]
    assert not bad, (
        "modules below integrations/ import it (name the plug-in by its import path instead): "
        + "; ".join(bad)
    )


def test_the_rule_reader_sees_relative_function_level_and_skips_type_checking(
    tmp_path: Path,
) -> None:
    """The reader the rules rest on: it must see a late import, resolve a relative one and
    ignore annotation-only ones, or the rules above could pass by not looking."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from verirl.integrations.ray import executor\n"
        "def f():\n"
        "    import verirl.integrations.trl\n"
        "    from ..integrations import verl\n"
        "    from . import executors\n"
    )
    found = [m for _, m in imports(probe, "verirl.verification.probe")]
    assert found == [
        "typing.TYPE_CHECKING",
        "verirl.integrations.trl",
        "verirl.integrations.verl",
        "verirl.verification.executors",
    ]


def test_importing_the_library_loads_no_integration() -> None:
    """At run time too: the config, the whole-system check, the verification stage with all
    its executors registered, the loop and the CLI load without any plug-in of another trainer."""
    code = (
        "import sys\n"
        "import verirl.config, verirl.assembly, verirl.verification, verirl.trainer\n"
        "import verirl.backends, verirl.cli\n"
        "print(sorted(m for m in sys.modules if m.startswith('verirl.integrations')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout
