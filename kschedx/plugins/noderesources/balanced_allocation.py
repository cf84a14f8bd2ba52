"""NodeResourcesBalancedAllocation: prefer nodes whose cpu and memory use
stay balanced. Upstream computes this in float64; Python floats are the same
IEEE doubles, and the operations are done in the same order.

From 1.36 (features.balanced_allocation_scores_improvement) the score is
how much the pod improves the node's balance: with B the balance score
(1 - std) * 100 of v1.35, 50 + (50 + B(with the pod) - B(without it)) / 2,
in integers (kubernetes/kubernetes#135573). Until 1.35 it is B(with the pod).
"""

from __future__ import annotations

import math

from ...config import names
from ...framework.declaration import Declaration, reads
from ...framework.events import DEVICE_CLASS
from ...framework.interface import MAX_NODE_SCORE, Plugin, features_of
from ...framework.status import Code, Status
from ...api.resources import CPU, MEMORY, RequestOptions
from ...config.pluginargs import checked_plugin_args
from ...state.node_columns import columns_for
from .resource_allocation import dra_scoring, pod_request_list, shared_by_vectors, vectors

_KEY = "PreScoreNodeResourcesBalancedAllocation"


def balanced_resource_scorer(requested, allocatable) -> int:
    fractions = []
    total = 0.0
    for req, alloc in zip(requested, allocatable):
        if alloc == 0:
            continue
        fraction = float(req) / float(alloc)
        if fraction > 1:
            fraction = 1.0
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / float(len(fractions))
        s = 0.0
        for f in fractions:
            s = s + (f - mean) * (f - mean)
        std = math.sqrt(s / float(len(fractions)))
    return int((1 - std) * float(MAX_NODE_SCORE))


def improvement_score(with_pod: int, without_pod: int) -> int:
    """balancedResourceScorer of 1.36: both scores are in [50, 100], so the
    numerator is never negative (Go's division truncates, as // does here)."""
    half = MAX_NODE_SCORE // 2
    return half + (half + with_pod - without_pod) // 2


def _two_fraction_score(used_cpu: int, used_mem: int, alloc_cpu: int, alloc_mem: int, max_score: float) -> int:
    """balanced_resource_scorer over (cpu, memory) with both allocatable, unrolled."""
    cpu = float(used_cpu) / float(alloc_cpu)
    if cpu > 1:
        cpu = 1.0
    mem = float(used_mem) / float(alloc_mem)
    if mem > 1:
        mem = 1.0
    return int((1 - abs((cpu - mem) / 2)) * max_score)


def _column_scores(cols, rows, pod_cpu: int, pod_mem: int, improvement: bool) -> list[int]:
    """score_all's unrolled scorer over the columns' rows (all when None)."""
    max_score = float(MAX_NODE_SCORE)
    out = []
    for ac, am, uc, um in zip(*cols.take(rows, "alloc_cpu", "alloc_mem", "req_cpu", "req_mem")):
        if not (ac and am):
            # One fraction or none: the deviation is 0, with the pod and without.
            out.append(improvement_score(MAX_NODE_SCORE, MAX_NODE_SCORE) if improvement else MAX_NODE_SCORE)
            continue
        with_pod = _two_fraction_score(uc + pod_cpu, um + pod_mem, ac, am, max_score)
        if improvement:
            with_pod = improvement_score(with_pod, _two_fraction_score(uc, um, ac, am, max_score))
        out.append(with_pod)
    return out


class NodeResourcesBalancedAllocation(Plugin):
    name = names.NodeResourcesBalancedAllocation

    def __init__(self, handle, args=None):
        features = features_of(handle)
        args = checked_plugin_args(self.name, args, features)
        super().__init__(handle, args)
        self.resources = tuple((r["name"], r["weight"]) for r in args["resources"])
        self.improvement = features.balanced_allocation_scores_improvement
        # PodLevelResources, InPlacePodLevelResourcesVerticalScaling, the version's status rules.
        self.request_options = RequestOptions(features.enable_pod_level_resources,
                                              features.enable_in_place_pod_level_resources_vertical_scaling,
                                              features.pod_requests_aggregate_status)
        self.features = features
        self._dra = None

    def _dra_scoring(self):
        d = self._dra
        if d is None:
            d = self._dra = (dra_scoring(self.handle, self.features, self.resources),)
        return d[0]

    def pre_score(self, state, pod_info, nodes):
        reqs = pod_request_list(pod_info, self.resources, True, self.request_options)
        if not any(reqs):
            return Status(Code.SKIP)
        state.write(_KEY, reqs)
        return None

    def score(self, state, pod_info, node_info) -> int:
        reqs = state.read(_KEY)
        if reqs is None:
            reqs = pod_request_list(pod_info, self.resources, True, self.request_options)
            if not any(reqs):
                return 0
        requested, allocatable = vectors(node_info, self.resources, reqs, True, self._dra_scoring())
        with_pod = balanced_resource_scorer(requested, allocatable)
        if not self.improvement:
            return with_pod
        return improvement_score(with_pod, balanced_resource_scorer(_allocated(requested, allocatable, reqs),
                                                                     allocatable))

    def score_all(self, state, pod_info, nodes) -> list[int]:
        reqs = state.read(_KEY)
        if reqs is None or [name for name, _ in self.resources] != [CPU, MEMORY]:
            return [self.score(state, pod_info, ni) for ni in nodes]
        pod_cpu, pod_mem = reqs
        at = columns_for(self.handle, nodes)
        if at is not None:
            cols, rows = at
            improvement = self.improvement
            scores = cols.values((names.NodeResourcesBalancedAllocation, improvement, pod_cpu, pod_mem),
                                 lambda some: _column_scores(cols, some, pod_cpu, pod_mem, improvement))
            return [scores[r] for r in rows]
        max_score = float(MAX_NODE_SCORE)
        # One fraction or none: the deviation is 0, with the pod and without.
        flat = improvement_score(MAX_NODE_SCORE, MAX_NODE_SCORE) if self.improvement else MAX_NODE_SCORE
        out = []
        for ni in nodes:
            # balanced_resource_scorer over vectors(), unrolled for cpu and
            # memory (same float64 operations in the same order).
            alloc = ni.allocatable
            alloc_cpu = alloc.milli_cpu
            alloc_mem = alloc.memory
            if not (alloc_cpu and alloc_mem):
                out.append(flat)
                continue
            used = ni.requested
            with_pod = _two_fraction_score(used.milli_cpu + pod_cpu, used.memory + pod_mem, alloc_cpu, alloc_mem,
                                           max_score)
            if self.improvement:
                with_pod = improvement_score(with_pod, _two_fraction_score(used.milli_cpu, used.memory, alloc_cpu,
                                                                           alloc_mem, max_score))
            out.append(with_pod)
        return out

    def score_details(self, state, pod_info, node_info):
        reqs = state.read(_KEY) or pod_request_list(pod_info, self.resources, True, self.request_options)
        requested, allocatable = vectors(node_info, self.resources, reqs, True, self._dra_scoring())
        return self._details(requested, allocatable, reqs)

    def score_details_all(self, state, pod_info, nodes) -> list:
        # The explanation is the node's two vectors (and the pod's requests):
        # nodes of one size and use share one.
        reqs = state.read(_KEY) or pod_request_list(pod_info, self.resources, True, self.request_options)
        return shared_by_vectors(nodes, self.resources, reqs, True, self._dra_scoring(),
                                 lambda requested, allocatable: self._details(requested, allocatable, reqs),
                                 self.handle)

    def _details(self, requested, allocatable, reqs) -> dict:
        details = {
            "fractions": {
                name: f"{req}/{alloc}" for (name, _), req, alloc in zip(self.resources, requested, allocatable) if alloc
            }
        }
        if self.improvement:
            # 1.36 scores the change in balance: both balances, and the fractions without the pod.
            allocated = _allocated(requested, allocatable, reqs)
            details["fractionsWithoutPod"] = {
                name: f"{used}/{alloc}" for (name, _), used, alloc in zip(self.resources, allocated, allocatable) if alloc
            }
            details["balanceWithPod"] = balanced_resource_scorer(requested, allocatable)
            details["balanceWithoutPod"] = balanced_resource_scorer(allocated, allocatable)
        return details


def _allocated(requested, allocatable, pod_reqs) -> list[int]:
    """The node's use without the pod, where a resource is counted (vectors()
    adds the pod's request to it there, and leaves 0 elsewhere)."""
    return [req - pod if alloc else 0 for req, alloc, pod in zip(requested, allocatable, pod_reqs)]


DECLARATION = Declaration(
    name=names.NodeResourcesBalancedAllocation,
    factory=NodeResourcesBalancedAllocation,
    points=frozenset({"preScore", "score"}),
    reads=(reads(DEVICE_CLASS, pods=("extended",), gate="DRAExtendedResource"),),
    gates=frozenset({"DRAExtendedResource", "DRAConsumableCapacity", "InPlacePodLevelResourcesVerticalScaling",
                     "PodLevelResources"}),
    details="balance",
    node_local=True,
)
