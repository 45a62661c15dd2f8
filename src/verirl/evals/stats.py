"""Benchmark statistics: avg@k, the unbiased pass@k, and a 95% interval on each.

Every benchmark number is a mean over problems of a per-problem value computed from that
problem's ``n`` samples, ``c`` of them correct:

- **avg@n** — the per-problem share of correct samples ``c / n`` (with greedy decoding and
  ``n = 1``: plain accuracy). avg@n is also the unbiased pass@1.
- **pass@k** — the unbiased estimator of Chen et al. 2021, *Evaluating Large Language Models
  Trained on Code* (arXiv:2107.03374), eq. 1: ``1 − C(n − c, k) / C(n, k)``, in its numerically
  stable product form ``1 − Π_{i=n−c+1}^{n} (1 − k / i)`` (the paper's Figure 3 code).

Intervals (95%):

- **Wilson score interval** (Wilson 1927, *Probable inference, the law of succession, and
  statistical inference*, JASA 22:209–212) when the number is a plain proportion — one sample
  per problem, so the per-problem values are independent 0/1 outcomes. It stays inside [0, 1]
  and keeps its coverage near 0 and 1 and for small samples, where the normal (Wald) interval
  fails (Brown, Cai & DasGupta 2001, *Interval Estimation for a Binomial Proportion*,
  Statistical Science 16(2):101–133).
- **Percentile bootstrap over problems** (Efron & Tibshirani 1993, *An Introduction to the
  Bootstrap*, ch. 13) otherwise — several samples per problem are not independent (they share
  the problem), so the problem is the unit that is resampled: draw the problems with
  replacement, recompute the mean of the per-problem values, and take the 2.5% and 97.5%
  quantiles of those means. The resampling uses a fixed seed, so a report is reproducible.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Z95 = 1.959963984540054
"""The 97.5% quantile of the standard normal distribution (a two-sided 95% interval)."""

BOOTSTRAP_RESAMPLES = 10_000


@dataclass(frozen=True)
class Estimate:
    """A reported number with its 95% interval ``[low, high]``; ``method`` names how the
    interval was computed ('wilson' or 'bootstrap'); ``problems`` is the sample size."""

    value: float
    low: float
    high: float
    method: str
    problems: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "ci95": [self.low, self.high],
            "method": self.method,
            "problems": self.problems,
        }


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one problem with ``n`` samples, ``c`` correct (Chen et al.
    2021, arXiv:2107.03374, eq. 1): ``1 − C(n−c, k)/C(n, k)``, as the stable product
    ``1 − Π_{i=n−c+1}^{n} (1 − k/i)``."""
    if not 0 <= c <= n or k < 1:
        raise ValueError(f"pass_at_k needs 0 <= c <= n and k >= 1, got n={n}, c={c}, k={k}")
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples per problem, got {n}")
    if n - c < k:
        return 1.0
    out = 1.0
    for i in range(n - c + 1, n + 1):
        out *= 1.0 - k / i
    return 1.0 - out


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval for a binomial proportion (Wilson 1927):
    ``(p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n)`` with ``p̂ = successes / trials``."""
    if trials < 1 or not 0 <= successes <= trials:
        raise ValueError(
            f"wilson_interval needs 0 <= successes <= trials, trials >= 1; got {successes}/{trials}"
        )
    p = successes / trials
    z2 = z * z
    denom = 1.0 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / denom
    # at p̂ = 0 or 1 one end is exactly 0 or 1 (the formula leaves a rounding error there)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


def bootstrap_interval(
    values: Sequence[float],
    confidence: float = 0.95,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile-bootstrap interval of the mean of ``values`` (one value per problem):
    ``resamples`` means of ``len(values)`` problems drawn with replacement; the
    ``(1 − confidence)/2`` and ``(1 + confidence)/2`` quantiles of those means."""
    data = np.asarray(values, dtype=np.float64)
    if data.ndim != 1 or data.size == 0:
        raise ValueError("bootstrap_interval needs a non-empty 1-d sequence of values")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    rng = np.random.default_rng(seed)
    means = np.empty(resamples, dtype=np.float64)
    chunk = max(1, 2_000_000 // data.size)  # bound the index matrix to ~16 MB
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        idx = rng.integers(0, data.size, size=(stop - start, data.size))
        means[start:stop] = data[idx].mean(axis=1)
    alpha = (1.0 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(low), float(high)


def mean_estimate(counts: Sequence[tuple[int, int]], seed: int = 0) -> Estimate:
    """The mean over problems of ``c / n`` (``counts`` = one ``(n, c)`` per problem) with its
    95% interval: Wilson when every problem has one sample, else the bootstrap over problems."""
    _check_counts(counts)
    if all(n == 1 for n, _ in counts):
        hits = sum(c for _, c in counts)
        low, high = wilson_interval(hits, len(counts))
        return Estimate(hits / len(counts), low, high, "wilson", len(counts))
    values = [c / n for n, c in counts]
    low, high = bootstrap_interval(values, seed=seed)
    return Estimate(float(np.mean(values)), low, high, "bootstrap", len(counts))


def pass_at_k_estimate(counts: Sequence[tuple[int, int]], k: int, seed: int = 0) -> Estimate:
    """pass@k averaged over problems with its 95% interval. pass@1 is avg@n (the same
    interval); for k > 1 the per-problem values are resampled (bootstrap over problems)."""
    _check_counts(counts)
    if k == 1:
        return mean_estimate(counts, seed)
    values = [pass_at_k(n, c, k) for n, c in counts]
    low, high = bootstrap_interval(values, seed=seed)
    return Estimate(float(np.mean(values)), low, high, "bootstrap", len(counts))


def summarize(
    counts: Sequence[tuple[int, int]], ks: Sequence[int] = (1,), seed: int = 0
) -> dict[str, Estimate]:
    """``avg@n`` and ``pass@k`` for each k in ``ks``, each with its interval. Every problem
    must have the same number of samples ``n`` and every k must be ≤ n."""
    _check_counts(counts)
    sizes = {n for n, _ in counts}
    if len(sizes) != 1:
        raise ValueError(f"every problem needs the same number of samples, got {sorted(sizes)}")
    n = sizes.pop()
    too_big = [k for k in ks if k > n]
    if too_big:
        raise ValueError(
            f"pass@{max(too_big)} needs at least {max(too_big)} samples per problem; got {n}"
        )
    out = {f"avg@{n}": mean_estimate(counts, seed)}
    for k in sorted(set(ks)):
        out[f"pass@{k}"] = pass_at_k_estimate(counts, k, seed)
    return out


def _check_counts(counts: Sequence[tuple[int, int]]) -> None:
    if not counts:
        raise ValueError("no problems to summarize")
    for n, c in counts:
        if n < 1 or not 0 <= c <= n:
            raise ValueError(f"each problem needs n >= 1 samples and 0 <= c <= n, got n={n}, c={c}")


__all__ = [
    "Z95",
    "Estimate",
    "bootstrap_interval",
    "mean_estimate",
    "pass_at_k",
    "pass_at_k_estimate",
    "summarize",
    "wilson_interval",
]
