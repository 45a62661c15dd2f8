"""The setup locks (requirements/*constraints.txt) agree with the pins they sit under.

`./run.sh` installs each environment under a `pip freeze` of a working one. A pin bumped in
pyproject.toml (or requirements/verl.txt) without refreshing the lock would make pip refuse
the install with a resolver conflict; these tests name the package and both versions first.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def _pins(lines: list[str]) -> dict[str, str]:
    """The exact (``==``) pins among ``lines``, canonical name -> version; comments and
    ranges are skipped."""
    pins: dict[str, str] = {}
    for line in lines:
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        requirement = Requirement(text)
        for spec in requirement.specifier:
            if spec.operator == "==":
                pins[canonicalize_name(requirement.name)] = spec.version
    return pins


def _read(path: Path) -> list[str]:
    return path.read_text().splitlines()


def _pyproject() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]


def _disagreements(pins: dict[str, str], lock: dict[str, str]) -> list[str]:
    """Pins the lock does not satisfy (PEP 440: ``==2.13.0`` accepts a locked ``2.13.0+cpu``)."""
    return [
        f"{name}: pinned {version}, locked {lock.get(name, '(absent)')}"
        for name, version in sorted(pins.items())
        if name not in lock or not SpecifierSet(f"=={version}").contains(lock[name], True)
    ]


def test_pin_parser_reads_names_versions_and_extras() -> None:
    pins = _pins(["Foo_Bar[x]==1.2.3  # c", "baz>=2", "# qux==1", "torch==2.13.0+cpu"])
    assert pins == {"foo-bar": "1.2.3", "torch": "2.13.0+cpu"}
    assert _disagreements({"foo-bar": "1.2.4"}, pins) == ["foo-bar: pinned 1.2.4, locked 1.2.3"]
    assert _disagreements({"torch": "2.13.0"}, pins) == []
    assert _disagreements({"ray": "2.60.0"}, pins) == ["ray: pinned 2.60.0, locked (absent)"]


def test_main_lock_matches_the_projects_pins() -> None:
    project = _pyproject()
    extras = project["optional-dependencies"]
    installed = ("dev", "bench", "code", "ray", "verifiers")  # ./run.sh setup's extras
    wanted = project["dependencies"] + [d for extra in installed for d in extras[extra]]
    lock = _pins(_read(ROOT / "requirements" / "constraints.txt"))
    problems = _disagreements(_pins(wanted), lock)
    assert not problems, f"requirements/constraints.txt is stale (see its header): {problems}"


def test_verl_lock_matches_requirements_verl() -> None:
    lock = _pins(_read(ROOT / "requirements" / "verl-constraints.txt"))
    problems = _disagreements(_pins(_read(ROOT / "requirements" / "verl.txt")), lock)
    assert not problems, f"requirements/verl-constraints.txt is stale: {problems}"


def test_vllm_lock_matches_the_vllm_extra_and_the_projects_torch() -> None:
    lock = _pins(_read(ROOT / "requirements" / "vllm-constraints.txt"))
    project = _pyproject()
    wanted = _pins(project["optional-dependencies"]["vllm"])
    wanted["torch"] = _pins(project["dependencies"])["torch"]
    problems = _disagreements(wanted, lock)
    assert not problems, f"requirements/vllm-constraints.txt is stale: {problems}"
