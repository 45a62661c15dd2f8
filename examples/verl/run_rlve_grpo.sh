#!/usr/bin/env bash
# GRPO on verirl's adaptive environments with verl 0.9.1, on one GPU node:
#
#   MODEL=/path/to/Qwen2.5-1.5B-Instruct GPUS=8 ./examples/verl/run_rlve_grpo.sh [more overrides]
#
# Needs an environment with requirements/verl.txt (plus vLLM for the rollout:
# `pip install verl[vllm]==0.9.1`) and verirl installed with --no-deps. verirl registers its
# reward managers and estimators through verl's "verl.plugins" entry point; the variable below
# does the same where entry points are off (VERL_USE_EXTERNAL_PLUGINS=none).
#
# Process credit on proofs (Coq on every node):
#   ... +data.verirl.environments=[coq_proofs] algorithm.adv_estimator=verirl_process \
#       reward.reward_manager.name=VerirlProcessRewardManager
# TCPO over verl's multi-turn samples (your multi-turn rollout config inserts the feedback):
#   ... algorithm.adv_estimator=verirl_tcpo reward.reward_manager.name=VerirlTurnsRewardManager
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export VERL_USE_EXTERNAL_MODULES=${VERL_USE_EXTERNAL_MODULES:-verirl.integrations.verl.plugin}
mapfile -t overrides < <(grep -v '^\s*#' "$here/rlve_grpo.overrides" | grep -v '^\s*$')
exec python -m verl.trainer.main_ppo "${overrides[@]}" \
  actor_rollout_ref.model.path="${MODEL:?set MODEL to a local model directory}" \
  trainer.n_gpus_per_node="${GPUS:-8}" trainer.nnodes="${NODES:-1}" "$@"
