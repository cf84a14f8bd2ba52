"""NodeResourcesFit: the pod's requests must fit the node's free allocatable;
scores with the configured strategy (LeastAllocated by default, MostAllocated
or RequestedToCapacityRatio) over the configured resources and weights."""

from __future__ import annotations

from itertools import compress

from ...config import names
from ...framework.declaration import Declaration, reads
from ...framework.events import ActionType as A, DEVICE_CLASS, NODE, POD, Register
from ...framework.interface import MAX_NODE_SCORE, Plugin, features_of
from ...framework.status import Code, Status
from ...config.pluginargs import MAX_CUSTOM_PRIORITY_SCORE, default_plugin_args, fit_init_error
from ...api.resources import CPU, MEMORY, Resource, is_extended_resource_name, pod_requests
from ...state.node_columns import columns_for
from ..helper.shape_score import broken_linear_function
from .resource_allocation import dra_scoring, pod_request_list, shared_by_vectors, vectors

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


def compute_pod_resource_request(pod_info, pod_level_resources: bool = True) -> Resource:
    """computePodResourceRequest: PodRequests (pod-level resources with
    PodLevelResources, overhead included, no status), folded with
    SetMaxResource."""

    def compute(pi):
        r = Resource()
        r.set_max_milli_list(pod_requests(pi.pod, use_status=False, skip_pod_level=not pod_level_resources))
        return r

    return pod_info.cached(("FitRequest", pod_level_resources), compute)


def _missing_pre_filter_state() -> Status:
    """Filter without the request PreFilter computes: only a configuration
    that disables this plugin's PreFilter but not its Filter gets here, and
    kube-scheduler fails the cycle with an Error rather than recompute it
    (a PreFilter that ran always writes the state; Score, unlike Filter,
    falls back to computing the request)."""
    return Status.as_error(f'error reading "{_PRE_FILTER_KEY}" from cycleState: not found')


def fits_request(req: Resource, node_info, ignored=frozenset(), ignored_groups=frozenset(),
                 delegate=None) -> list[InsufficientResource]:
    """fitsRequest. `delegate(name, node_info)`: with DRAExtendedResource,
    whether a scalar resource is left to DynamicResources on this node
    (shouldDelegateResourceToDRA: the node does not offer it and a
    DeviceClass backs it)."""
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
        if delegate is not None and delegate(name, node_info):
            continue
        a = alloc.scalar.get(name, 0)
        u = used.scalar.get(name, 0)
        if q > a - u:
            out.append(InsufficientResource(name, f"Insufficient {name}", q, u, a, q > a))
    return out


class NodeResourcesFit(Plugin):
    name = names.NodeResourcesFit

    def __init__(self, handle, args=None):
        features = features_of(handle)
        args = default_plugin_args(self.name, args, features)
        err = fit_init_error(args, features)
        if err is not None:
            raise ValueError(f'initializing plugin "{self.name}": {err}')
        super().__init__(handle, args)
        self.ignored = frozenset(args.get("ignoredResources") or ())
        self.ignored_groups = frozenset(args.get("ignoredResourceGroups") or ())
        strategy = args["scoringStrategy"]
        self.strategy = strategy["type"]
        self.resources = tuple((r["name"], r["weight"]) for r in strategy["resources"])
        self.shape = None
        if self.strategy == "RequestedToCapacityRatio":
            self.shape = tuple((p.get("utilization", 0), p.get("score", 0))
                               for p in strategy["requestedToCapacityRatio"]["shape"])
        self.scorer = build_scorer(self.strategy, self.resources, self.shape)
        self._rtcr_table = None
        self.features = features
        self.pod_level_resources = features.enable_pod_level_resources
        self._dra = None
        self._delegate = None

    def _dra_delegate(self):
        """shouldDelegateResourceToDRA as a function, None without DRAExtendedResource."""
        cluster = getattr(self.handle, "cluster", None)
        if not self.features.enable_dra_extended_resource or cluster is None:
            return None
        d = self._delegate
        if d is None:
            from ..dynamicresources.extended import delegated_to_dra

            def d(name, ni):
                return delegated_to_dra(cluster, name, ni.allocatable.scalar.get(name))

            self._delegate = d
        return d

    def _dra_scoring(self):
        d = self._dra
        if d is None:
            d = self._dra = (dra_scoring(self.handle, self.features, self.resources),)
        return d[0]

    def pre_filter(self, state, pod_info, nodes):
        state.write(_PRE_FILTER_KEY, compute_pod_resource_request(pod_info, self.pod_level_resources))
        return None, None

    def filter(self, state, pod_info, node_info):
        req = state.read(_PRE_FILTER_KEY)
        if req is None:
            return _missing_pre_filter_state()
        return self._status(fits_request(req, node_info, self.ignored, self.ignored_groups, self._dra_delegate()))

    def filter_all(self, state, pod_info, nodes):
        req = state.read(_PRE_FILTER_KEY)
        if req is None:
            return [_missing_pre_filter_state() for _ in nodes]
        cpu, memory, storage = req.milli_cpu, req.memory, req.ephemeral_storage
        quick = not req.scalar
        delegate = None if quick else self._dra_delegate()
        at = columns_for(self.handle, nodes) if quick else None
        if at is not None:
            cols, rows = at
            doubtful = cols.values(("NodeResourcesFit/doubtful", cpu, memory, storage),
                                   lambda some: _doubtful(cols, some, cpu, memory, storage))
            out = None
            for i in compress(range(len(rows)), map(doubtful.__getitem__, rows)):
                st = self._status(fits_request(req, nodes[i], self.ignored, self.ignored_groups))
                if st is not None:
                    if out is None:
                        out = [None] * len(nodes)
                    out[i] = st
            return out
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
            st = self._status(fits_request(req, ni, self.ignored, self.ignored_groups, delegate))
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
        requested, allocatable = vectors(node_info, self.resources, reqs, False, self._dra_scoring())
        return self.scorer(requested, allocatable)

    def score_all(self, state, pod_info, nodes) -> list[int]:
        reqs = state.read(_PRE_SCORE_KEY) or pod_request_list(pod_info, self.resources, False)
        if [name for name, _ in self.resources] != [CPU, MEMORY]:
            return [self.score(state, pod_info, ni) for ni in nodes]
        pod_cpu, pod_mem = reqs
        at = columns_for(self.handle, nodes)
        if at is not None:
            cols, rows = at
            key = ("NodeResourcesFit/score", self.strategy, self.resources, self.shape, pod_cpu, pod_mem)
            scores = cols.values(key, lambda some: self._column_scores(cols, some, pod_cpu, pod_mem))
            return [scores[r] for r in rows]
        if self.strategy == "RequestedToCapacityRatio":
            return self._rtcr_score_all(reqs, nodes)
        (_, cpu_weight), (_, mem_weight) = self.resources
        if self.strategy == "MostAllocated":
            out = []
            for ni in nodes:
                # most_resource_scorer over vectors(), unrolled for cpu and memory.
                alloc = ni.allocatable
                used = ni.non_zero_requested
                score = weight_sum = 0
                a = alloc.milli_cpu
                if a:
                    r = used.milli_cpu + pod_cpu
                    score += (a if r > a else r) * MAX_NODE_SCORE // a * cpu_weight
                    weight_sum += cpu_weight
                a = alloc.memory
                if a:
                    r = used.memory + pod_mem
                    score += (a if r > a else r) * MAX_NODE_SCORE // a * mem_weight
                    weight_sum += mem_weight
                out.append(score // weight_sum if weight_sum else 0)
            return out
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

    def _column_scores(self, cols, rows, pod_cpu: int, pod_mem: int) -> list[int]:
        """The unrolled scorers below over the columns' rows (all when None)."""
        alloc_cpu, alloc_mem, used_cpu, used_mem = cols.take(rows, "alloc_cpu", "alloc_mem", "nz_cpu", "nz_mem")
        (_, cpu_weight), (_, mem_weight) = self.resources
        out = []
        if self.strategy == "LeastAllocated":
            both = cpu_weight + mem_weight
            for ac, am, uc, um in zip(alloc_cpu, alloc_mem, used_cpu, used_mem):
                if ac and am:
                    rc = uc + pod_cpu
                    rm = um + pod_mem
                    out.append(((0 if rc > ac else (ac - rc) * MAX_NODE_SCORE // ac) * cpu_weight
                                + (0 if rm > am else (am - rm) * MAX_NODE_SCORE // am) * mem_weight) // both)
                    continue
                score = weight_sum = 0
                if ac:
                    score += least_requested_score(uc + pod_cpu, ac) * cpu_weight
                    weight_sum += cpu_weight
                if am:
                    score += least_requested_score(um + pod_mem, am) * mem_weight
                    weight_sum += mem_weight
                out.append(score // weight_sum if weight_sum else 0)
            return out
        if self.strategy == "MostAllocated":
            for ac, am, uc, um in zip(alloc_cpu, alloc_mem, used_cpu, used_mem):
                score = weight_sum = 0
                if ac:
                    r = uc + pod_cpu
                    score += (ac if r > ac else r) * MAX_NODE_SCORE // ac * cpu_weight
                    weight_sum += cpu_weight
                if am:
                    r = um + pod_mem
                    score += (am if r > am else r) * MAX_NODE_SCORE // am * mem_weight
                    weight_sum += mem_weight
                out.append(score // weight_sum if weight_sum else 0)
            return out
        table = self._rtcr_lookup()
        full = table[_MAX_UTILIZATION]
        for ac, am, uc, um in zip(alloc_cpu, alloc_mem, used_cpu, used_mem):
            score = weight_sum = 0
            if ac:
                r = uc + pod_cpu
                sc = full if r > ac else table[r * _MAX_UTILIZATION // ac]
                if sc > 0:
                    score += sc * cpu_weight
                    weight_sum += cpu_weight
            if am:
                r = um + pod_mem
                sc = full if r > am else table[r * _MAX_UTILIZATION // am]
                if sc > 0:
                    score += sc * mem_weight
                    weight_sum += mem_weight
            out.append(_round_half_away(score, weight_sum) if weight_sum else 0)
        return out

    def _rtcr_lookup(self) -> list[int]:
        table = self._rtcr_table
        if table is None:
            raw = broken_linear_function([(u, sc * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE))
                                          for u, sc in self.shape])
            table = self._rtcr_table = [raw(p) for p in range(_MAX_UTILIZATION + 1)]
        return table

    def _rtcr_score_all(self, reqs, nodes) -> list[int]:
        """requested_to_capacity_ratio_scorer over cpu and memory, unrolled,
        with the shape looked up per whole percent (utilization is an
        integer 0-100 once over-capacity maps to 100)."""
        table = self._rtcr_lookup()
        full = table[_MAX_UTILIZATION]
        (_, cpu_weight), (_, mem_weight) = self.resources
        pod_cpu, pod_mem = reqs
        out = []
        for ni in nodes:
            alloc = ni.allocatable
            used = ni.non_zero_requested
            score = weight_sum = 0
            a = alloc.milli_cpu
            if a:
                r = used.milli_cpu + pod_cpu
                s = full if r > a else table[r * _MAX_UTILIZATION // a]
                if s > 0:
                    score += s * cpu_weight
                    weight_sum += cpu_weight
            a = alloc.memory
            if a:
                r = used.memory + pod_mem
                s = full if r > a else table[r * _MAX_UTILIZATION // a]
                if s > 0:
                    score += s * mem_weight
                    weight_sum += mem_weight
            out.append(_round_half_away(score, weight_sum) if weight_sum else 0)
        return out

    def score_details(self, state, pod_info, node_info):
        reqs = state.read(_PRE_SCORE_KEY) or pod_request_list(pod_info, self.resources, False)
        requested, allocatable = vectors(node_info, self.resources, reqs, False, self._dra_scoring())
        return self._details(requested, allocatable)

    def score_details_all(self, state, pod_info, nodes) -> list:
        # The explanation is the node's two vectors: nodes of one size and
        # use (most, in a cluster of a few machine types) share one.
        reqs = state.read(_PRE_SCORE_KEY) or pod_request_list(pod_info, self.resources, False)
        return shared_by_vectors(nodes, self.resources, reqs, False, self._dra_scoring(), self._details,
                                 self.handle)

    def _details(self, requested, allocatable) -> dict:
        details = {
            "strategy": self.strategy,
            "weights": {name: weight for name, weight in self.resources},
            "requestedAfter": {name: req for (name, _), req, alloc in zip(self.resources, requested, allocatable) if alloc},
            "allocatable": {name: alloc for (name, _), alloc in zip(self.resources, allocatable) if alloc},
        }
        if self.shape is not None:
            details["shape"] = [{"utilization": u, "score": sc} for u, sc in self.shape]
        return details


def _doubtful(cols, rows, cpu: int, memory: int, storage: int) -> list[bool]:
    """filter_all's quick test over the columns' rows (all when None): True
    where it cannot tell that fits_request finds nothing insufficient."""
    cols_ = cols.take(rows, "num_pods", "allowed_pods", "alloc_cpu", "req_cpu", "alloc_mem", "req_mem", "alloc_eph",
                      "req_eph")
    return [not (n < allowed and cpu <= ac - rc and memory <= am - rm and storage <= ae - re)
            for n, allowed, ac, rc, am, rm, ae, re in zip(*cols_)]


def build_scorer(strategy: str, resources, shape=None):
    """The strategy's scorer over (requested, allocatable) vectors
    (nodeResourceStrategyTypeMap)."""
    if strategy == "LeastAllocated":
        return lambda requested, allocatable: least_resource_scorer(resources, requested, allocatable)
    if strategy == "MostAllocated":
        return lambda requested, allocatable: most_resource_scorer(resources, requested, allocatable)
    if strategy == "RequestedToCapacityRatio":
        return requested_to_capacity_ratio_scorer(resources, shape)
    raise ValueError(f"scoring strategy {strategy} is not supported")


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


def most_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    if requested > capacity:
        # A node may be overcommitted by pods without requests (non-zero defaults).
        requested = capacity
    return (requested * MAX_NODE_SCORE) // capacity


def most_resource_scorer(resources, requested, allocatable) -> int:
    node_score = 0
    weight_sum = 0
    for (name, weight), req, alloc in zip(resources, requested, allocatable):
        if alloc == 0:
            continue
        node_score += most_requested_score(req, alloc) * weight
        weight_sum += weight
    if weight_sum == 0:
        return 0
    return node_score // weight_sum


_MAX_UTILIZATION = 100


def requested_to_capacity_ratio_scorer(resources, shape):
    """requestedToCapacityRatioScorer: shape scores scaled to MaxNodeScore, a
    resource scoring 0 left out of the weights, the mean rounded half away
    from zero (math.Round)."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    raw = broken_linear_function([(u, score * scale) for u, score in shape])

    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(_MAX_UTILIZATION)
        return raw(requested * _MAX_UTILIZATION // capacity)

    def scorer(requested, allocatable) -> int:
        node_score = 0
        weight_sum = 0
        for (name, weight), req, alloc in zip(resources, requested, allocatable):
            if alloc == 0:
                continue
            score = resource_score(req, alloc)
            if score > 0:
                node_score += score * weight
                weight_sum += weight
        if weight_sum == 0:
            return 0
        return _round_half_away(node_score, weight_sum)

    return scorer


def _round_half_away(num: int, den: int) -> int:
    """int64(math.Round(float64(num) / float64(den))) for non-negative
    operands, computed as Go does in float64."""
    x = float(num) / float(den)
    t = float(int(x))
    if x - t >= 0.5:
        t += 1.0
    return int(t)


DECLARATION = Declaration(
    name=names.NodeResourcesFit,
    factory=NodeResourcesFit,
    points=frozenset({"preFilter", "filter", "preScore", "score"}),
    # 1.36 scores pod groups' placements too (never run by kschedx).
    points_from=(("1.36", frozenset({"placementScore"})),),
    # DeviceClasses back extended resources (DRAExtendedResource).
    reads=(reads(DEVICE_CLASS, pods=("extended",), gate="DRAExtendedResource"),),
    events=(Register(POD, A.Delete),
            Register(POD, A.UpdatePodScaleDown, gate="InPlacePodVerticalScaling"),
            Register(NODE, A.Add | A.UpdateNodeAllocatable),
            Register(DEVICE_CLASS, A.Add | A.Update, gate="DRAExtendedResource")),
    gates=frozenset({"DRAExtendedResource", "DRAConsumableCapacity", "InPlacePodVerticalScaling",
                     "PodLevelResources"}),
    details="resources",
    node_local=True,
)
