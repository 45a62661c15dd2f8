#!/usr/bin/env bash
# Code refinement (examples/tcpo_code.yaml: K = 5 turns, L = 10 counterfactual turns, one
# failing test as feedback): TCPO against trajectory-level credit at the same budget (same
# steps, prompts, group size, turns and lengths; only TCPO draws counterfactual alternatives,
# whose extra tokens the run reports as rollout/cf_extra_token_share).
set -euo pipefail
cd "$(dirname "$0")/.."
out=runs/tcpo_code
common=(run.dir=$out run.threads=${THREADS:-2} "$@")
.venv/bin/verirl train examples/tcpo_code.yaml run.name=tcpo "${common[@]}" &
[ "${THREADS:-2}" = 1 ] || wait
.venv/bin/verirl train examples/tcpo_code.yaml run.name=trajectory credit.name=trajectory \
  rollout.collector.params.counterfactual=false "${common[@]}"
wait
.venv/bin/verirl report $out/tcpo --compare $out/trajectory
