#!/usr/bin/env bash
# Process credit against outcome credit at equal budget on the generated Coq environments
# (implication chains, list lengths, ring identities at difficulty 0), two seeds per arm, then
# each final checkpoint's held-out pass@k (eval.* of the config: 16 theorems per environment on
# evaluation seeds, 4 samples each at T = 0.8), and the untrained model's on the same theorems.
# The two arms of a seed train side by side, one thread each (PAIR=0: one after the other,
# THREADS=2). OVERRIDES go to every train and eval command; extra arguments go to `verirl
# train` (e.g. run.steps=8). VERIRL may wrap the command, e.g. VERIRL="flock /tmp/x.lock verirl".
set -euo pipefail
cd "$(dirname "$0")/.."
VERIRL=${VERIRL:-.venv/bin/verirl}
out=${OUT:-runs/process_coq_generated}
config=examples/process_coq_generated.yaml
pair=${PAIR:-1}
threads=${THREADS:-$([ "$pair" = 1 ] && echo 1 || echo 2)}
read -r -a overrides <<< "${OVERRIDES:-} run.threads=$threads"
ks=(--pass-k 1 4)
mkdir -p "$out"

train() {  # arm seed [verirl train arguments]
  local run=$1-s$2 extra=()
  [ "$1" = outcome ] && extra=(credit.name=grpo "credit.params={}")
  ls -d "$out/$run"/checkpoint-* >/dev/null 2>&1 && return 0
  $VERIRL train $config run.dir="$out" run.name="$run" run.seed="$2" "${extra[@]}" \
    "${overrides[@]}" "${@:3}" > "$out/$run.log" 2>&1
}
evaluate() {  # name [checkpoint]: the same held-out theorems and sampling seed for every run
  [ -f "$out/$1.json" ] && return 0
  if [ -n "${2:-}" ]; then
    $VERIRL eval "${ks[@]}" --checkpoint "$2" --out "$out/$1.json" run.seed=0 \
      run.dir="$out/_eval-$1" "${overrides[@]}" > "$out/$1.eval.log" 2>&1
  else
    $VERIRL eval "${ks[@]}" --out "$out/$1.json" $config run.dir="$out/_eval-$1" \
      "${overrides[@]}" > "$out/$1.eval.log" 2>&1
  fi
}
side_by_side() {  # two commands (each a quoted string) at once, or in turn with PAIR=0
  if [ "$pair" = 1 ]; then eval "$1" & local first=$!; eval "$2"; wait $first
  else eval "$1"; eval "$2"; fi
}

for seed in ${SEEDS:-0 1}; do
  side_by_side "train process $seed $*" "train outcome $seed $*"
done
evaluate base
last() { ls -d "$out/$1"/checkpoint-* | tail -1; }
for seed in ${SEEDS:-0 1}; do
  side_by_side "evaluate process-s$seed $(last "process-s$seed")" \
    "evaluate outcome-s$seed $(last "outcome-s$seed")"
done
${PYTHON:-.venv/bin/python} experiments/process_tables.py "$out"
