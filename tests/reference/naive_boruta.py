"""Obviously-correct Boruta decision rule (test-only), written from docs/measures.md.

Given which features beat the largest shadow in each round, replay the rounds:
after round n, every feature still undecided with h hits is tested against
Binomial(n, 1/2) with exact fractions (math.comb), Bonferroni over all m features
(as R's Boruta adjusts, decided ones included); rejection wins if both tails pass.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb

__all__ = ["naive_boruta_decisions"]


def _tail(n, lo, hi):
    """P(lo <= X <= hi) for X ~ Binomial(n, 1/2), exactly."""
    return Fraction(sum(comb(n, k) for k in range(lo, hi + 1)), 2**n)


def naive_boruta_decisions(hit_rounds, alpha):
    """(decisions, decided_round, n_rounds) from ``hit_rounds[r][j]`` (bool): feature
    j's hit in round r + 1. Rounds stop once nothing is undecided."""
    alpha = Fraction(alpha)
    n_features = len(hit_rounds[0])
    decisions = ["tentative"] * n_features
    decided_round = [0] * n_features
    hits = [0] * n_features
    n_rounds = 0
    for n, row in enumerate(hit_rounds, start=1):
        undecided = [j for j in range(n_features) if decisions[j] == "tentative"]
        if not undecided:
            break
        n_rounds = n
        for j in range(n_features):
            if decisions[j] != "rejected" and row[j]:
                hits[j] += 1
        m = n_features
        for j in undecided:
            upper = min(Fraction(1), m * _tail(n, hits[j], n))
            lower = min(Fraction(1), m * _tail(n, 0, hits[j]))
            if lower < alpha:
                decisions[j], decided_round[j] = "rejected", n
            elif upper < alpha:
                decisions[j], decided_round[j] = "confirmed", n
    return decisions, decided_round, n_rounds
