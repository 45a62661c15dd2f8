#!/usr/bin/env bash
# RLVE's environment-scaling experiment (Zeng et al. 2025, arXiv:2511.07317): train on the
# nested collections C1 ⊂ C4 ⊂ C16 ⊂ C64 (experiments/rlve_tables.py collections K) at the
# same budget per arm, and compare accuracy on held-out environments never trained on
# (experiments/rlve_tables.py held_out), over several seeds, with the spread shown.
#
#   ./experiments/rlve_env_scaling.sh            # the README's table (~45 min on 2 cores)
#   ./experiments/rlve_env_scaling.sh --quick    # a smoke run: 2 steps, tiny groups, 1 seed
#   SEEDS="0 1 2" SIZES="1 4 16" ./experiments/rlve_env_scaling.sh run.steps=20
#
# Every arm starts from the default job's recipe (examples/default.yaml: GRPO, lr 2e-5,
# adaptive windows, varied system prompts with a quarter zero-shot) and changes only the
# training collection: the paper's own zero-shot setup (examples/rlve.yaml) gives a 135M model
# no reward signal at a CPU budget (it never boxes an answer unprompted, so every group is
# all -1). Extra key=value arguments override the config of every arm. The table is printed
# at the end and written to runs/rlve_env_scaling/table.md.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
quick=0
if [ "${1:-}" = "--quick" ]; then quick=1; shift; fi
out=runs/rlve_env_scaling
if [ $quick = 1 ]; then
  SEEDS=${SEEDS:-0}
  SIZES=${SIZES:-"1 4 16 64"}
  budget=(run.steps=2 rollout.prompts_per_step=2 rollout.group_size=2 rollout.max_new_tokens=32
          eval.problems=2 "eval.difficulties=[0]" curriculum.tau_num=4)
  out=$out-quick
else
  SEEDS=${SEEDS:-"0 1"}
  SIZES=${SIZES:-"1 4 16 64"}
  budget=(run.steps=10 rollout.prompts_per_step=8 rollout.group_size=4
          rollout.max_new_tokens=64 eval.problems=6 "eval.difficulties=[0,1]"
          curriculum.tau_num=16)
fi
held_out=$($PY experiments/rlve_tables.py held_out)
for k in $SIZES; do
  envs=$($PY experiments/rlve_tables.py collections "$k")
  for seed in $SEEDS; do
    $PY -m verirl.cli train examples/default.yaml run.dir=$out run.name=c${k}_s${seed} \
      run.seed=$seed run.save_every=1000 run.threads=${THREADS:-2} \
      "curriculum.environments=[$envs]" "eval.environments=[$held_out]" \
      "${budget[@]}" "$@"
  done
done
$PY experiments/rlve_tables.py summary $out | tee $out/table.md
