"""Which nominations DefaultPreemption's candidate search can reach, and how
likely each is.

kube-scheduler's DryRunPreemption does not compare every node where removing
pods may help (the potential nodes): it wants `candidatesWanted` candidates
(calculateNumCandidates) and stops once it has found that many, at least one
of them without a PodDisruptionBudget violation; each of its two lists
(candidates without and with violations) keeps at most `candidatesWanted`.
Which candidates it finds depends on the order it examines the nodes in: a
random offset into a list that, on the usual path, comes out of a Go map
(random order every cycle), examined by 16 parallel workers. Then
pickOneNodeForPreemption takes the best of the candidates found; the order
they were found in plays no part, only which ones.

From one dry run per potential node (each candidate's scores), this module
answers exactly, without walking any order:

- which candidates can be nominated at all: every one with at least
  `candidatesWanted - 1` other candidates no better than it (a search that
  finds it with those), and, when some candidate has no PDB violation, only
  those (kube-scheduler does not stop before finding one, and any such one
  beats every violating candidate); also a PDB-free candidate that comes
  first after `candidatesWanted` violating ones;
- the share of each: the fraction of uniformly random examination orders,
  walked one node after another, that nominate it (equal candidates split
  their orders evenly, as a random pick among them would). A live
  scheduler's orders are not exactly uniform (map hashing, parallel workers
  finishing in their own time), so the share estimates the odds; which
  nominations are possible at all holds for any order and any timing.

Pure arithmetic, no framework imports: exact Fractions, tested against an
enumeration of every order (tests/framework/test_preemption_search.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import comb, lcm


@dataclass(frozen=True)
class Shares:
    """Each candidate's share as numerators[i] / denominator (exact
    integers: fractions of huge binomials would spend their time on
    greatest common divisors)."""

    numerators: list[int]
    denominator: int

    def fraction(self, i: int) -> Fraction:
        return Fraction(self.numerators[i], self.denominator)

    def fractions(self) -> list[Fraction]:
        return [Fraction(n, self.denominator) for n in self.numerators]

    def value(self, i: int) -> float:
        return self.numerators[i] / self.denominator

    @property
    def outcomes(self) -> int:
        """How many candidates can be nominated."""
        return sum(1 for n in self.numerators if n)

    @property
    def could_differ(self) -> bool:
        """More than one candidate can be nominated."""
        return self.outcomes > 1


def outcome_shares(keys: list, pdb_free: list[bool], wanted: int) -> Shares:
    """Per candidate, the share of examination orders that nominate it (0:
    never nominated).

    `keys[i]`: candidate i's scores in pickOneNodeForPreemption's order,
    higher is better, compared as tuples (equal tuples: a full tie);
    `pdb_free[i]`: it violates no PodDisruptionBudget; `wanted`: the
    candidates kube-scheduler looks for. The shares sum to 1 (when there is
    a candidate)."""
    k = len(keys)
    if k == 0:
        return Shares([], 1)
    if k <= wanted:
        # Every candidate is always found: the best one(s), whatever the order.
        best = max(keys)
        tied = sum(1 for key in keys if key == best)
        return Shares([1 if key == best else 0 for key in keys], tied)
    free = sum(1 for f in pdb_free if f)
    violating = k - free
    order = sorted(range(k), key=keys.__getitem__, reverse=True)
    groups = []  # (start, end) in `order`: equal keys
    start = 0
    while start < k:
        key = keys[order[start]]
        end = start + 1
        while end < k and keys[order[end]] == key:
            end += 1
        groups.append((start, end))
        start = end
    # share = [sum_j C(tied, j) C(worse, wanted-1-j) / (j+1)] / C(k, wanted)
    #         + (PDB-free and some are: C(violating, wanted) / C(k, wanted) / free)
    # over one denominator: C(k, wanted) * L * F, L = lcm(1..most j+1), F = free or 1.
    most = max(min(end - start - 1, wanted - 1) for start, end in groups)
    big_l = lcm(*range(1, most + 2))
    big_f = free or 1
    # The first `wanted` candidates found are all violating ones (possible
    # only when there are that many): the search goes on to the first
    # PDB-free candidate, which wins.
    after_violating = comb(violating, wanted) * big_l if free else 0
    choose = _Choose(wanted - 1)
    numerators = [0] * k
    for start, end in groups:
        if free and not pdb_free[order[start]]:  # equal keys: equal PDB violations
            continue  # a PDB-free candidate is always found, and beats it
        num = _best_of_first(end - start - 1, k - end, wanted, choose, big_l) * big_f + after_violating
        for i in order[start:end]:
            numerators[i] = num
    return Shares(numerators, comb(k, wanted) * big_l * big_f)


class _Choose:
    """C(w, r) for the fixed r = wanted - 1 and any w, kept from one w to
    the next (the groups come with fewer and fewer worse candidates): one
    multiplication and one exact division per step instead of a comb()."""

    def __init__(self, r: int):
        self.r = r
        self.w = r
        self.value = 1  # C(r, r)

    def __call__(self, w: int) -> int:
        r = self.r
        if w < r:
            return 0
        if abs(w - self.w) > 64:
            self.w, self.value = w, comb(w, r)
        while self.w > w:
            # C(w - 1, r) = C(w, r) * (w - r) / w
            self.value = self.value * (self.w - r) // self.w
            self.w -= 1
        while self.w < w:
            # C(w + 1, r) = C(w, r) * (w + 1) / (w + 1 - r)
            self.w += 1
            self.value = self.value * self.w // (self.w - r)
        return self.value


def _best_of_first(tied: int, worse: int, wanted: int, choose, big_l: int) -> int:
    """L times the number of `wanted`-subsets holding a given candidate and
    no better candidate, each counted 1/(j+1) when j of its `tied` equals
    are in it too (a random pick among the j+1). `choose(w)` is
    C(w, wanted - 1); L is a multiple of every j+1."""
    rest = wanted - 1
    if rest > worse + tied:
        return 0
    c_worse = choose(worse)  # j = 0: C(tied, 0) * C(worse, wanted - 1)
    out = c_worse * big_l
    c_tied = 1  # C(tied, j)
    for j in range(1, min(tied, rest) + 1):
        c_tied = c_tied * (tied - j + 1) // j
        r = rest - j
        # C(worse, r) = C(worse, r + 1) * (r + 1) / (worse - r), from the previous j
        c_worse = comb(worse, r) if c_worse == 0 else c_worse * (r + 1) // (worse - r)
        if c_worse:
            out += c_tied * c_worse * (big_l // (j + 1))
    return out
