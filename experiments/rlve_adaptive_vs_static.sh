#!/usr/bin/env bash
# RLVE's adaptive vs static difficulty (Zeng et al. 2025, arXiv:2511.07317) on the same
# environments (the C16 collection) at the same budget: RLVE's adaptive window against static
# windows [0, 0] (too easy late on) and [0, 8] (too hard early on), several seeds. Reported:
# held-out accuracy (environments never trained on) and the effective prompt ratio measured
# in training (share of prompts whose group rewards are not all equal).
#
#   ./experiments/rlve_adaptive_vs_static.sh            # the README's table (~35 min on 2 cores)
#   ./experiments/rlve_adaptive_vs_static.sh --quick    # a smoke run: 2 steps, 1 seed
#   ARMS="static_0_0 static_0_8" ./experiments/rlve_adaptive_vs_static.sh   # some arms only
#
# The recipe and budget are rlve_env_scaling.sh's (the default job's recipe, only the
# curriculum differs), so its C16 arm is this experiment's adaptive arm at the same seeds.
# Extra key=value arguments override the config of every arm; the table is printed and
# written to runs/rlve_adaptive_vs_static/table.md.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
quick=0
if [ "${1:-}" = "--quick" ]; then quick=1; shift; fi
out=runs/rlve_adaptive_vs_static
if [ $quick = 1 ]; then
  SEEDS=${SEEDS:-0}
  budget=(run.steps=2 rollout.prompts_per_step=2 rollout.group_size=2 rollout.max_new_tokens=32
          eval.problems=2 "eval.difficulties=[0]" curriculum.tau_num=4)
  out=$out-quick
else
  SEEDS=${SEEDS:-"0 1"}
  budget=(run.steps=10 rollout.prompts_per_step=8 rollout.group_size=4
          rollout.max_new_tokens=64 eval.problems=6 "eval.difficulties=[0,1]"
          curriculum.tau_num=16)
fi
envs=$($PY experiments/rlve_tables.py collections 16)
held_out=$($PY experiments/rlve_tables.py held_out)
arms=(
  "adaptive curriculum.kind=adaptive"
  "static_0_0 curriculum.kind=static curriculum.static_low=0 curriculum.static_high=0"
  "static_0_8 curriculum.kind=static curriculum.static_low=0 curriculum.static_high=8"
)
for arm in "${arms[@]}"; do
  read -r name settings <<<"$arm"
  if [ -n "${ARMS:-}" ] && [[ " $ARMS " != *" $name "* ]]; then continue; fi
  for seed in $SEEDS; do
    # shellcheck disable=SC2086  # $settings holds several key=value words
    $PY -m verirl.cli train examples/default.yaml run.dir=$out run.name=${name}_s${seed} \
      run.seed=$seed run.save_every=1000 run.threads=${THREADS:-2} \
      "curriculum.environments=[$envs]" "eval.environments=[$held_out]" \
      $settings "${budget[@]}" "$@"
  done
done
$PY experiments/rlve_tables.py summary $out | tee $out/table.md
