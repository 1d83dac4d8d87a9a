"""Bootstrap intervals over questions: the paired difference of two runs, and one run's own score.

``paired_bootstrap`` resamples questions with replacement with a fixed seed, so a rerun
prints the same interval; ``score_interval`` is the interval of one run's mean score
(the paired bootstrap against zero). `stages.compare`, the answer benchmark and the run
report all use these.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Bootstrap:
    """Paired bootstrap of mean(B - A) over questions."""

    delta: float
    low: float
    high: float
    p_not_better: float  # share of resamples with delta <= 0
    n_boot: int
    seed: int
    ci: float


def paired_bootstrap(a: np.ndarray, b: np.ndarray, n_boot: int = 10000, seed: int = 0,
                     ci: float = 0.95) -> Bootstrap:
    """Percentile CI of the mean per-question difference B - A, resampling questions with replacement."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError(f"paired bootstrap needs two equal, non-empty score vectors (got {a.shape} and {b.shape})")
    if not 0 < ci < 1 or n_boot < 1:
        raise ValueError(f"need 0 < ci < 1 and n_boot >= 1 (got ci={ci}, n_boot={n_boot})")
    d = b - a
    rng = np.random.default_rng(seed)
    means = np.empty(n_boot)
    step = max(1, 2_000_000 // d.size)  # bounded memory for large question sets
    for start in range(0, n_boot, step):
        idx = rng.integers(0, d.size, size=(min(step, n_boot - start), d.size))
        means[start : start + idx.shape[0]] = d[idx].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - ci) / 2, 1 - (1 - ci) / 2])
    return Bootstrap(float(d.mean()), float(lo), float(hi), float((means <= 0).mean()), n_boot, seed, ci)


def score_interval(scores: Sequence[float], n_boot: int = 10000, seed: int = 0, ci: float = 0.95) -> Bootstrap:
    """The bootstrap interval of one run's mean per-question score (against zero)."""
    s = np.asarray(scores, dtype=float)
    return paired_bootstrap(np.zeros_like(s), s, n_boot=n_boot, seed=seed, ci=ci)
