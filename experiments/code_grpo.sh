#!/usr/bin/env bash
# GRPO on two program-synthesis environments with the real model (SmolLM2-135M-Instruct),
# >= 15 steps: held-out pass rate (all hidden tests pass) before and after training, and
# HumanEval pass@1 (164 problems, sandboxed) of the base model and of the trained checkpoint.
# HE_LIMIT=N evaluates HumanEval on its first N problems only (all 164 by default); OUT sets
# the output directory (runs/code_grpo); THREADS the torch threads (2).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-runs/code_grpo}
mkdir -p runs
envs="[code_list_pipeline, code_number_pipeline]"
common=(run.dir=$out run.threads=${THREADS:-2} "curriculum.environments=$envs"
  rollout.max_new_tokens=192 rollout.prompts_per_step=8 rollout.group_size=4
  eval.problems=10 "eval.difficulties=[0, 1]" "$@")
# HumanEval pass@1 of the base model (greedy)
he=(--humaneval)
[ -n "${HE_LIMIT:-}" ] && he+=(--humaneval-limit "$HE_LIMIT")
.venv/bin/verirl eval "${common[@]}" run.name=base rollout.max_new_tokens=256 "${he[@]}" \
  | tee $out.base_eval.txt
# training; the run's own eval (eval.before_and_after) gives held-out pass rate before/after
.venv/bin/verirl train run.name=grpo run.steps=15 credit.name=grpo "${common[@]}"
ckpt=$(ls -d $out/grpo/checkpoint-* | sort -V | tail -n 1)
.venv/bin/verirl eval $out/grpo/config.yaml rollout.max_new_tokens=256 --checkpoint "$ckpt" \
  "${he[@]}" | tee $out.trained_eval.txt
.venv/bin/verirl report $out/grpo
