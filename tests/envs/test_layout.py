"""The house rules of ``verirl.envs``, read from the source with ``ast`` (nothing imported):

- at the top of ``envs/`` only the protocol and registry (``base``), the family names
  (``families``), the package itself and the self-check;
- ``reading/`` imports nothing else of ``envs``; ``kit/`` only ``base``, ``reading`` and ``kit``;
- a family module (one in a category package) imports only ``base``, ``reading``, ``kit`` and
  its own category.

There are no exceptions: a helper two categories need lives in ``kit/``.
"""

from __future__ import annotations

import ast
from pathlib import Path

from verirl.envs import CATEGORIES

ENVS = Path(__file__).resolve().parents[2] / "src" / "verirl" / "envs"
TOP = {"__init__", "base", "families", "selfcheck"}


def _module_name(path: Path) -> str:
    rel = path.relative_to(ENVS).with_suffix("")
    return ".".join(rel.parts)


def _envs_imports(path: Path) -> set[str]:
    """The ``verirl.envs`` modules ``path`` imports (relative to ``verirl.envs``)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "verirl.envs":
                out.update(a.name for a in node.names)
            elif node.module.startswith("verirl.envs."):
                out.add(node.module.removeprefix("verirl.envs."))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("verirl.envs."):
                    out.add(a.name.removeprefix("verirl.envs."))
    return out


def _modules() -> list[Path]:
    return sorted(p for p in ENVS.rglob("*.py") if "__pycache__" not in p.parts)


def test_top_of_envs_holds_only_protocol_registry_families_and_selfcheck() -> None:
    top = {p.stem for p in ENVS.glob("*.py")}
    assert top == TOP, f"modules at the top of envs/ besides {sorted(TOP)}: {sorted(top - TOP)}"
    packages = {p.name for p in ENVS.iterdir() if (p / "__init__.py").exists()}
    assert packages == {*CATEGORIES, "reading", "kit"}, (
        "every package is a category, reading or kit"
    )


def _allowed(name: str, target: str) -> bool:
    """May module ``name`` import ``target`` (both relative to ``verirl.envs``)?"""
    head, thead = name.split(".")[0], target.split(".")[0]
    if head == "reading":
        return thead == "reading"
    if head == "kit":
        return thead in ("base", "reading", "kit")
    return thead in ("base", "reading", "kit", head)


def test_imports_follow_the_house_rules() -> None:
    bad = []
    for path in _modules():
        name = _module_name(path)
        if name in TOP or path.name == "__init__.py":
            continue
        bad += [f"{name} imports {t}" for t in _envs_imports(path) if not _allowed(name, t)]
    assert not bad, "imports across the house rules:\n" + "\n".join(sorted(bad))


def test_every_environment_lives_in_a_category_package() -> None:
    from verirl.envs import ENVIRONMENTS, load_all

    load_all()
    for name, spec in ENVIRONMENTS.items():
        cls = spec.part
        parts = cls.__module__.split(".")
        assert parts[:2] == ["verirl", "envs"] and len(parts) == 4 and parts[2] in CATEGORIES, (
            f"{name} is defined in {cls.__module__}, not in a category package"
        )
        assert cls.family == f"{parts[2]}/{parts[3]}", f"{name}'s family is not its module path"


def test_families_imports_nothing_of_envs() -> None:
    # base imports families: an import back would be a circle
    assert _envs_imports(ENVS / "families.py") == set()


def test_the_rule_reader_sees_imports(tmp_path: Path) -> None:
    # the checker itself must be able to fail: a family that imports another category
    path = tmp_path / "family.py"
    path.write_text(
        "import verirl.envs.graphs.walks\n"
        "from verirl.envs.algebra.matrices import parse_matrix\n"
        "from verirl.envs import base\n"
        "from verirl.envs.kit.grids import grid_lines\n"
    )
    found = _envs_imports(path)
    assert found == {"graphs.walks", "algebra.matrices", "base", "kit.grids"}
    assert [t for t in sorted(found) if not _allowed("grids.puzzles", t)] == [
        "algebra.matrices",
        "graphs.walks",
    ]
    assert not _allowed("kit.grids", "grids.puzzles") and not _allowed("reading.x", "base")
    assert _allowed("grids.search", "grids.selection")
