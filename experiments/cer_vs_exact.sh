#!/usr/bin/env bash
# CER vs exact match as the training reward on the free-form environments; accuracy is always
# rule-verified (each environment's own verifier accepts every surface form of the answer).
set -euo pipefail
cd "$(dirname "$0")/.."
out=runs/cer_vs_exact
common=(run.dir=$out run.threads=${THREADS:-2} "$@")
.venv/bin/verirl train examples/cer.yaml run.name=cer "${common[@]}" &
[ "${THREADS:-2}" = 1 ] || wait
.venv/bin/verirl train examples/cer.yaml run.name=exact_match reward.name=exact_match \
  "reward.params={}" "${common[@]}"
wait
.venv/bin/verirl report $out/cer --compare $out/exact_match
