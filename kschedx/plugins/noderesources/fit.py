"""NodeResourcesFit: the pod's requests must fit the node's free allocatable;
scores with LeastAllocated (the default strategy) on cpu and memory."""

from __future__ import annotations

from ...framework.interface import MAX_NODE_SCORE, Plugin
from ...framework.status import Code, Status
from ...resources import CPU, MEMORY, Resource, is_extended_resource_name, pod_requests
from .resource_allocation import DEFAULT_RESOURCES, pod_request_list, vectors

_PRE_FILTER_KEY = "PreFilterNodeResourcesFit"
_PRE_SCORE_KEY = "PreScoreNodeResourcesFit"


class InsufficientResource:
    __slots__ = ("resource", "reason", "requested", "used", "capacity", "unresolvable")

    def __init__(self, resource, reason, requested, used, capacity, unresolvable=False):
        self.resource = resource
        self.reason = reason
        self.requested = requested
        self.used = used
        self.capacity = capacity
        self.unresolvable = unresolvable

    def as_dict(self) -> dict:
        return {
            "resource": self.resource,
            "requested": self.requested,
            "used": self.used,
            "allocatable": self.capacity,
        }


def compute_pod_resource_request(pod_info) -> Resource:
    """computePodResourceRequest: PodRequests (pod-level resources and
    overhead included, no status), folded with SetMaxResource."""

    def compute(pi):
        r = Resource()
        r.set_max_milli_list(pod_requests(pi.pod, use_status=False))
        return r

    return pod_info.cached("FitRequest", compute)


def fits_request(req: Resource, node_info, ignored=frozenset(), ignored_groups=frozenset()) -> list[InsufficientResource]:
    out = []
    alloc = node_info.allocatable
    used = node_info.requested
    allowed = alloc.allowed_pod_number
    if len(node_info.pods) + 1 > allowed:
        out.append(InsufficientResource("pods", "Too many pods", 1, len(node_info.pods), allowed))
    if req.milli_cpu == 0 and req.memory == 0 and req.ephemeral_storage == 0 and not req.scalar:
        return out
    if req.milli_cpu > 0 and req.milli_cpu > alloc.milli_cpu - used.milli_cpu:
        out.append(InsufficientResource("cpu", "Insufficient cpu", req.milli_cpu, used.milli_cpu, alloc.milli_cpu,
                                        req.milli_cpu > alloc.milli_cpu))
    if req.memory > 0 and req.memory > alloc.memory - used.memory:
        out.append(InsufficientResource("memory", "Insufficient memory", req.memory, used.memory, alloc.memory,
                                        req.memory > alloc.memory))
    if req.ephemeral_storage > 0 and req.ephemeral_storage > alloc.ephemeral_storage - used.ephemeral_storage:
        out.append(InsufficientResource("ephemeral-storage", "Insufficient ephemeral-storage", req.ephemeral_storage,
                                        used.ephemeral_storage, alloc.ephemeral_storage,
                                        req.ephemeral_storage > alloc.ephemeral_storage))
    for name, q in req.scalar.items():
        if q == 0:
            continue
        if is_extended_resource_name(name):
            if name in ignored or name.split("/")[0] in ignored_groups:
                continue
        a = alloc.scalar.get(name, 0)
        u = used.scalar.get(name, 0)
        if q > a - u:
            out.append(InsufficientResource(name, f"Insufficient {name}", q, u, a, q > a))
    return out


class NodeResourcesFit(Plugin):
    name = "NodeResourcesFit"

    def __init__(self, handle, args=None):
        super().__init__(handle, args)
        self.ignored = frozenset(self.args.get("ignoredResources", ()))
        self.ignored_groups = frozenset(self.args.get("ignoredResourceGroups", ()))
        strategy = self.args.get("scoringStrategy") or {}
        self.resources = tuple((r["name"], r.get("weight", 1)) for r in strategy.get("resources", ())) or DEFAULT_RESOURCES

    def pre_filter(self, state, pod_info, nodes):
        state.write(_PRE_FILTER_KEY, compute_pod_resource_request(pod_info))
        return None, None

    def filter(self, state, pod_info, node_info):
        req = state.read(_PRE_FILTER_KEY) or compute_pod_resource_request(pod_info)
        return self._status(fits_request(req, node_info, self.ignored, self.ignored_groups))

    def filter_all(self, state, pod_info, nodes):
        req = state.read(_PRE_FILTER_KEY) or compute_pod_resource_request(pod_info)
        cpu, memory, storage = req.milli_cpu, req.memory, req.ephemeral_storage
        quick = not req.scalar
        out = None
        for i, ni in enumerate(nodes):
            # A quick test that fits_request finds nothing insufficient;
            # otherwise fits_request decides.
            alloc = ni.allocatable
            used = ni.requested
            if (quick and len(ni.pods) < alloc.allowed_pod_number
                    and cpu <= alloc.milli_cpu - used.milli_cpu
                    and memory <= alloc.memory - used.memory
                    and storage <= alloc.ephemeral_storage - used.ephemeral_storage):
                continue
            st = self._status(fits_request(req, ni, self.ignored, self.ignored_groups))
            if st is not None:
                if out is None:
                    out = [None] * len(nodes)
                out[i] = st
        return out

    @staticmethod
    def _status(insufficient: list[InsufficientResource]) -> Status | None:
        if not insufficient:
            return None
        code = Code.UNSCHEDULABLE
        if any(i.unresolvable for i in insufficient):
            code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        return Status(code, *[i.reason for i in insufficient],
                      details={"insufficient": [i.as_dict() for i in insufficient]})

    def pre_score(self, state, pod_info, nodes):
        state.write(_PRE_SCORE_KEY, pod_request_list(pod_info, self.resources, False))
        return None

    def score(self, state, pod_info, node_info) -> int:
        reqs = state.read(_PRE_SCORE_KEY) or pod_request_list(pod_info, self.resources, False)
        requested, allocatable = vectors(node_info, self.resources, reqs, False)
        return least_resource_scorer(self.resources, requested, allocatable)

    def score_all(self, state, pod_info, nodes) -> list[int]:
        reqs = state.read(_PRE_SCORE_KEY) or pod_request_list(pod_info, self.resources, False)
        if [name for name, _ in self.resources] != [CPU, MEMORY]:
            return [self.score(state, pod_info, ni) for ni in nodes]
        (_, cpu_weight), (_, mem_weight) = self.resources
        pod_cpu, pod_mem = reqs
        out = []
        for ni in nodes:
            # least_resource_scorer over vectors(), unrolled for cpu and memory.
            alloc = ni.allocatable
            used = ni.non_zero_requested
            score = weight_sum = 0
            if alloc.milli_cpu:
                score += least_requested_score(used.milli_cpu + pod_cpu, alloc.milli_cpu) * cpu_weight
                weight_sum += cpu_weight
            if alloc.memory:
                score += least_requested_score(used.memory + pod_mem, alloc.memory) * mem_weight
                weight_sum += mem_weight
            out.append(score // weight_sum if weight_sum else 0)
        return out

    def score_details(self, state, pod_info, node_info):
        reqs = state.read(_PRE_SCORE_KEY) or pod_request_list(pod_info, self.resources, False)
        requested, allocatable = vectors(node_info, self.resources, reqs, False)
        return {
            "requestedAfter": {name: req for (name, _), req, alloc in zip(self.resources, requested, allocatable) if alloc},
            "allocatable": {name: alloc for (name, _), alloc in zip(self.resources, allocatable) if alloc},
        }


def least_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return ((capacity - requested) * MAX_NODE_SCORE) // capacity


def least_resource_scorer(resources, requested, allocatable) -> int:
    node_score = 0
    weight_sum = 0
    for (name, weight), req, alloc in zip(resources, requested, allocatable):
        if alloc == 0:
            continue
        node_score += least_requested_score(req, alloc) * weight
        weight_sum += weight
    if weight_sum == 0:
        return 0
    return node_score // weight_sum


PLUGIN = NodeResourcesFit
