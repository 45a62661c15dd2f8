#!/usr/bin/env bash
# Multi-turn refinement (K = 3) on arithmetic with three credit estimators at the same budget.
# Only TCPO draws counterfactual alternatives (its extra tokens are reported in the metrics).
set -euo pipefail
cd "$(dirname "$0")/.."
out=runs/tcpo_credit
common=(run.dir=$out run.threads=${THREADS:-2} "$@")
nocf=(rollout.collector.params.counterfactual=false)
.venv/bin/verirl train examples/tcpo.yaml run.name=tcpo "${common[@]}" &
[ "${THREADS:-2}" = 1 ] || wait
.venv/bin/verirl train examples/tcpo.yaml run.name=mt_grpo credit.name=mt_grpo "${nocf[@]}" \
  "${common[@]}"
wait
.venv/bin/verirl train examples/tcpo.yaml run.name=trajectory credit.name=trajectory "${nocf[@]}" \
  "${common[@]}" run.threads=2  # alone on the machine by now
.venv/bin/verirl report $out/tcpo --compare $out/mt_grpo $out/trajectory
