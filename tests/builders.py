"""Small builders for test pods, nodes and clusters (plain API dicts).

Objects built here skip admission: they are what a plugin sees after the API
server has stored them, so tests state every field that matters to them.
`admitted()` runs the real fixture admission when a test needs it.
"""

from __future__ import annotations

import itertools

from kschedx.cluster import ClusterState, build_cluster
from kschedx.framework.cycle_state import CycleState
from kschedx.framework.interface import NodeScore
from kschedx.framework.runner import Framework
from kschedx.framework.status import Code
from kschedx.snapshot import NodeInfo, PodInfo, build_snapshot
from kschedx.sources.fixtures import Origin

_uids = itertools.count(1)


def container(name="c", *, requests=None, limits=None, image=None, ports=None, restart_policy=None) -> dict:
    c = {"name": name, "image": image or "registry.example/app:1"}
    res = {}
    if requests is not None:
        res["requests"] = dict(requests)
    if limits is not None:
        res["limits"] = dict(limits)
    if res:
        c["resources"] = res
    if ports is not None:
        c["ports"] = [dict(p) for p in ports]
    if restart_policy is not None:
        c["restartPolicy"] = restart_policy
    return c


def sidecar(name="sidecar", **kw) -> dict:
    return container(name, restart_policy="Always", **kw)


def req_containers(*requests) -> list[dict]:
    """One container per request list, named c0, c1, ..."""
    return [container(f"c{i}", requests=r) for i, r in enumerate(requests)]


def make_pod(
    name="pod",
    namespace="default",
    *,
    containers=None,
    init_containers=None,
    node=None,
    priority=None,
    uid=None,
    labels=None,
    tolerations=None,
    node_selector=None,
    affinity=None,
    overhead=None,
    pod_resources=None,
    scheduling_gates=None,
    status=None,
    created=None,
    **spec,
) -> dict:
    spec = dict(spec)
    spec["containers"] = containers if containers is not None else [container()]
    if init_containers is not None:
        spec["initContainers"] = init_containers
    if node is not None:
        spec["nodeName"] = node
    if priority is not None:
        spec["priority"] = priority
    if tolerations is not None:
        spec["tolerations"] = tolerations
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    if affinity is not None:
        spec["affinity"] = affinity
    if overhead is not None:
        spec["overhead"] = overhead
    if pod_resources is not None:
        spec["resources"] = pod_resources
    if scheduling_gates is not None:
        spec["schedulingGates"] = [{"name": g} for g in scheduling_gates]
    meta = {"name": name, "namespace": namespace, "uid": uid or f"uid-{next(_uids)}"}
    if labels:
        meta["labels"] = dict(labels)
    if created:
        meta["creationTimestamp"] = created
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    if status is not None:
        pod["status"] = status
    return pod


def make_node(
    name="node",
    *,
    cpu=None,
    memory=None,
    pods=None,
    allocatable=None,
    labels=None,
    taints=None,
    unschedulable=False,
    images=None,
) -> dict:
    """A node whose capacity and allocatable are the same list.

    cpu / memory / pods are quantities; `allocatable` adds or overrides any
    resource. Without any, the node has an empty allocatable (all zero)."""
    alloc = {}
    if cpu is not None:
        alloc["cpu"] = str(cpu)
    if memory is not None:
        alloc["memory"] = str(memory)
    if pods is not None:
        alloc["pods"] = str(pods)
    for k, v in (allocatable or {}).items():
        alloc[k] = str(v)
    spec = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    meta = {"name": name, "uid": f"node-{name}"}
    if labels is not None:
        meta["labels"] = dict(labels)
    status = {"capacity": dict(alloc), "allocatable": dict(alloc)}
    if images:
        status["images"] = images
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec, "status": status}


def image(size, *names) -> dict:
    return {"names": list(names), "sizeBytes": size}


def node_info(node: dict, *pods: dict) -> NodeInfo:
    ni = NodeInfo(node)
    for p in pods:
        ni.add_pod(PodInfo(p))
    return ni


def cluster_of(nodes=(), pods=()) -> ClusterState:
    return ClusterState(nodes=list(nodes), pods=list(pods))


def framework_for(nodes=(), pods=(), *, plugin_args=None, tie_break="name") -> Framework:
    """A Framework with the default profile over these nodes and bound pods."""
    snap = build_snapshot(cluster_of(nodes, pods))
    return Framework(snap, tie_break=tie_break, plugin_args=plugin_args)


def admitted(*objects, path="test.yaml") -> ClusterState:
    """Run the fixture admission over raw objects, as build_cluster does."""
    return build_cluster([(o, Origin(path, i + 1)) for i, o in enumerate(objects)])


def new_plugin(cls, handle=None, args=None):
    return cls(handle, args)


def run_filter(plugin, pod: dict, ni: NodeInfo, *, pre_filter=True):
    """PreFilter (when the plugin has one) then Filter, as the framework runs them.

    Returns (pre_filter_status, filter_status); the filter is not run (None)
    when PreFilter returned Skip or rejected the pod."""
    pi = PodInfo(pod)
    state = CycleState()
    pst = None
    if pre_filter and plugin.implements("pre_filter"):
        _, pst = plugin.pre_filter(state, pi, [ni])
        if pst is not None and not pst.is_success():
            return pst, None
    return pst, plugin.filter(state, pi, ni)


def run_score(plugin, pod: dict, node_infos, *, pre_score=True, normalize=True):
    """PreScore, Score on every node and NormalizeScore: [(name, score)]."""
    pi = PodInfo(pod)
    state = CycleState()
    if pre_score and plugin.implements("pre_score"):
        st = plugin.pre_score(state, pi, list(node_infos))
        if st is not None and st.code == Code.SKIP:
            return "Skip"
    scores = [NodeScore(ni.name, plugin.score(state, pi, ni)) for ni in node_infos]
    if normalize and plugin.implements("normalize_score"):
        plugin.normalize_score(state, pi, scores)
    return [(s.name, s.score) for s in scores]


def verdict(status):
    """(code label, reasons) of a Status, ("Success", []) for None."""
    if status is None:
        return ("Success", [])
    return (status.code.label, list(status.reasons))
