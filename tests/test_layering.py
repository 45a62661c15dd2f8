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
import re
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


IMPORT_PATH = re.compile(r"^(verirl(?:\.\w+)+):\w+$")
"""A ``"package.module:attribute"`` import path, as a registry or a plug-in list names one."""
CHILDREN = ".*"
"""Suffix of a string import that names every submodule of a package (``import_module(
f"{__name__}.{name}")`` in a loop over the package)."""


def _string_import(node: ast.AST, module: str) -> str | None:
    """The module an ``import_module(...)`` call or an import-path string names, if any."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        found = IMPORT_PATH.match(node.value)
        return found.group(1) if found else None
    if not isinstance(node, ast.Call) or not node.args:
        return None
    func = node.func
    called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if called != "import_module":
        return None
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr):  # f"{__name__}.{x}" or f"verirl.pkg.{x}"
        prefix = ""
        for part in arg.values:
            if isinstance(part, ast.Constant):
                prefix += str(part.value)
            elif isinstance(part.value, ast.Name) and part.value.id == "__name__":
                prefix += module
            else:
                break
        if prefix.endswith("."):
            return prefix[:-1] + CHILDREN
    return None


def imports(path: Path, name: str | None = None) -> list[tuple[int, str]]:
    """``(line, absolute module)`` of every import in ``path`` (module ``name``, by default
    its place under ``src/``) run at any time (module level or inside a function);
    ``from a import b`` counts as ``a.b`` (``b`` may be a module). String imports count too:
    ``import_module("verirl.x")``, ``import_module(f"{__name__}.{x}")`` (every submodule of
    the package: ``<package>.*``) and ``"verirl.x:attr"`` import paths."""
    module = name or _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
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
        elif (target := _string_import(node, module)) is not None:
            out.append((getattr(node, "lineno", 0), target))
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


def test_the_rule_reader_sees_relative_function_level_string_imports_and_skips_type_checking(
    tmp_path: Path,
) -> None:
    """The reader the rules rest on: it must see a late import, resolve a relative one, read
    the ties a string makes (``import_module``, an import path) and ignore annotation-only
    imports, or the rules above could pass by not looking."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import importlib\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from verirl.integrations.ray import executor\n"
        "def f():\n"
        "    import verirl.integrations.trl\n"
        "    from ..integrations import verl\n"
        "    from . import executors\n"
        "    importlib.import_module('verirl.envs')\n"
        "    importlib.import_module(f'{__name__}.{x}')\n"
        "    importlib.import_module(name)\n"
        "    return 'verirl.integrations.ray.placement:RayBackend', 'verirl.train'\n"
    )
    found = [m for _, m in imports(probe, "verirl.verification.probe")]
    assert found == [
        "importlib",
        "typing.TYPE_CHECKING",
        "verirl.integrations.trl",
        "verirl.integrations.verl",
        "verirl.verification.executors",
        "verirl.envs",
        "verirl.verification.probe.*",
        "verirl.integrations.ray.placement",
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


def _explained(circles: list[list[str]], edges: Mapping[tuple[str, str], list[str]]) -> str:
    """Each circle and, for each of its ties, the first import that makes it."""
    ties = [
        f"{a} -> {b}: {edges[(a, b)][0]}" for c in circles for a in c for b in c if (a, b) in edges
    ]
    return f"import circles {circles}:\n" + "\n".join(ties)


def test_no_import_circle_between_units() -> None:
    edges = _unit_imports()
    circles = _circles(edges)
    assert not circles, _explained(circles, edges)


def _module_imports() -> dict[tuple[str, str], list[str]]:
    """``(importer module, imported module)`` → where, over every module of ``verirl``: an
    import names the most specific module it reaches (``from verirl.envs import get_env``:
    ``verirl.envs``), a ``<package>.*`` string import every submodule of the package."""
    paths = {_module_name(p): p for p in _sources()}
    edges: dict[tuple[str, str], list[str]] = {}
    for source, path in paths.items():
        for line, module in imports(path, source):
            if module.endswith(CHILDREN):
                parent = module.removesuffix(CHILDREN)
                targets = [m for m in paths if m.rpartition(".")[0] == parent]
            else:
                while module and module not in paths:
                    module = module.rpartition(".")[0]
                targets = [module] if module else []
            for target in targets:
                if target != source:
                    where = f"{path.relative_to(SRC)}:{line} imports {target}"
                    edges.setdefault((source, target), []).append(where)
    return edges


def test_no_import_circle_between_modules() -> None:
    """No module imports itself around a circle — string imports included — so every module
    can be read, imported and tested after the ones it uses."""
    edges = _module_imports()
    circles = _circles(edges)
    assert not circles, _explained(circles, edges)


def test_the_circle_finder_sees_a_circle() -> None:
    """The finder the circle rule rests on, on a graph with one circle of three and a tail."""
    edges = {("a", "b"): 1, ("b", "c"): 1, ("c", "a"): 1, ("c", "d"): 1}
    assert _circles(edges) == [["a", "b", "c"]]
    assert _circles({("a", "b"): 1}) == []
