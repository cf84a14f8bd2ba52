"""resourceAllocationScorer: the per-resource requested/allocatable vectors
both resource scoring plugins build, with upstream's integer rules."""

from __future__ import annotations

from ...api.resources import (CPU, EPHEMERAL_STORAGE, MEMORY, RequestOptions, is_scalar_resource_name, pod_requests,
                              value_of)
from ...state.node_columns import columns_for

DEFAULT_NON_MISSING = {CPU: 100, MEMORY: 200 * 1024 * 1024 * 1000}


def pod_request_list(pod_info, resources, use_requested: bool, options: RequestOptions | None = None) -> list[int]:
    """calculatePodResourceRequestList: with the 100m/200Mi defaults unless
    the scorer works on Requested (BalancedAllocation).

    Upstream's NodeResourcesFit builds its scorer without the feature flags
    (NewFit copies only strategy and resources), so LeastAllocated ignores
    pod-level resources and status resources while BalancedAllocation
    honours them. Reproduced on purpose: the scores differ on such pods.
    `options`: BalancedAllocation's PodLevelResources,
    InPlacePodLevelResourcesVerticalScaling and the version's way with status
    resources (RequestOptions).
    """
    fit_scorer = not use_requested
    options = RequestOptions(False) if fit_scorer or options is None else options
    key = ("PodRequestList", use_requested, tuple(resources), options)

    def compute(pi):
        reqs = pod_requests(pi.pod, non_missing=None if use_requested else DEFAULT_NON_MISSING,
                            use_status=not fit_scorer, options=options)
        out = []
        for name, _ in resources:
            m = reqs.get(name, 0)
            out.append(m if name == CPU else value_of(m))
        return out

    return pod_info.cached(key, compute)


def allocatable_and_requested(node_info, resource: str, pod_request: int, use_requested: bool, dra=None):
    """(allocatable, requested with the pod) of one resource. `dra`: with
    DRAExtendedResource, when a scored resource maps to a DeviceClass, a
    function (node_info, resource) -> (devices, allocated devices) standing
    in for a scalar resource the node itself does not offer."""
    requested = node_info.requested if use_requested else node_info.non_zero_requested
    if pod_request == 0 and is_scalar_resource_name(resource):
        return 0, 0
    if resource == CPU:
        return node_info.allocatable.milli_cpu, requested.milli_cpu + pod_request
    if resource == MEMORY:
        return node_info.allocatable.memory, requested.memory + pod_request
    if resource == EPHEMERAL_STORAGE:
        return node_info.allocatable.ephemeral_storage, node_info.requested.ephemeral_storage + pod_request
    scalar = node_info.allocatable.scalar.get(resource)
    if not scalar and dra is not None:
        capacity, allocated = dra(node_info, resource)
        if capacity > 0:
            return capacity, allocated + pod_request
    if scalar is not None:
        return scalar, node_info.requested.scalar.get(resource, 0) + pod_request
    return 0, 0


def vectors(node_info, resources, pod_reqs, use_requested: bool, dra=None):
    requested = [0] * len(resources)
    allocatable = [0] * len(resources)
    used = node_info.requested if use_requested else node_info.non_zero_requested
    for i, (name, _) in enumerate(resources):
        # cpu and memory (the default resources) inline, as
        # allocatable_and_requested gives them.
        if name == CPU:
            alloc, req = node_info.allocatable.milli_cpu, used.milli_cpu + pod_reqs[i]
        elif name == MEMORY:
            alloc, req = node_info.allocatable.memory, used.memory + pod_reqs[i]
        else:
            alloc, req = allocatable_and_requested(node_info, name, pod_reqs[i], use_requested, dra)
        if alloc == 0:
            continue
        allocatable[i] = alloc
        requested[i] = req
    return requested, allocatable


def shared_by_vectors(nodes, resources, pod_reqs, use_requested: bool, dra, explain, handle=None) -> list:
    """[explain(*vectors(ni, ...)) for ni in nodes], one explanation object
    per distinct pair of vectors, shared by the nodes that have it: an
    explanation that is a function of the vectors alone (read-only). With
    the default resources the snapshot's node columns tell which nodes are
    alike, without the vectors of each."""
    out = []
    seen: dict = {}
    if dra is None and handle is not None and len(resources) == 2 \
            and resources[0][0] == CPU and resources[1][0] == MEMORY:
        at = columns_for(handle, nodes)
        if at is not None:
            cols, rows = at
            used = ("req_cpu", "req_mem") if use_requested else ("nz_cpu", "nz_mem")
            for ni, key in zip(nodes, zip(*cols.take(rows, *used, "alloc_cpu", "alloc_mem"))):
                d = seen.get(key)
                if d is None:
                    d = seen[key] = explain(*vectors(ni, resources, pod_reqs, use_requested, dra))
                out.append(d)
            return out
    for ni in nodes:
        requested, allocatable = vectors(ni, resources, pod_reqs, use_requested, dra)
        key = (*requested, None, *allocatable)
        d = seen.get(key)
        if d is None:
            d = seen[key] = explain(requested, allocatable)
        out.append(d)
    return out


def dra_scoring(handle, features, resources):
    """The `dra` argument of vectors() for a scorer over `resources`
    (getDRAPreScoredParams): None unless DRAExtendedResource is on and one
    of the resources maps to a DeviceClass; the scorers then count, for a
    resource the node itself does not offer, the devices of its class that
    the node reaches and how many of them are allocated."""
    snapshot = getattr(handle, "snapshot", None)
    if not features.enable_dra_extended_resource or snapshot is None:
        return None
    from ..dynamicresources.extended import any_backed_by_dra, dra_resource_totals

    if not any_backed_by_dra(snapshot.cluster, [name for name, _ in resources]):
        return None
    consumable = features.enable_dra_consumable_capacity

    def totals(node_info, resource):
        return dra_resource_totals(snapshot, node_info, resource, consumable)

    return totals
