"""The package's floors, read from the source with ``ast`` (plus one import in a fresh process):

- the floors (:data:`FLOORS`, docs/architecture.md lists them): a unit — a subpackage or a
  top-level module of ``verirl`` — imports only units on its own floor or below, and no two
  units import each other, directly or around a circle;
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
from collections.abc import Iterable, Mapping
from pathlib import Path

import networkx as nx

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

# The floors, bottom to top: a unit imports only units of its own floor or below.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("errors", "types", "registry", "progress"),  # words every floor uses
    ("device", "allocator", "sandbox", "lm", "provers"),  # the machine, sandbox, checkers
    ("models", "tools", "envs"),  # policies; typed tools; the environments (pure, deterministic)
    ("curriculum", "evals", "verification", "rollout", "credit"),  # the loop's parts
    ("rewards", "serve"),  # reward sources; the gym (problems, verdicts, named curricula)
    ("config", "episodes", "sources"),  # the schema; episodes; the task streams
    ("train", "docgen", "doctor", "report"),  # learner, producer, checkpoints, metrics
    ("backends",),  # placement × schedule
    ("assembly",),  # the whole config checked against every registry
    ("trainer",),  # the loop, on top of the parts
    ("preflight",),
    ("cli",),
    ("integrations",),  # plug-ins of other systems, named by import path below
)

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


def _unit(module: str) -> str | None:
    """The unit of ``module``: ``verirl.<unit>`` (a subpackage or a top-level module)."""
    parts = module.split(".")
    if parts[0] != "verirl" or len(parts) < 2:
        return None
    return parts[1]


def _unit_imports(skip: Iterable[str] = ()) -> dict[tuple[str, str], list[str]]:
    """``(importer unit, imported unit)`` → where, over every module but ``skip``."""
    edges: dict[tuple[str, str], list[str]] = {}
    for path in _sources():
        name = _module_name(path)
        source = _unit(name)
        if source is None or name in skip:
            continue
        for line, module in imports(path):
            target = _unit(module)
            if target is not None and target != source:
                edges.setdefault((source, target), []).append(
                    f"{path.relative_to(SRC)}:{line} imports {module}"
                )
    return edges


def _circles(edges: Mapping[tuple[str, str], object]) -> list[list[str]]:
    """The units that import each other around a circle, each circle's units sorted."""
    graph = nx.DiGraph(list(edges))
    return sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)


def _floor_of() -> dict[str, int]:
    return {unit: i for i, floor in enumerate(FLOORS) for unit in floor}


def test_every_unit_has_one_floor() -> None:
    units = {p.stem if p.is_file() else p.name for p in SRC.iterdir()}
    units = {
        u
        for u in units
        if u not in ("__init__", "__main__", "__pycache__")
        and ((SRC / u).with_suffix(".py").is_file() or (SRC / u / "__init__.py").is_file())
    }
    listed = [u for floor in FLOORS for u in floor]
    assert len(listed) == len(set(listed)), "a unit is on two floors"
    assert units == set(listed), (
        f"units without a floor: {sorted(units - set(listed))}; "
        f"floors naming no unit: {sorted(set(listed) - units)}"
    )


def test_no_import_points_up_a_floor() -> None:
    floor = _floor_of()
    bad = [
        f"{where} ({source} on floor {floor[source]}, {target} on floor {floor[target]})"
        for (source, target), wheres in _unit_imports().items()
        if floor[target] > floor[source]
        for where in wheres
    ]
    assert not bad, "imports that point up a floor:\n" + "\n".join(bad)


def test_no_import_circle_between_units() -> None:
    edges = _unit_imports()
    circles = _circles(edges)
    detail = [
        f"{a} -> {b}: {edges[(a, b)][0]}"
        for circle in circles
        for a in circle
        for b in circle
        if (a, b) in edges
    ]
    assert not circles, f"import circles {circles}:\n" + "\n".join(detail)


def test_the_circle_finder_sees_a_circle() -> None:
    """The finder the circle rule rests on, on a graph with one circle of three and a tail."""
    edges = {("a", "b"): 1, ("b", "c"): 1, ("c", "a"): 1, ("c", "d"): 1}
    assert _circles(edges) == [["a", "b", "c"]]
    assert _circles({("a", "b"): 1}) == []
