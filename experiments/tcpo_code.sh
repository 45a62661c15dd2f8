#!/usr/bin/env bash
# Code refinement (examples/tcpo_code.yaml: K = 5 turns, L = 10 counterfactual turns, one
# failing test as feedback): TCPO against trajectory-level credit at the same budget (same
# steps, prompts, group size, turns and lengths; only TCPO draws counterfactual alternatives,
# whose extra tokens the run reports as rollout/cf_extra_token_share).
# OUT sets the output directory (runs/tcpo_code); THREADS the torch threads per run (2);
# PARALLEL=1 runs the two arms side by side (with THREADS=1 on a 2-core machine).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-runs/tcpo_code}
common=(run.dir=$out run.threads=${THREADS:-2} "$@")
.venv/bin/verirl train examples/tcpo_code.yaml run.name=tcpo "${common[@]}" &
[ "${PARALLEL:-0}" = 1 ] || wait
.venv/bin/verirl train examples/tcpo_code.yaml run.name=trajectory credit.name=trajectory \
  rollout.collector.params.counterfactual=false "${common[@]}"
wait
.venv/bin/verirl report $out/tcpo --compare $out/trajectory
