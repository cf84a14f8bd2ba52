"""The scheduler's view of pods and nodes (upstream's framework/types.go):
PodInfo (a pod with what plugins derive from it, computed once), NodeInfo
(a node and the aggregates of the pods on it: Requested, NonZeroRequested,
used host ports, PVC reference counts, pods with affinity, image states,
kept up to date by add_pod / remove_pod), and their parts; the label
signatures pods share.
"""

from __future__ import annotations

import itertools
from bisect import insort
from collections import Counter
from datetime import datetime, timezone
from operator import attrgetter

from ..api.resources import (
    CPU,
    DEFAULT_OPTIONS,
    MEMORY,
    RequestOptions,
    Resource,
    defaults_apply,
    non_missing_container_requests,
    pod_requests,
    to_milli_list,
    value_of,
)
from ..sources.spec_share import claims_key, status_facts_key

DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"

_generation = itertools.count(1)


def generation_mark() -> int:
    """A generation no node has yet: a node changed after this call has a
    higher one, an unchanged node (or a copy of one) a lower one."""
    return next(_generation)


_UNPARSED = object()
_SIGNATURE = attrgetter("signature")
_KEY = attrgetter("key")


def parse_time(value) -> datetime | None:
    if not value:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    text = str(value)
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


# Label signatures: pods with the same namespace, labels and terminating
# state share a small integer, so that a cycle evaluates a selector once per
# signature instead of once per pod (podaffinity.py, PodTopologySpread).
# Labels in another order make another signature: harmless, only less shared.
_SIGNATURES: dict = {}
SIGNATURE_INFO: list = []  # signature -> (namespace, labels, terminating)


def reset_signatures() -> None:
    """Forget every label signature (a long watch compacts them: new label sets
    keep coming). Only with no PodInfo left that holds one: the caller builds
    its snapshot again. In place: other modules hold SIGNATURE_INFO by name."""
    _SIGNATURES.clear()
    SIGNATURE_INFO.clear()


def signature_count() -> int:
    return len(SIGNATURE_INFO)


def label_signature_of(namespace: str, labels: dict, terminating: bool) -> int:
    key = (namespace, terminating, tuple(labels.items()))
    sig = _SIGNATURES.get(key)
    if sig is None:
        sig = _SIGNATURES[key] = len(SIGNATURE_INFO)
        SIGNATURE_INFO.append((namespace, dict(labels), terminating))
    return sig


class PodInfo:
    """A pod with everything the plugins derive from it, computed once."""

    __slots__ = (
        "pod",
        "namespace",
        "name",
        "uid",
        "key",
        "labels",
        "priority",
        "node_name",
        "_start_time",
        "_creation_time",
        "resource",
        "non0_cpu",
        "non0_mem",
        "host_ports",
        "pvc_names",
        "has_affinity",
        "has_required_anti_affinity",
        "signature",
        "importance",
        "_cache",
    )

    def __init__(self, pod: dict, facts: "SpecFacts | None" = None, options: RequestOptions = DEFAULT_OPTIONS):
        """`options`: how the version and its gates count the pod's requests
        (request_options(); Snapshot.pod_info makes PodInfos with its
        features' options)."""
        meta = pod["metadata"]
        spec = pod["spec"]
        self.pod = pod
        self.namespace = meta.get("namespace", "default")
        self.name = meta["name"]
        self.uid = meta["uid"]
        self.key = f"{self.namespace}/{self.name}"
        self.labels = meta.get("labels") or {}
        self.priority = spec.get("priority") or 0
        self.node_name = spec.get("nodeName") or ""
        self._start_time = self._creation_time = _UNPARSED
        self._cache = None  # made when first used (a snapshot holds many pods)
        # Preemption's ordering key (framework/preemption.py importance_key),
        # made when first compared.
        self.importance = None
        self.signature = label_signature_of(self.namespace, self.labels, meta.get("deletionTimestamp") is not None)
        if facts is not None:
            self.resource = facts.resource
            self.non0_cpu = facts.non0_cpu
            self.non0_mem = facts.non0_mem
            self.host_ports = facts.host_ports
            self.pvc_names = facts.pvc_names
            self.has_affinity = facts.has_affinity
            self.has_required_anti_affinity = facts.has_required_anti_affinity
            return

        requests = pod_requests(pod, options=options)
        self.resource = Resource()
        self.resource.add_milli_list(requests)
        non_missing = non_missing_container_requests(pod, requests, options.pod_level_resources)
        non0 = (pod_requests(pod, non_missing=non_missing, options=options)
                if defaults_apply(pod, non_missing) else requests)
        self.non0_cpu = non0.get(CPU, 0)
        self.non0_mem = value_of(non0.get(MEMORY, 0))

        ports = []
        for c in spec.get("initContainers") or ():
            if c.get("restartPolicy") == "Always":
                ports.extend(_host_ports(c))
        for c in spec.get("containers") or ():
            ports.extend(_host_ports(c))
        self.host_ports = ports
        self.pvc_names = [
            v["persistentVolumeClaim"]["claimName"]
            for v in spec.get("volumes") or ()
            if v.get("persistentVolumeClaim") and v["persistentVolumeClaim"].get("claimName")
        ]
        affinity = spec.get("affinity") or {}
        self.has_affinity = bool(affinity.get("podAffinity") or affinity.get("podAntiAffinity"))
        self.has_required_anti_affinity = bool(
            (affinity.get("podAntiAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
        )

    @property
    def spec(self) -> dict:
        return self.pod["spec"]

    # The times are parsed when first read: only pending pods (queue order)
    # and preemption victims need them, and a snapshot holds many pods.
    @property
    def start_time(self) -> datetime | None:
        if self._start_time is _UNPARSED:
            self._start_time = parse_time((self.pod.get("status") or {}).get("startTime"))
        return self._start_time

    @property
    def creation_time(self) -> datetime | None:
        if self._creation_time is _UNPARSED:
            self._creation_time = parse_time(self.pod["metadata"].get("creationTimestamp"))
        return self._creation_time

    def cached(self, key, compute):
        """Per-pod memo for what plugins derive from a pod (parsed terms...)."""
        cache = self._cache
        if cache is None:
            cache = self._cache = {}
        try:
            return cache[key]
        except KeyError:
            value = cache[key] = compute(self)
            return value

    def __repr__(self):
        return f"PodInfo({self.key})"


class SpecFacts:
    """What PodInfo derives from a pod's spec alone, for pods whose specs
    hold the very same objects (the replicas admission let share one spec,
    see Admission.pod): computed for the first, taken by the others. The
    values are shared, so nothing may change them in place (nothing does:
    a changed pod gets a new PodInfo)."""

    __slots__ = ("spec", "resource", "non0_cpu", "non0_mem", "host_ports", "pvc_names", "has_affinity",
                 "has_required_anti_affinity")

    def __init__(self, pi: PodInfo):
        # The spec whose values the key names: holding it keeps their ids unique.
        self.spec = pi.spec
        self.resource = pi.resource
        self.non0_cpu = pi.non0_cpu
        self.non0_mem = pi.non0_mem
        self.host_ports = pi.host_ports
        self.pvc_names = pi.pvc_names
        self.has_affinity = pi.has_affinity
        self.has_required_anti_affinity = pi.has_required_anti_affinity


def request_options(features) -> RequestOptions:
    """How the scheduler of these features counts a pod's requests in its
    cache (PodInfo.CalculateResource)."""
    return RequestOptions(features.enable_pod_level_resources,
                          features.enable_in_place_pod_level_resources_vertical_scaling,
                          features.pod_requests_aggregate_status)


def spec_facts_key(pod: dict):
    """What SpecFacts depend on, or None when that cannot be told: the
    identities of the spec's fields but nodeName and volumes, the claims
    the volumes name (all that is read of them: pods read from a cluster
    each have a service-account volume of their own name, see
    sources/spec_share.py), and the parts of the status that have a say in
    the requests (container statuses: in-place resizes), as written."""
    spec = pod["spec"]
    keys = tuple(spec)
    ids = [*map(id, spec.values())]
    if "nodeName" in spec:
        ids[keys.index("nodeName")] = 0
    volumes = spec.get("volumes")
    if volumes is not None:
        claims = claims_key(volumes)
        if claims is None:
            return None
        ids[keys.index("volumes")] = claims
    said = status_facts_key(pod.get("status"))
    if said is None:
        return None
    if said:
        return keys, tuple(ids), said
    return keys, tuple(ids)


def _host_ports(container: dict):
    for p in container.get("ports") or ():
        hp = p.get("hostPort") or 0
        if hp > 0:
            yield (p.get("hostIP") or DEFAULT_BIND_ALL_HOST_IP, p.get("protocol") or "TCP", hp)


class HostPortInfo:
    """Used host ports: {ip: {(protocol, port)}}, with upstream's 0.0.0.0 rules."""

    __slots__ = ("ports",)

    def __init__(self, ports=None):
        self.ports: dict[str, set] = ports if ports is not None else {}

    def add(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        self.ports.setdefault(ip or DEFAULT_BIND_ALL_HOST_IP, set()).add((protocol or "TCP", port))

    def remove(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip = ip or DEFAULT_BIND_ALL_HOST_IP
        s = self.ports.get(ip)
        if s is not None:
            s.discard((protocol or "TCP", port))
            if not s:
                del self.ports[ip]

    def check_conflict(self, ip: str, protocol: str, port: int) -> bool:
        if port <= 0:
            return False
        ip = ip or DEFAULT_BIND_ALL_HOST_IP
        pp = (protocol or "TCP", port)
        if ip == DEFAULT_BIND_ALL_HOST_IP:
            return any(pp in s for s in self.ports.values())
        for key in (DEFAULT_BIND_ALL_HOST_IP, ip):
            s = self.ports.get(key)
            if s is not None and pp in s:
                return True
        return False

    def __len__(self):
        return sum(len(s) for s in self.ports.values())

    def clone(self) -> "HostPortInfo":
        return HostPortInfo({ip: set(s) for ip, s in self.ports.items()})


class ImageStateSummary:
    __slots__ = ("size", "num_nodes")

    def __init__(self, size: int, num_nodes: int):
        self.size = size
        self.num_nodes = num_nodes


class NodeInfo:
    """framework.NodeInfo: a node and the aggregates of the pods on it."""

    __slots__ = (
        "node",
        "name",
        "labels",
        "taints",
        "unschedulable",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "used_ports",
        "requested",
        "non_zero_requested",
        "allocatable",
        "image_states",
        "pvc_ref_counts",
        "generation",
        "pod_index",
        "columns",
        "row",
        "signature_counts",
    )

    def __init__(self, node: dict | None = None):
        self.pods: list[PodInfo] = []
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        self.used_ports = HostPortInfo()
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.allocatable = Resource()
        self.image_states: dict[str, ImageStateSummary] = {}
        self.pvc_ref_counts: dict[str, int] = {}
        self.generation = next(_generation)
        # -- slots the modules that own them fill in --------------------------
        # PodIndex | None: the snapshot's, set by state/pod_index.py
        # (index_of) on every node when it builds one; None on clones.
        self.pod_index = None
        # NodeColumns | None and this node's row there, set by
        # state/node_columns.py (NodeColumns); None and -1 on clones and on
        # nodes added later (Snapshot.drop_columns).
        self.columns = None
        self.row = -1
        # (Counter of the pods' label signatures, the generation it is of) |
        # None: counted by add_pods while its pods are at hand; the pod index
        # (pod_index._fill) takes it while the node is unchanged.
        self.signature_counts = None
        self.node = None
        self.name = ""
        self.labels = {}
        self.taints = []
        self.unschedulable = False
        if node is not None:
            self.set_node(node)

    def set_node(self, node: dict) -> None:
        self.node = node
        meta = node["metadata"]
        spec = node.get("spec") or {}
        self.name = meta["name"]
        self.labels = meta.get("labels") or {}
        self.taints = spec.get("taints") or []
        self.unschedulable = bool(spec.get("unschedulable"))
        self.allocatable = Resource.from_milli_list(to_milli_list((node.get("status") or {}).get("allocatable")))
        self.generation = next(_generation)
        if self.columns is not None:
            self.columns.refresh(self)

    def add_pod(self, pi: PodInfo) -> None:
        self.pods.append(pi)
        if pi.has_affinity:
            self.pods_with_affinity.append(pi)
        if pi.has_required_anti_affinity:
            self.pods_with_required_anti_affinity.append(pi)
        self._update(pi, 1)
        if self.pod_index is not None:
            self.pod_index.update(pi, self.name, 1)

    def add_pods(self, pis: list[PodInfo]) -> None:
        """add_pod() for each of `pis` in order, on a node without a pod
        index or columns yet (build_snapshot): sums taken once per node."""
        if self.pod_index is not None or self.columns is not None:
            raise RuntimeError("add_pods is for nodes not indexed yet")
        self.pods.extend(pis)
        cpu = mem = eph = n0_cpu = n0_mem = 0
        scalar = self.requested.scalar
        for pi in pis:
            r = pi.resource
            cpu += r.milli_cpu
            mem += r.memory
            eph += r.ephemeral_storage
            if r.scalar:
                for name, q in r.scalar.items():
                    scalar[name] = scalar.get(name, 0) + q
            n0_cpu += pi.non0_cpu
            n0_mem += pi.non0_mem
            if pi.has_affinity:
                self.pods_with_affinity.append(pi)
            if pi.has_required_anti_affinity:
                self.pods_with_required_anti_affinity.append(pi)
            if pi.host_ports:
                for ip, proto, port in pi.host_ports:
                    self.used_ports.add(ip, proto, port)
            if pi.pvc_names:
                for claim in pi.pvc_names:
                    key = f"{pi.namespace}/{claim}"
                    self.pvc_ref_counts[key] = self.pvc_ref_counts.get(key, 0) + 1
        req = self.requested
        req.milli_cpu += cpu
        req.memory += mem
        req.ephemeral_storage += eph
        self.non_zero_requested.milli_cpu += n0_cpu
        self.non_zero_requested.memory += n0_mem
        self.generation = next(_generation)
        self.signature_counts = (Counter(map(_SIGNATURE, self.pods)), self.generation)

    def remove_pod(self, pi: PodInfo) -> bool:
        """Remove a pod by UID; False when it is not on this node."""
        if pi.has_affinity:
            _remove_by_uid(self.pods_with_affinity, pi.uid)
        if pi.has_required_anti_affinity:
            _remove_by_uid(self.pods_with_required_anti_affinity, pi.uid)
        removed = _remove_by_uid(self.pods, pi.uid)
        if removed is None:
            return False
        self._update(removed, -1)
        if self.pod_index is not None:
            self.pod_index.update(removed, self.name, -1)
        return True

    # -- a live cluster's changes (state/live.py): the order build_snapshot gives --
    def insert_pod(self, pi: PodInfo) -> None:
        """add_pod() where build_snapshot would have put the pod: pods of a
        cluster read come in key order ("namespace/name", the API's list
        order), and their order on a node is observable (preemption walks it)."""
        insort(self.pods, pi, key=_KEY)
        if pi.has_affinity:
            insort(self.pods_with_affinity, pi, key=_KEY)
        if pi.has_required_anti_affinity:
            insort(self.pods_with_required_anti_affinity, pi, key=_KEY)
        self._update(pi, 1)
        if self.pod_index is not None:
            self.pod_index.update(pi, self.name, 1)

    def delete_pod(self, pi: PodInfo) -> bool:
        """remove_pod() keeping the other pods' order (a re-read's order, not
        the swap a scheduler cache makes). False when the pod is not here."""
        removed = _delete_by_uid(self.pods, pi.uid)
        if removed is None:
            return False
        if removed.has_affinity:
            _delete_by_uid(self.pods_with_affinity, pi.uid)
        if removed.has_required_anti_affinity:
            _delete_by_uid(self.pods_with_required_anti_affinity, pi.uid)
        self._update(removed, -1)
        if removed.host_ports:
            # Used ports are a set: a port another pod here still uses stays used,
            # as a re-read would count it.
            for other in self.pods:
                for ip, proto, port in other.host_ports:
                    if (ip, proto, port) in removed.host_ports:
                        self.used_ports.add(ip, proto, port)
        if self.pod_index is not None:
            self.pod_index.update(removed, self.name, -1)
        return True

    def _update(self, pi: PodInfo, sign: int) -> None:
        r = pi.resource
        req = self.requested
        req.milli_cpu += sign * r.milli_cpu
        req.memory += sign * r.memory
        req.ephemeral_storage += sign * r.ephemeral_storage
        for name, q in r.scalar.items():
            req.scalar[name] = req.scalar.get(name, 0) + sign * q
        self.non_zero_requested.milli_cpu += sign * pi.non0_cpu
        self.non_zero_requested.memory += sign * pi.non0_mem
        for ip, proto, port in pi.host_ports:
            if sign > 0:
                self.used_ports.add(ip, proto, port)
            else:
                self.used_ports.remove(ip, proto, port)
        for claim in pi.pvc_names:
            key = f"{pi.namespace}/{claim}"
            n = self.pvc_ref_counts.get(key, 0) + sign
            if n > 0:
                self.pvc_ref_counts[key] = n
            else:
                self.pvc_ref_counts.pop(key, None)
        self.generation = next(_generation)
        if self.columns is not None:
            self.columns.refresh(self)

    def clone(self) -> "NodeInfo":
        """Snapshot(): a copy whose aggregates can change without touching this one."""
        c = NodeInfo.__new__(NodeInfo)
        c.node = self.node
        c.name = self.name
        c.labels = self.labels
        c.taints = self.taints
        c.unschedulable = self.unschedulable
        c.pods = list(self.pods)
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c.used_ports = self.used_ports.clone()
        c.requested = self.requested.clone()
        c.non_zero_requested = self.non_zero_requested.clone()
        c.allocatable = self.allocatable
        c.image_states = self.image_states
        c.pvc_ref_counts = dict(self.pvc_ref_counts)
        c.generation = self.generation
        c.pod_index = None
        c.columns = None
        c.row = -1
        c.signature_counts = None
        return c

    def __repr__(self):
        return f"NodeInfo({self.name}, pods={len(self.pods)})"


def _delete_by_uid(lst: list, uid: str):
    for i, p in enumerate(lst):
        if p.uid == uid:
            del lst[i]
            return p
    return None


def _remove_by_uid(lst: list, uid: str):
    for i, p in enumerate(lst):
        if p.uid == uid:
            # Upstream swaps with the last element; order of pods on a node is
            # observable (preemption iterates it), so do the same.
            lst[i] = lst[-1]
            lst.pop()
            return p
    return None


