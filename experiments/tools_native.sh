#!/usr/bin/env bash
# Native tool calls on tool_world (examples/tcpo_tools.yaml): the default model before and
# after training — held-out rate of well-formed calls and task success — and TCPO against
# MT-GRPO at equal budget (same steps, prompts, group size, turns and lengths; counterfactual
# resampling off, so both sample the same tokens), SEEDS seeds each (default "0 1").
# Each run takes the shared heavy-job lock. OUT sets the output directory (runs/tools_native);
# extra arguments are overrides for every run (e.g. run.steps=4 for a smoke run).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-runs/tools_native}
verirl=${VERIRL:-.venv/bin/verirl}
lock=${LOCK:-/tmp/verirl-heavy.lock}
common=(run.dir=$out run.save_every=0 run.threads=${THREADS:-2} "$@")
for seed in ${SEEDS:-0 1}; do
  flock "$lock" $verirl train examples/tcpo_tools.yaml run.name=tcpo-s$seed run.seed=$seed \
    "${common[@]}"
  flock "$lock" $verirl train examples/tcpo_tools.yaml run.name=mt_grpo-s$seed run.seed=$seed \
    credit.name=mt_grpo 'credit.params={}' "${common[@]}"
done
${PYTHON:-.venv/bin/python} experiments/tools_native.py "$out"
