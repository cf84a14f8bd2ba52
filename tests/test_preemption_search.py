"""framework/preemption_search.py: which nominations DefaultPreemption's
candidate search can reach, and the share of examination orders that reach
each, against cases counted by hand and an enumeration of every order.

A candidate here is (name, victims, PDB violations, highest victim
priority): its key is pickOneNodeForPreemption's scores, higher is better
(fewest violations, lowest highest priority, smallest priority sum, fewest
victims; every victim has the same priority and no start time, so the last
criterion ties).
"""

from __future__ import annotations

import itertools
from fractions import Fraction as F

from hypothesis import given, settings
from hypothesis import strategies as st

from kschedx.framework.preemption_search import outcome_shares

MAX_INT32 = 2**31 - 1


def key(victims: int, pdb: int = 0, top: int = 0) -> tuple:
    return (-pdb, -top, -victims * (top + MAX_INT32 + 1), -victims, (1, 0.0))


def shares_of(cands: dict, wanted: int) -> dict:
    """{name: share} of the candidates that can be nominated."""
    names = list(cands)
    keys = [key(*cands[n]) if isinstance(cands[n], tuple) else key(cands[n]) for n in names]
    free = [k[0] == 0 for k in keys]
    shares = outcome_shares(keys, free, wanted).fractions()
    return {n: s for n, s in zip(names, shares) if s}


# -- the walk of DryRunPreemption, one worker, and pickOneNodeForPreemption -----------------
def walk(order: list, wanted: int) -> list:
    """The candidates a sequential search over `order` (each (name, key,
    pdb_free)) keeps: it stops once `wanted` are found, one of them PDB-free;
    each kind keeps at most `wanted`."""
    free, violating = [], []
    for c in order:
        target = free if c[2] else violating
        if len(target) < wanted:
            target.append(c)
        if free and len(free) + len(violating) >= wanted:
            break
    return free + violating


def enumerate_orders(cands: list, wanted: int) -> dict:
    """{name: share} over every order of the candidates, full ties split."""
    out: dict = {}
    orders = list(itertools.permutations(cands))
    for order in orders:
        found = walk(list(order), wanted)
        best = max(c[1] for c in found)
        tied = [c[0] for c in found if c[1] == best]
        for name in tied:
            out[name] = out.get(name, 0) + F(1, len(tied) * len(orders))
    return out


# -- cases counted by hand -------------------------------------------------------------------
def test_h1_the_issues_example_seven_potential_nodes_three_wanted():
    # 50% of 7 = 3 candidates wanted. A candidate wins a set of 3 when the other
    # two are worse: share = C(worse, 2) / C(7, 3) = C(worse, 2) / 35.
    cands = {"node-0": 5, "node-1": 6, "node-2": 7, "node-3": 1, "node-4": 2, "node-5": 4, "node-6": 3}
    assert shares_of(cands, 3) == {"node-3": F(15, 35), "node-4": F(10, 35), "node-6": F(6, 35),
                                   "node-5": F(3, 35), "node-0": F(1, 35)}


def test_h2_one_pdb_free_candidate_cannot_differ_although_few_are_examined():
    cands = {"node-a": (3, 0), **{f"node-{x}": (1, 1) for x in "bcdef"}}
    shares = outcome_shares([key(*v) for v in cands.values()], [v[1] == 0 for v in cands.values()], 2)
    assert shares.fractions() == [1, 0, 0, 0, 0, 0]
    assert not shares.could_differ


def test_h3_no_pdb_free_candidate_every_node_examined_yet_it_differs():
    # (violations, victims): n1 (2, 1), n2 (1, 2), n3 (1, 1), n4 (1, 3), n5 (3, 1).
    cands = {"n1": (1, 2), "n2": (2, 1), "n3": (1, 1), "n4": (3, 1), "n5": (1, 3)}
    assert shares_of(cands, 2) == {"n3": F(4, 10), "n2": F(3, 10), "n4": F(2, 10), "n1": F(1, 10)}


def test_h4_u1_equal_candidates_each_a_fifth():
    # Upstream's "all nodes are possible candidates, limits to 2" (40% of 5, at least 1).
    cands = {f"node{i}": (1, 0, 100) for i in range(1, 6)}
    assert shares_of(cands, 2) == {f"node{i}": F(1, 5) for i in range(1, 6)}


def test_h5_fewer_candidates_than_wanted_cannot_differ():
    cands = {"node-0": 2, "node-2": 1, "node-4": 3}
    shares = outcome_shares([key(v) for v in cands.values()], [True] * 3, 3)
    assert shares.fractions() == [0, 1, 0] and not shares.could_differ


def test_u2_three_equal_candidates_two_wanted():
    # "some nodes are not possible candidates": node2 and node5 run pods of a higher priority.
    assert shares_of({n: (1, 0, 100) for n in ("node1", "node3", "node4")}, 2) == {
        "node1": F(1, 3), "node3": F(1, 3), "node4": F(1, 3)}


def test_u3_violating_candidates_are_never_nominated_when_a_pdb_free_one_exists():
    # "looks past numCandidates until a non-PDB violating node": node1, node2, node5 violate.
    cands = {"node1": (1, 1, 100), "node2": (1, 1, 100), "node3": (1, 0, 100), "node4": (1, 0, 100),
             "node5": (1, 1, 100)}
    assert shares_of(cands, 2) == {"node3": F(1, 2), "node4": F(1, 2)}


def test_a_pdb_free_candidate_beats_every_violating_one_whatever_its_victims():
    cands = {"v1": (1, 1), "v2": (1, 1), "v3": (1, 1), "free": (9, 0)}
    assert shares_of(cands, 2) == {"free": F(1)}
    # Two wanted among v1, v2 (violating), good (1 victim) and bad (9 victims):
    # good wins when it is among the first two (1/2); bad when it comes first with
    # a violating one (2 sets of the 6: 1/3); when v1 and v2 come first (1/6), the
    # search goes on to the first PDB-free one, good or bad (1/12 each).
    cands = {"v1": (1, 1), "v2": (1, 1), "good": (1, 0), "bad": (9, 0)}
    assert shares_of(cands, 2) == {"good": F(7, 12), "bad": F(5, 12)}


def test_no_candidate():
    assert outcome_shares([], [], 3).fractions() == []
    assert not outcome_shares([], [], 3).could_differ


# -- every order, enumerated --------------------------------------------------------------------
candidate_sets = st.lists(
    st.tuples(st.integers(1, 3), st.integers(0, 2), st.sampled_from([0, 0, 100])), min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(candidate_sets, st.integers(1, 7))
def test_shares_are_the_fraction_of_orders_that_nominate_each_candidate(spec, wanted):
    cands = [(f"n{i}", key(*c), c[1] == 0) for i, c in enumerate(spec)]
    shares = outcome_shares([c[1] for c in cands], [c[2] for c in cands], wanted)
    got = {c[0]: s for c, s in zip(cands, shares.fractions()) if s}
    assert got == enumerate_orders(cands, wanted)
    assert sum(got.values()) == 1
    # couldDiffer: more candidates than wanted and not exactly one PDB-free, or a full tie.
    k = len(cands)
    free = sum(c[2] for c in cands)
    best = max(c[1] for c in cands)
    full_tie = sum(1 for c in cands if c[1] == best) > 1
    assert shares.could_differ == ((k > wanted and free != 1) or (k <= wanted and full_tie))
    # Possible outcomes: at least wanted-1 others no better, or (PDB-free) enough violating ones first.
    for c in cands:
        no_better = sum(1 for o in cands if o is not c and o[1] <= c[1])
        if k <= wanted:
            possible = c[1] == best
        elif free and not c[2]:
            possible = False
        else:
            possible = no_better >= wanted - 1 or (c[2] and k - free >= wanted)
        assert (c[0] in got) == possible, c


def test_large_clusters_are_counted_exactly_and_quickly():
    # 5,000 candidates, 500 wanted (the default args' 10%): exact integers.
    keys = [key(1 + i % 7) for i in range(5000)]
    shares = outcome_shares(keys, [True] * 5000, 500)
    assert sum(shares.fractions()) == 1
    assert shares.outcomes == 5000  # every victim count has more than 499 candidates no better
    one = [s for k, s in zip(keys, shares.fractions()) if k == key(1)]
    assert len(set(one)) == 1 and one[0] * len(one) > F(999, 1000)
