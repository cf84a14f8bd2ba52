"""Node sampling: how many feasible nodes kube-scheduler looks for before it
stops searching (percentageOfNodesToScore), where each search starts, and
what that means for the node it picks.

Follows schedule_one.go of v1.35: numFeasibleNodesToFind, the search of
findNodesThatPassFilters from `nextStartNodeIndex` over the nodes in
node-tree order, and the index carried to the next cycle. The search is
modelled as kube-scheduler runs it with one worker: nodes are checked one
after another from the start index, and the search stops when one more
feasible node than it needs has been found (that node is dropped; nodes
that failed before it were checked and count as processed).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from itertools import compress, repeat
from operator import ge, gt, lt, sub

from .node_tree import node_tree_order

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5

SAMPLING_MODES = ("all", "upstream")


def num_feasible_nodes_to_find(profile_percentage: int | None, global_percentage: int | None,
                               num_all_nodes: int) -> int:
    """numFeasibleNodesToFind: every node below 100 nodes; otherwise the
    profile's percentage, else the global one, 0 meaning the adaptive
    50% - nodes/125 (at least 5%); never fewer than 100 nodes."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    percentage = profile_percentage if profile_percentage is not None else (global_percentage or 0)
    if percentage == 0:
        percentage = 50 - num_all_nodes // 125
        if percentage < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            percentage = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    num_nodes = num_all_nodes * percentage // 100
    if num_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return MIN_FEASIBLE_NODES_TO_FIND
    return num_nodes


@dataclass
class Search:
    """One findNodesThatPassFilters walk."""

    found: list  # the feasible nodes kept, in the order they were found
    failed: list  # names of the nodes checked and rejected, in that order
    processed: int  # what the next start index advances by (see walk)


def walk(nodes: list, is_feasible, start: int, num_to_find: int) -> Search:
    """Check `nodes` from index `start % len(nodes)` on, wrapping around,
    until `num_to_find` + 1 feasible nodes are found or every node was
    checked. `is_feasible(node)` gives the Filter outcome."""
    n = len(nodes)
    found: list = []
    failed: list = []
    if n == 0:
        return Search(found, failed, 0)
    start %= n
    for i in range(n):
        ni = nodes[(start + i) % n]
        if is_feasible(ni):
            if len(found) == num_to_find:
                break
            found.append(ni)
        else:
            failed.append(ni.name)
    return Search(found, failed, len(found) + len(failed))


def best_of_some_window(totals: list[int], k: int) -> list[int]:
    """The indexes i of `totals` (scores of feasible nodes in node-tree
    order, read as a circle) such that totals[i] is the highest of some k
    consecutive entries: the nodes a search finding k feasible nodes could
    pick, whatever its start.

    i qualifies when the run of entries not above totals[i] around it is at
    least k long. Scores are taken from the highest down, the positions of
    higher scores cutting the circle into runs; once every run is shorter
    than k no lower score can qualify, which on real clusters (a few score
    levels at the top) ends the walk early."""
    f = len(totals)
    if f == 0:
        return []
    if k >= f:
        best = max(totals)
        return [i for i, t in enumerate(totals) if t == best]
    cuts: list[int] = []  # positions of higher scores, sorted
    picks: list[int] = []
    for level in _levels(totals):
        if not cuts:
            picks.extend(level)
        else:
            # The runs between consecutive cuts (the last one wrapping
            # around) at least k long: the level's positions in them qualify.
            ends = cuts[1:]
            ends.append(cuts[0] + f)
            gaps = list(map(sub, ends, cuts))
            for g in compress(range(len(gaps)), map(gt, gaps, repeat(k))):
                lo, hi = cuts[g], ends[g]
                if hi < f:
                    picks.extend(level[bisect_right(level, lo):bisect_left(level, hi)])
                else:  # wraps around: after the last cut, or before the first
                    picks.extend(level[bisect_right(level, lo):])
                    picks.extend(level[:bisect_left(level, hi - f)])
        cuts = sorted(cuts + level)
        ends = cuts[1:]
        ends.append(cuts[0] + f)
        if max(map(sub, ends, cuts)) <= k:
            break  # every run shorter than k: no lower score can win a window
    picks.sort()
    return picks


# How many of the highest scores are taken by the first scan (see _levels).
SCANNED_LEVELS = 4


def _levels(totals: list[int]):
    """The positions of each score, highest score first, each level's
    positions in increasing order. best_of_some_window usually needs only
    the top few levels: their positions are picked out by one scan of the
    list and sorted, much fewer than all; the rest, if it gets there, are
    sorted after."""
    f = len(totals)
    distinct = sorted(set(totals), reverse=True)
    below = distinct[min(SCANNED_LEVELS, len(distinct)) - 1]
    key = totals.__getitem__
    # A stable sort of increasing positions keeps each level's in order.
    yield from _split(totals, sorted(compress(range(f), map(ge, totals, repeat(below))), key=key, reverse=True))
    if len(distinct) > SCANNED_LEVELS:
        yield from _split(totals, sorted(compress(range(f), map(lt, totals, repeat(below))), key=key, reverse=True))


def _split(totals: list[int], by_score: list[int]):
    """Positions sorted by score into runs of one score each."""
    i = 0
    n = len(by_score)
    while i < n:
        score = totals[by_score[i]]
        j = i + 1
        while j < n and totals[by_score[j]] == score:
            j += 1
        yield by_score[i:j]
        i = j


class SamplingState:
    """The scheduler's side of sampling, shared by every profile as
    kube-scheduler's Scheduler holds it: the mode, the global
    percentageOfNodesToScore, the next start index and the node-tree order
    of the snapshot (computed once, when a search first needs it)."""

    def __init__(self, mode: str = "all", global_percentage: int | None = 0, *, has_extender_filters: bool = False,
                 has_extender_prioritizers: bool = False):
        self.mode = mode
        self.global_percentage = global_percentage
        self.next_start_node_index = 0
        self.has_extender_filters = has_extender_filters
        self.has_extender_prioritizers = has_extender_prioritizers
        self._order = None
        self._names: list[str] = []
        self._order_of = None

    def order(self, snapshot) -> list:
        """The snapshot's NodeInfos in node-tree order, nodes added in the
        order the cluster was read, then those added to the snapshot since
        (a node template's, an add-node fix's: each joins its zone last).
        Computed again when nodes come, go or change zone (node_version)."""
        key = (snapshot, snapshot.node_version, len(snapshot.node_infos))
        if self._order_of is None or self._order_of[0] is not snapshot or self._order_of[1:] != key[1:]:
            self._order = node_tree_order(snapshot.cluster.nodes, snapshot.by_name, snapshot.node_infos)
            self._names = [ni.name for ni in self._order]
            self._order_of = key
        return self._order

    def order_names(self, snapshot) -> list[str]:
        self.order(snapshot)
        return self._names

    def num_to_find(self, profile, num_nodes: int) -> int:
        """For a profile (its percentage and whether anything scores): with
        no Score plugin, no scoring extender and no filtering extender,
        kube-scheduler needs one feasible node only."""
        k = num_feasible_nodes_to_find(profile.plan.percentage_of_nodes_to_score, self.global_percentage, num_nodes)
        if not self.has_extender_filters and not profile.score and not self.has_extender_prioritizers:
            k = 1
        return k

    def advance(self, processed: int, num_all_nodes: int) -> None:
        if num_all_nodes:
            self.next_start_node_index = (self.next_start_node_index + processed) % num_all_nodes
