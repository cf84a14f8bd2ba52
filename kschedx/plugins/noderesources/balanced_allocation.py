"""NodeResourcesBalancedAllocation: prefer nodes whose cpu and memory use
stay balanced. Upstream computes this in float64; Python floats are the same
IEEE doubles, and the operations are done in the same order."""

from __future__ import annotations

import math

from ...framework.interface import MAX_NODE_SCORE, Plugin, features_of
from ...framework.status import Code, Status
from ...api.resources import CPU, MEMORY
from ...config.pluginargs import checked_plugin_args
from ...state.node_columns import columns_for
from .resource_allocation import pod_request_list, vectors

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


def _column_scores(cols, rows, pod_cpu: int, pod_mem: int) -> list[int]:
    """score_all's unrolled scorer over the columns' rows (all when None)."""
    max_score = float(MAX_NODE_SCORE)
    out = []
    for ac, am, uc, um in zip(*cols.take(rows, "alloc_cpu", "alloc_mem", "req_cpu", "req_mem")):
        std = 0.0
        if ac and am:
            cpu = float(uc + pod_cpu) / float(ac)
            if cpu > 1:
                cpu = 1.0
            mem = float(um + pod_mem) / float(am)
            if mem > 1:
                mem = 1.0
            std = abs((cpu - mem) / 2)
        out.append(int((1 - std) * max_score))
    return out


class NodeResourcesBalancedAllocation(Plugin):
    name = "NodeResourcesBalancedAllocation"

    def __init__(self, handle, args=None):
        args = checked_plugin_args(self.name, args, features_of(handle))
        super().__init__(handle, args)
        self.resources = tuple((r["name"], r["weight"]) for r in args["resources"])

    def pre_score(self, state, pod_info, nodes):
        reqs = pod_request_list(pod_info, self.resources, True)
        if not any(reqs):
            return Status(Code.SKIP)
        state.write(_KEY, reqs)
        return None

    def score(self, state, pod_info, node_info) -> int:
        reqs = state.read(_KEY)
        if reqs is None:
            reqs = pod_request_list(pod_info, self.resources, True)
            if not any(reqs):
                return 0
        requested, allocatable = vectors(node_info, self.resources, reqs, True)
        return balanced_resource_scorer(requested, allocatable)

    def score_all(self, state, pod_info, nodes) -> list[int]:
        reqs = state.read(_KEY)
        if reqs is None or [name for name, _ in self.resources] != [CPU, MEMORY]:
            return [self.score(state, pod_info, ni) for ni in nodes]
        pod_cpu, pod_mem = reqs
        at = columns_for(self.handle, nodes)
        if at is not None:
            cols, rows = at
            scores = cols.values(("NodeResourcesBalancedAllocation", pod_cpu, pod_mem),
                                 lambda some: _column_scores(cols, some, pod_cpu, pod_mem))
            return [scores[r] for r in rows]
        max_score = float(MAX_NODE_SCORE)
        out = []
        for ni in nodes:
            # balanced_resource_scorer over vectors(), unrolled for cpu and
            # memory (same float64 operations in the same order); with one
            # fraction or none the deviation is 0.
            alloc = ni.allocatable
            alloc_cpu = alloc.milli_cpu
            alloc_mem = alloc.memory
            std = 0.0
            if alloc_cpu and alloc_mem:
                used = ni.requested
                cpu = float(used.milli_cpu + pod_cpu) / float(alloc_cpu)
                if cpu > 1:
                    cpu = 1.0
                mem = float(used.memory + pod_mem) / float(alloc_mem)
                if mem > 1:
                    mem = 1.0
                std = abs((cpu - mem) / 2)
            out.append(int((1 - std) * max_score))
        return out

    def score_details(self, state, pod_info, node_info):
        reqs = state.read(_KEY) or pod_request_list(pod_info, self.resources, True)
        requested, allocatable = vectors(node_info, self.resources, reqs, True)
        return {
            "fractions": {
                name: f"{req}/{alloc}" for (name, _), req, alloc in zip(self.resources, requested, allocatable) if alloc
            }
        }


PLUGIN = NodeResourcesBalancedAllocation
