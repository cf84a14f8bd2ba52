"""Pod and node resource arithmetic, as kube-scheduler computes it
(component-helpers resource.PodRequests of v1.35 to v1.37).

Resource lists are kept as {name: milli-units} integers. The API server
rounds every ResourceList quantity up to milli precision on admission
(SetDefaults_ResourceList), so milli-units are exact: sums are exact, and
MilliValue() / Value() of a sum are `m` and `ceil(m / 1000)`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from .quantity import parse_quantity

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

# kube-scheduler's defaults for containers that request nothing, used only
# for scoring spread (NonZeroRequested), never for fit.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


@lru_cache(maxsize=65536)
def milli(value) -> int:
    """A quantity as milli-units, rounded up to milli precision like the API server.

    Computed from the exact value rather than MilliValue(): past 2^63 milli
    (8 PiB of memory, which the API server stores capped at 2^63-1 bytes)
    MilliValue() wraps, while the scheduler reads memory through Value(),
    which does not. ceil(milli / 1000) of the exact amount is that Value().
    """
    exact = parse_quantity(value).as_fraction() * 1000
    return -((-exact.numerator) // exact.denominator)


def value_of(m: int) -> int:
    """Quantity.Value() of a milli amount: rounds up."""
    return -(-m // 1000)


def to_milli_list(rl) -> dict[str, int]:
    if not rl:
        return {}
    return {k: milli(v) for k, v in rl.items()}


def _is_qualified_name(name: str) -> bool:
    if "/" in name:
        prefix, _, base = name.rpartition("/")
        if not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix):
            return False
    else:
        base = name
    return 0 < len(base) <= 63 and bool(_QUALIFIED_NAME.match(base))


@lru_cache(maxsize=4096)
def is_native_resource(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


@lru_cache(maxsize=4096)
def is_extended_resource_name(name: str) -> bool:
    if is_native_resource(name) or name.startswith("requests."):
        return False
    return _is_qualified_name("requests." + name)


@lru_cache(maxsize=4096)
def is_scalar_resource_name(name: str) -> bool:
    return (
        is_extended_resource_name(name)
        or name.startswith("hugepages-")
        or "kubernetes.io/" in name
        or name.startswith("attachable-volumes-")
    )


@dataclass(slots=True)
class Resource:
    """framework.Resource: the scheduler's integer view of a resource list."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_milli_list(cls, rl: dict[str, int]) -> "Resource":
        r = cls()
        r.add_milli_list(rl)
        return r

    def add_milli_list(self, rl: dict[str, int]) -> None:
        for name, m in rl.items():
            if name == CPU:
                self.milli_cpu += m
            elif name == MEMORY:
                self.memory += value_of(m)
            elif name == PODS:
                self.allowed_pod_number += value_of(m)
            elif name == EPHEMERAL_STORAGE:
                self.ephemeral_storage += value_of(m)
            elif is_scalar_resource_name(name):
                self.scalar[name] = self.scalar.get(name, 0) + value_of(m)

    def set_max_milli_list(self, rl: dict[str, int]) -> None:
        for name, m in rl.items():
            if name == MEMORY:
                self.memory = max(self.memory, value_of(m))
            elif name == CPU:
                self.milli_cpu = max(self.milli_cpu, m)
            elif name == EPHEMERAL_STORAGE:
                self.ephemeral_storage = max(self.ephemeral_storage, value_of(m))
            elif is_scalar_resource_name(name):
                self.scalar[name] = max(self.scalar.get(name, 0), value_of(m))

    def clone(self) -> "Resource":
        return Resource(self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number, dict(self.scalar))

    def as_dict(self) -> dict[str, int]:
        out = {CPU: self.milli_cpu, MEMORY: self.memory}
        if self.ephemeral_storage:
            out[EPHEMERAL_STORAGE] = self.ephemeral_storage
        if self.allowed_pod_number:
            out[PODS] = self.allowed_pod_number
        out.update(self.scalar)
        return out


def _add(into: dict[str, int], rl: dict[str, int]) -> None:
    for k, v in rl.items():
        into[k] = into.get(k, 0) + v


def _max(into: dict[str, int], rl: dict[str, int]) -> None:
    for k, v in rl.items():
        if k not in into or v > into[k]:
            into[k] = v


def _apply_non_missing(reqs: dict[str, int], non_missing: dict[str, int]) -> dict[str, int]:
    out = dict(reqs)
    for k, v in non_missing.items():
        if k not in reqs:
            out[k] = v
    return out


def _resize_infeasible(pod: dict) -> bool:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "PodResizePending" and cond.get("reason") == "Infeasible":
            return True
    return False


def _effective_requests(pod: dict, spec_reqs: dict[str, int], status: dict) -> dict[str, int]:
    """determineEffectiveRequests: an in-place resize counts at its maximum."""
    actuated = to_milli_list((status.get("resources") or {}).get("requests"))
    allocated = to_milli_list(status.get("allocatedResources"))
    out: dict[str, int] = {}
    if not _resize_infeasible(pod):
        _max(out, spec_reqs)
    _max(out, actuated)
    _max(out, allocated)
    return out


def aggregate_container_requests(spec: dict, non_missing: dict[str, int] | None = None, pod: dict | None = None) -> dict[str, int]:
    """AggregateContainerRequests: containers summed, init containers (with
    restartable sidecars accumulated) taken as a maximum."""
    statuses = None
    if pod is not None:
        st = pod.get("status") or {}
        if st.get("containerStatuses") or st.get("initContainerStatuses"):
            statuses = {}
            for cs in st.get("containerStatuses") or []:
                statuses[cs.get("name")] = cs
            for cs in st.get("initContainerStatuses") or []:
                statuses[cs.get("name")] = cs

    reqs: dict[str, int] = {}
    for c in spec.get("containers") or []:
        creqs = to_milli_list((c.get("resources") or {}).get("requests"))
        if statuses:
            cs = statuses.get(c.get("name"))
            if cs is not None and cs.get("resources") is not None:
                creqs = _effective_requests(pod, creqs, cs)
        if non_missing:
            creqs = _apply_non_missing(creqs, non_missing)
        _add(reqs, creqs)

    restartable: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for c in spec.get("initContainers") or []:
        creqs = to_milli_list((c.get("resources") or {}).get("requests"))
        sidecar = c.get("restartPolicy") == "Always"
        if statuses and sidecar:
            cs = statuses.get(c.get("name"))
            if cs is not None and cs.get("resources") is not None:
                creqs = _effective_requests(pod, creqs, cs)
        if non_missing:
            creqs = _apply_non_missing(creqs, non_missing)
        if sidecar:
            _add(reqs, creqs)
            _add(restartable, creqs)
            use = dict(restartable)
        else:
            use = dict(creqs)
            _add(use, restartable)
        _max(init_max, use)
    _max(reqs, init_max)
    return reqs


@dataclass(frozen=True)
class RequestOptions:
    """What the scheduler's gates and version make of resourcehelper's
    PodResourcesOptions when it accounts a pod: `pod_level_resources`
    (PodLevelResources: without it spec.resources is ignored),
    `pod_level_status` (InPlacePodLevelResourcesVerticalScaling: a resized
    pod's pod-level status counts), `aggregated_status` (from 1.37: the
    largest of the spec, actuated and allocated requests each summed over
    the containers, not the per-container largest summed)."""

    pod_level_resources: bool = True
    pod_level_status: bool = False
    aggregated_status: bool = False


DEFAULT_OPTIONS = RequestOptions()


def _container_statuses(pod: dict) -> dict:
    """findContainerStatus: by name, containers first, then init containers."""
    st = pod.get("status") or {}
    out = {}
    for cs in st.get("initContainerStatuses") or []:
        out[cs.get("name")] = cs
    for cs in st.get("containerStatuses") or []:
        out[cs.get("name")] = cs
    return out


def _aggregate_by(spec: dict, per_container, non_missing: dict[str, int] | None) -> dict[str, int] | None:
    """aggregateContainerResourcesByFn: `per_container(c)` (None for "no
    list") summed over containers, init containers by the sidecar formula."""
    reqs: dict[str, int] = {}
    for c in spec.get("containers") or []:
        creqs = per_container(c) or {}
        if non_missing:
            creqs = _apply_non_missing(creqs, non_missing)
        _add(reqs, creqs)
    restartable: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for c in spec.get("initContainers") or []:
        creqs = per_container(c) or {}
        if non_missing:
            creqs = _apply_non_missing(creqs, non_missing)
        if c.get("restartPolicy") == "Always":
            _add(reqs, creqs)
            _add(restartable, creqs)
            use = dict(restartable)
        else:
            use = dict(creqs)
            _add(use, restartable)
        _max(init_max, use)
    _max(reqs, init_max)
    return reqs


def aggregated_status_requests(pod: dict, non_missing: dict[str, int] | None, pod_level_status: bool) -> dict:
    """AggregateContainerRequests with status resources, as v1.37 computes
    it: the largest of three aggregates, the spec's, the allocated
    (allocatedResources, else the spec) and the actuated (status requests,
    else allocatedResources, else the spec), every container and init
    container with a status counted; a resize found infeasible drops the
    spec. With pod-level status (both maps set) those stand for the
    allocated and actuated aggregates."""
    spec = pod["spec"]
    infeasible = _resize_infeasible(pod)
    statuses = _container_statuses(pod)

    def spec_of(c):
        return to_milli_list((c.get("resources") or {}).get("requests"))

    def allocated_of(c):
        cs = statuses.get(c.get("name"))
        if cs is not None and cs.get("allocatedResources") is not None:
            return to_milli_list(cs["allocatedResources"])
        return None if infeasible else spec_of(c)

    def actuated_of(c):
        cs = statuses.get(c.get("name"))
        if cs is not None:
            res = cs.get("resources")
            if res is not None and res.get("requests") is not None:
                return to_milli_list(res["requests"])
            if cs.get("allocatedResources") is not None:
                return to_milli_list(cs["allocatedResources"])
        return None if infeasible else spec_of(c)

    specs = _aggregate_by(spec, spec_of, non_missing)
    status = pod.get("status") or {}
    pod_res = status.get("resources")
    if pod_level_status and status.get("allocatedResources") is not None and pod_res is not None \
            and pod_res.get("requests") is not None:
        allocated = to_milli_list(status["allocatedResources"])
        actuated = to_milli_list(pod_res["requests"])
    else:
        allocated = _aggregate_by(spec, allocated_of, non_missing)
        actuated = _aggregate_by(spec, actuated_of, non_missing)
    out: dict[str, int] = {}
    if not infeasible:
        _max(out, specs)
    _max(out, actuated)
    _max(out, allocated)
    return out


def pod_level_requests_set(spec: dict) -> bool:
    res = spec.get("resources") or {}
    for name in res.get("requests") or {}:
        if name in (CPU, MEMORY) or name.startswith("hugepages-"):
            return True
    return False


def _supported_pod_level(name: str) -> bool:
    return name in (CPU, MEMORY) or name.startswith("hugepages-")


def pod_requests(pod: dict, non_missing: dict[str, int] | None = None, use_status: bool = True,
                 skip_pod_level: bool = False, pod_level_status: bool = False,
                 options: RequestOptions | None = None) -> dict[str, int]:
    """resourcehelper.PodRequests. `use_status`: a resized pod's status
    resources count (UseStatusResources); `skip_pod_level`: spec.resources is
    ignored; `options` (RequestOptions, or the PodLevelResources default and
    `pod_level_status` of before) says what the version and gates do."""
    if options is None:
        options = RequestOptions(True, pod_level_status, False)
    skip_pod_level = skip_pod_level or not options.pod_level_resources
    spec = pod["spec"]
    if use_status and options.aggregated_status:
        reqs = aggregated_status_requests(pod, non_missing, options.pod_level_status)
    else:
        reqs = aggregate_container_requests(spec, non_missing, pod if use_status else None)
    if not skip_pod_level and pod_level_requests_set(spec):
        requested = spec["resources"].get("requests") or {}
        status = pod.get("status") or {}
        with_status = options.pod_level_status and use_status and status.get("resources") is not None
        if options.aggregated_status:
            # applyPodLevelResources: every supported resource of the
            # effective list (spec, and with status the largest of spec,
            # actuated and allocated, the spec dropped when infeasible).
            effective = to_milli_list(requested)
            if with_status:
                effective = {} if _resize_infeasible(pod) else effective
                _max(effective, to_milli_list(status["resources"].get("requests")))
                _max(effective, to_milli_list(status.get("allocatedResources")))
            for name, m in effective.items():
                if _supported_pod_level(name):
                    reqs[name] = m
        else:
            effective = _effective_requests(pod, to_milli_list(requested), status) if with_status else None
            for name, v in requested.items():
                if _supported_pod_level(name):
                    reqs[name] = milli(v) if effective is None else effective.get(name, 0)
    overhead = spec.get("overhead")
    if overhead:
        _add(reqs, to_milli_list(overhead))
    return reqs


def defaults_apply(pod: dict, non_missing: dict[str, int]) -> bool:
    """Whether pod_requests(pod, non_missing=...) can differ from
    pod_requests(pod): some container lacks a defaulted resource, or the
    container statuses (in-place resizes) stand in for the spec's requests."""
    if not non_missing:
        return False
    status = pod.get("status") or {}
    for group in ("containerStatuses", "initContainerStatuses"):
        for cs in status.get(group) or ():
            # aggregate_container_requests reads them (and from 1.37 allocatedResources alone)
            if cs.get("resources") is not None or cs.get("allocatedResources") is not None:
                return True
    spec = pod["spec"]
    for group in ("containers", "initContainers"):
        for c in spec.get(group) or ():
            requests = (c.get("resources") or {}).get("requests") or {}
            for name in non_missing:
                if name not in requests:
                    return True
    return False


def non_missing_container_requests(pod: dict, requests: dict[str, int], pod_level_resources: bool = True) -> dict[str, int]:
    """getNonMissingContainerRequests: the 100m / 200Mi defaults a pod gets for
    scoring where neither containers nor the pod level ask for cpu / memory
    (pod-level requests count only with PodLevelResources)."""
    if not (pod_level_resources and pod_level_requests_set(pod["spec"])):
        return {CPU: DEFAULT_MILLI_CPU_REQUEST, MEMORY: DEFAULT_MEMORY_REQUEST * 1000}
    out = {}
    if CPU not in requests:
        out[CPU] = DEFAULT_MILLI_CPU_REQUEST
    if MEMORY not in requests:
        out[MEMORY] = DEFAULT_MEMORY_REQUEST * 1000
    return out


def _qos_amounts(resources: dict, key: str) -> dict[str, int]:
    """The positive cpu and memory amounts of a requests or limits list
    (a zero counts as unset for the QoS class)."""
    return {k: v for k, v in to_milli_list(resources.get(key)).items() if k in (CPU, MEMORY) and v > 0}


def _guaranteed(resources: dict) -> bool:
    """Limits of both cpu and memory, with the requests equal to them."""
    limits, requests = _qos_amounts(resources, "limits"), _qos_amounts(resources, "requests")
    return len(limits) == 2 and all(requests.get(name, v) == v for name, v in limits.items())


def qos_class(spec: dict) -> str:
    """The QoS class the API server gives an admitted pod (status.qosClass),
    from cpu and memory alone: BestEffort when nothing requests or limits
    them, Guaranteed when every container and init container (or, when set,
    the pod-level resources) limits both and requests what it limits,
    Burstable otherwise."""
    pod_level = spec.get("resources") or {}
    if _qos_amounts(pod_level, "requests") or _qos_amounts(pod_level, "limits"):
        groups = [pod_level]
    else:
        groups = [c.get("resources") or {} for field in ("initContainers", "containers")
                  for c in spec.get(field) or ()]
    if not any(_qos_amounts(res, "requests") or _qos_amounts(res, "limits") for res in groups):
        return "BestEffort"
    return "Guaranteed" if all(_guaranteed(res) for res in groups) else "Burstable"
