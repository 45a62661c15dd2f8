"""The built wheel works as a user's ``pip install`` would leave it.

``python -m build`` makes an sdist and, from that sdist, a wheel (so a file missing from the
sdist fails here too). The wheel goes into a fresh virtual environment — not editable, no
``src/`` on the path, run from an empty directory — whose only other packages are this
environment's (reached through a ``.pth`` line, so nothing is downloaded). From there:
``verirl envs list``, ``verirl envs check`` on a number task, a Coq proof and a code task, every
data file of the source package found in the installed one, the wheel's declared dependency
ranges satisfied, and a one-step ``verirl train`` on a tiny random model.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "verirl"

pytestmark = pytest.mark.slow


def _run(argv: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["OMP_NUM_THREADS"] = "1"
    res = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert res.returncode == 0, f"{argv} exited {res.returncode}:\n{res.stdout}\n{res.stderr}"
    return res


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(sdist, wheel), built from a copy of the tracked tree (no stale build/ or egg-info)."""
    out = tmp_path_factory.mktemp("dist")
    src = tmp_path_factory.mktemp("tree") / "verirl"
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        path = ROOT / name.decode()
        if path.is_file():
            target = src / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)  # follows the examples/ symlinks: plain files here
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(src)], src)
    sdists, wheels = list(out.glob("*.tar.gz")), list(out.glob("*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1, list(out.iterdir())
    return sdists[0], wheels[0]


@pytest.fixture(scope="module")
def venv(built: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding the wheel; its dependencies come from this environment."""
    root = tmp_path_factory.mktemp("venv")
    _run([sys.executable, "-m", "venv", "--without-pip", str(root)], root)
    python = root / "bin" / "python"
    purelib = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    # this environment's packages, after the venv's own (a .pth line appends to sys.path; the
    # .pth files in that directory, such as an editable verirl's finder, are not processed)
    (purelib / "zz_verirl_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "-q",
            "--no-index",
            str(built[1]),
        ],
        root,
    )
    return root


def test_the_sdist_and_the_wheel_hold_the_package_data(built: tuple[Path, Path]) -> None:
    sdist, wheel = built
    names = set(zipfile.ZipFile(wheel).namelist())
    for expected in (
        "verirl/provers/data/coq_theorems.v",
        "verirl/provers/data/lean_theorems.lean",
        "verirl/examples/default.yaml",
        "verirl/examples/cer.yaml",
    ):
        assert any(n.endswith(expected.split("verirl/", 1)[1]) for n in names), expected
    import tarfile

    with tarfile.open(sdist) as tar:
        assert any(n.endswith("src/verirl/provers/data/lean_theorems.lean") for n in tar.getnames())


def test_the_installed_package_is_the_wheel_and_has_every_data_file(venv: Path) -> None:
    python = str(venv / "bin" / "python")
    source_data = sorted(
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    )
    assert source_data, "the package has data files"
    script = (
        "import sys, verirl, pathlib; root = pathlib.Path(verirl.__file__).parent; "
        "print(root); missing = [n for n in sys.argv[1:] if not (root / n).is_file()]; "
        "print('MISSING', missing)"
    )
    out = _run([python, "-c", script, *source_data], venv).stdout.splitlines()
    assert out[0].startswith(str(venv)), f"verirl imported from {out[0]}, not the wheel"
    assert out[1] == "MISSING []", out[1]
    # the bundled examples load by name from the installed package
    check = "from verirl.config import load_config; print(load_config('cer').reward.name)"
    assert _run([python, "-c", check], venv).stdout.strip() == "cer"


def test_the_wheels_dependency_ranges_hold_in_this_environment(venv: Path) -> None:
    script = """
import importlib.metadata as md
from packaging.requirements import Requirement
bad = []
for text in md.requires("verirl") or []:
    req = Requirement(text)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue
    try:
        have = md.version(req.name)
    except md.PackageNotFoundError:
        bad.append(f"{req.name}: not installed")
        continue
    if not req.specifier.contains(have, prereleases=True):
        bad.append(f"{req.name}: {have} not in {req.specifier}")
print("BAD", bad)
"""
    out = _run([str(venv / "bin" / "python"), "-c", script], venv).stdout.strip()
    assert out == "BAD []", out


def test_envs_list_and_check_from_the_installed_cli(venv: Path) -> None:
    verirl = str(venv / "bin" / "verirl")
    listing = _run([verirl, "envs", "list"], venv).stdout
    for name in ("addition", "coq_", "code_"):
        assert name in listing, name
    checked = _run(
        [
            verirl,
            "envs",
            "check",
            "addition",
            "coq_list_lengths",
            "code_coin_ways",
            "--max-difficulty",
            "2",
            "--seeds",
            "1",
        ],
        venv,
    ).stdout
    for name in ("addition", "coq_list_lengths", "code_coin_ways"):
        assert name in checked, checked
    if shutil.which("coqidetop") or shutil.which("coqidetop.opt"):
        assert "coq checker is not available" not in checked


def test_one_training_step_from_the_installed_cli(venv: Path, tiny_model_dir: Path) -> None:
    run_dir = venv / "runs"
    _run(
        [
            *[str(venv / "bin" / "verirl"), "train", f"model.name={tiny_model_dir}"],
            *["model.dtype=fp32", f"run.dir={run_dir}", "run.name=one", "run.steps=1"],
            *["run.threads=1", "rollout.prompts_per_step=2", "rollout.group_size=2"],
            *["rollout.max_new_tokens=4", "eval.before_and_after=false"],
        ],
        venv,
    )
    assert (run_dir / "one" / "metrics.jsonl").is_file()
