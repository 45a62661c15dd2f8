#!/usr/bin/env bash
# Process-verified proving on the bundled Coq theorems: outcome GRPO + tactic-level process
# advantage (d1 = -0.05, d2 = -0.1, first token) vs outcome-only GRPO, same budget.
set -euo pipefail
cd "$(dirname "$0")/.."
out=runs/process_coq
common=(run.dir=$out run.threads=${THREADS:-2} "$@")
.venv/bin/verirl train examples/process_coq.yaml run.name=process "${common[@]}" &
[ "${THREADS:-2}" = 1 ] || wait
.venv/bin/verirl train examples/process_coq.yaml run.name=outcome credit.name=grpo \
  "credit.params={}" "${common[@]}"
wait
.venv/bin/verirl report $out/process --compare $out/outcome
