#!/usr/bin/env bash
# Process credit against outcome credit at equal budget on the Coq standard library's easiest
# tier (lemmas whose library proof is one tactic; the coq_stdlib environment, training files),
# two seeds per arm, then each final checkpoint's held-out pass@k on the same held-out lemmas
# (the first HELD of the held-out files' seeded order, 8 samples each at T = 0.8), and the
# untrained model's on the same lemmas. OVERRIDES go to every train and eval command (e.g.
# "model.dtype=bf16 run.threads=1"); extra arguments go to `verirl train` (e.g. run.steps=8).
# VERIRL may wrap the command, e.g. VERIRL="flock /tmp/heavy.lock .venv/bin/verirl".
set -euo pipefail
cd "$(dirname "$0")/.."
VERIRL=${VERIRL:-.venv/bin/verirl}
out=${OUT:-runs/process_coq_stdlib}
config=examples/process_coq_stdlib.yaml
read -r -a overrides <<< "${OVERRIDES:-}"
held=(--benchmark coq-stdlib --difficulty 0 --limit "${HELD:-60}" --samples 8
      --temperature 0.8 --pass-k 1 8 --max-new-tokens 64)
mkdir -p "$out"
[ -f "$out/base.json" ] || $VERIRL eval "${held[@]}" --out "$out/base.json" $config "${overrides[@]}"
for seed in ${SEEDS:-0 1}; do
  for arm in process outcome; do
    run=$arm-s$seed
    extra=()
    [ "$arm" = outcome ] && extra=(credit.name=grpo "credit.params={}")
    if ! ls -d "$out/$run"/checkpoint-* >/dev/null 2>&1; then
      $VERIRL train $config run.dir="$out" run.name="$run" run.seed="$seed" "${extra[@]}" \
        "${overrides[@]}" "$@"
    fi
    ckpt=$(ls -d "$out/$run"/checkpoint-* | tail -1)
    [ -f "$out/$run.json" ] || $VERIRL eval "${held[@]}" --checkpoint "$ckpt" \
      --out "$out/$run.json" "${overrides[@]}"
  done
done
${PYTHON:-.venv/bin/python} experiments/process_tables.py "$out"
