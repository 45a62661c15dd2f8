"""Adaptive vs static difficulty on a synthetic policy: the effective prompt ratio over training.

RLVE (Zeng et al. 2025, arXiv:2511.07317) compares its adaptive window with static windows
[0,1], [0,20] and [0,100]: with [0,1] the effective prompt ratio (share of prompts whose group
rewards are not all equal, i.e. the groups DAPO's dynamic sampling keeps) falls to 0 and
learning stalls; with [0,100] it stays low; adaptive is highest throughout. This script
reproduces the mechanism without a model:

- the policy solves a problem of difficulty d in environment e *fully correctly* with
  probability p(d) = sigmoid(slope · (skill_e − d));
- every step draws ``prompts`` tasks from the curriculum and ``group_size`` rollouts each; the
  reward is the fully-correct flag (binary, as in RLVE's Tinker recipe), so a group is
  informative iff it has both a correct and a wrong rollout;
- skill_e grows by ``learning_rate`` per informative group of environment e (learning happens
  only on groups that survive dynamic sampling);
- the curriculum is updated with every rollout of the step (dropped groups included).

Run: ``python bench/simulate_curriculum.py`` (about a minute) or with ``--steps 100`` for a
quick look. It uses the real curriculum classes; the environments are only names.
"""

from __future__ import annotations

import argparse
import math
import random
from dataclasses import dataclass, field

from verirl.curriculum import AdaptiveDifficulty, Curriculum, StaticWindow, effective_prompt_ratio

ENVS = ("addition", "multiplication", "chain_sum")


@dataclass
class SyntheticPolicy:
    """p(fully correct | env, d) = sigmoid(slope · (skill[env] − d)); skill grows with
    ``learning_rate`` per informative group."""

    skills: dict[str, float]
    slope: float = 1.0
    learning_rate: float = 0.01

    def p_correct(self, env: str, difficulty: int) -> float:
        return 1.0 / (1.0 + math.exp(-self.slope * (self.skills[env] - difficulty)))


@dataclass
class SimulationResult:
    """Per-step effective prompt ratios, and where the policy and curriculum ended up."""

    ratios: list[float] = field(default_factory=list)
    final_skills: dict[str, float] = field(default_factory=dict)
    final_windows: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def mean_ratio(self) -> float:
        return sum(self.ratios) / len(self.ratios) if self.ratios else 0.0

    def mean_ratio_last(self, fraction: float) -> float:
        tail = self.ratios[-max(1, int(len(self.ratios) * fraction)) :]
        return sum(tail) / len(tail)


def simulate(
    curriculum: Curriculum,
    policy: SyntheticPolicy,
    *,
    steps: int,
    prompts: int,
    group_size: int,
    seed: int,
) -> SimulationResult:
    """Train ``policy`` for ``steps`` rollout steps on problems chosen by ``curriculum``."""
    rng = random.Random(seed)
    result = SimulationResult()
    for _ in range(steps):
        tasks = curriculum.next_tasks(prompts)
        outcomes: list[tuple[str, int, bool]] = []
        groups: list[list[float]] = []
        informative: dict[str, int] = {}
        for task in tasks:
            p = policy.p_correct(task.env, task.difficulty)
            correct = [rng.random() < p for _ in range(group_size)]
            outcomes += [(task.env, task.difficulty, c) for c in correct]
            groups.append([float(c) for c in correct])
            if 0 < sum(correct) < group_size:
                informative[task.env] = informative.get(task.env, 0) + 1
        result.ratios.append(effective_prompt_ratio(groups))
        for env, count in informative.items():
            policy.skills[env] += policy.learning_rate * count
        curriculum.update(outcomes)
    result.final_skills = dict(policy.skills)
    result.final_windows = {e: curriculum.window(e) for e in curriculum.environments}
    return result


def strategies(tau_num: int, seed: int) -> dict[str, Curriculum]:
    """RLVE's adaptive window and the paper's three static baselines, on :data:`ENVS`."""
    return {
        "adaptive": AdaptiveDifficulty(ENVS, tau_num=tau_num, seed=seed),
        "static [0,1]": StaticWindow(ENVS, low=0, high=1, seed=seed),
        "static [0,20]": StaticWindow(ENVS, low=0, high=20, seed=seed),
        "static [0,100]": StaticWindow(ENVS, low=0, high=100, seed=seed),
    }


def compare(
    *,
    steps: int,
    prompts: int,
    group_size: int,
    tau_num: int,
    learning_rate: float,
    slope: float,
    initial_skill: float,
    seed: int,
) -> dict[str, SimulationResult]:
    """Run every strategy from the same initial policy and seeds."""
    out = {}
    for name, curriculum in strategies(tau_num, seed).items():
        policy = SyntheticPolicy(dict.fromkeys(ENVS, initial_skill), slope, learning_rate)
        out[name] = simulate(
            curriculum, policy, steps=steps, prompts=prompts, group_size=group_size, seed=seed
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--prompts", type=int, default=128, help="prompts per step (RLVE: 128)")
    parser.add_argument("--group-size", type=int, default=16, help="rollouts per prompt (16)")
    parser.add_argument("--tau-num", type=int, default=128, help="RLVE: 128 rollouts")
    parser.add_argument("--learning-rate", type=float, default=0.005)
    parser.add_argument("--slope", type=float, default=1.0)
    parser.add_argument("--initial-skill", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    results = compare(
        steps=args.steps,
        prompts=args.prompts,
        group_size=args.group_size,
        tau_num=args.tau_num,
        learning_rate=args.learning_rate,
        slope=args.slope,
        initial_skill=args.initial_skill,
        seed=args.seed,
    )
    quarters = [max(1, args.steps * q // 4) for q in (1, 2, 3, 4)]
    print(
        f"steps={args.steps} prompts={args.prompts} G={args.group_size} "
        f"tau_num={args.tau_num} lr={args.learning_rate} slope={args.slope} "
        f"skill0={args.initial_skill} seed={args.seed}"
    )
    head = " ".join(f"{'@' + str(q):>7}" for q in quarters)
    print(f"{'strategy':<16}{'mean':>7} {'last25%':>7} {head}  final skill / window")
    for name, res in results.items():
        at = " ".join(f"{_window_mean(res.ratios, q):7.3f}" for q in quarters)
        skill = sum(res.final_skills.values()) / len(res.final_skills)
        windows = sorted(set(res.final_windows.values()))
        print(
            f"{name:<16}{res.mean_ratio:7.3f} {res.mean_ratio_last(0.25):7.3f} {at}  "
            f"{skill:6.2f} / {windows}"
        )
    print("columns @k: mean effective prompt ratio over the 10 steps up to step k")


def _window_mean(ratios: list[float], upto: int, width: int = 10) -> float:
    tail = ratios[max(0, upto - width) : upto]
    return sum(tail) / len(tail)


if __name__ == "__main__":
    main()
