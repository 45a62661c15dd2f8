#!/usr/bin/env bash
# Process credit against outcome credit at equal budget on the Coq standard library's easiest
# tier (lemmas whose library proof is one tactic; the coq_stdlib environment, training files),
# two seeds per arm, then each final checkpoint's held-out pass@k on the same held-out lemmas
# (a seeded sample of HELD lemmas of the held-out files, 8 samples each at T = 0.8), and the
# untrained model's for reference. Extra arguments go to `verirl train` (e.g. run.steps=8).
set -euo pipefail
cd "$(dirname "$0")/.."
VERIRL=${VERIRL:-.venv/bin/verirl}
out=${OUT:-runs/process_coq_stdlib}
config=examples/process_coq_stdlib.yaml
held=(--benchmark coq-stdlib --difficulty 0 --limit "${HELD:-120}" --samples 8
      --temperature 0.8 --pass-k 1 8 --max-new-tokens 64)
mkdir -p "$out"
[ -f "$out/base.json" ] || $VERIRL eval "${held[@]}" $config --out "$out/base.json"
for seed in ${SEEDS:-0 1}; do
  for arm in process outcome; do
    run=$arm-s$seed
    extra=()
    [ "$arm" = outcome ] && extra=(credit.name=grpo "credit.params={}")
    if ! ls -d "$out/$run"/checkpoint-* >/dev/null 2>&1; then
      $VERIRL train $config run.dir="$out" run.name="$run" run.seed="$seed" "${extra[@]}" "$@"
    fi
    ckpt=$(ls -d "$out/$run"/checkpoint-* | tail -1)
    [ -f "$out/$run.json" ] || $VERIRL eval "${held[@]}" --checkpoint "$ckpt" --out "$out/$run.json"
  done
done
${PYTHON:-.venv/bin/python} experiments/process_tables.py "$out"
