#!/usr/bin/env bash
# On-policy distillation and self-distillation against GRPO alone on the default job
# (examples/default.yaml, 25 steps), same seeds, same steps. The student is the base model.
#
#   grpo          the default job
#   distill       + loss.terms.distill (advantage form, coef 1) with a frozen checkpoint as
#                 teacher: TEACHER, by default a trained default job's final weights
#                 (Thinking Machines 2025, "On-Policy Distillation"; GKD arXiv:2306.13649)
#   self_distill  + loss.terms.distill with the policy itself as teacher, one of the group's
#                 successful rollouts in context (SDPO, arXiv:2601.20802)
#   grpo_time     GRPO alone for TIME_STEPS steps (default 36): the steps GRPO takes in
#                 distillation's wall time (28.9 s a step against GRPO's 19.8 s, seed 0)
#
#   TEACHER=runs/default/final ./experiments/distill_vs_grpo.sh     # ~12 min a run on 2 cores
#   ARMS="distill" SEEDS=0 ./experiments/distill_vs_grpo.sh         # some arms or seeds only
#
# Runs land in runs/distill_vs_grpo/<arm>_s<seed>; the table (held-out accuracy after training
# with its 95% Wilson interval, wall time of the training steps) is printed and written to
# runs/distill_vs_grpo/table.md. Extra key=value arguments override every arm's config.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
out=runs/distill_vs_grpo
TEACHER=${TEACHER:-runs/default/final}
SEEDS=${SEEDS:-"0 1"}
ARMS=${ARMS:-"grpo distill self_distill"}
TIME_STEPS=${TIME_STEPS:-36}
[ -f "$TEACHER/config.json" ] || { echo "no teacher at TEACHER=$TEACHER (a model directory: train the default job first, or point TEACHER at one)" >&2; exit 2; }
distill=(loss.terms.distill.coef=1.0 loss.terms.distill.form=advantage)
for seed in $SEEDS; do
  for arm in $ARMS; do
    case $arm in
      grpo) extra=() ;;
      grpo_time) extra=("run.steps=$TIME_STEPS") ;;
      distill) extra=("${distill[@]}" loss.sources.teacher.name=checkpoint "loss.sources.teacher.params.path=$TEACHER") ;;
      self_distill) extra=("${distill[@]}" loss.sources.teacher.name=privileged_self) ;;
      *) echo "unknown arm '$arm' (grpo, grpo_time, distill, self_distill)" >&2; exit 2 ;;
    esac
    "$PY" -m verirl.cli train examples/default.yaml run.dir=$out "run.name=${arm}_s$seed" \
      "run.seed=$seed" "${extra[@]}" "$@"
  done
done
"$PY" - "$out" <<'EOF' | tee "$out/table.md"
import json, re, sys
from pathlib import Path
from verirl.evals.stats import wilson_interval
print("| run | held-out before | after (95% interval) | training steps, wall |")
print("|---|---|---|---|")
for run in sorted(p for p in Path(sys.argv[1]).iterdir() if (p / "metrics.jsonl").is_file()):
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    ev = {k: v for r in rows for k, v in r.items() if k.startswith("eval_")}
    if "eval_after/accuracy" not in ev:
        continue
    started = re.search(r"evaluation after training: started \((\d+) samples\)",
                        (run / "run.log").read_text())
    n = int(started.group(1)) if started else None
    acc = ev["eval_after/accuracy"]
    interval = ""
    if n:
        lo, hi = wilson_interval(round(acc * n), n)
        interval = f" [{lo:.3f}, {hi:.3f}]"
    wall = sum(r.get("time/step_s", 0.0) for r in rows) / 60
    print(f"| {run.name} | {ev.get('eval_before/accuracy', float('nan')):.3f} | {acc:.3f}{interval} | {wall:.1f} min |")
EOF
