"""build_snapshot adds each node's pods at once (NodeInfo.add_pods) and the
pod index is filled a node at a time (pod_index._fill): both must give
exactly what adding the pods one by one gives — the same aggregates, the
same lists in the same order, the same index entries in the same order."""

from __future__ import annotations

import copy
import json

from hypothesis import given, settings, strategies as st

from kschedx.state import pod_index
from kschedx.state.cluster import build_cluster
from kschedx.state.podaffinity import _compute_terms, affinity_terms
from kschedx.state.snapshot import build_snapshot
from kschedx.state.types import NodeInfo
from kschedx.sources.fixtures import Origin, read_objects
from kschedx.sources.spec_share import spec_key
from builders import affinity_term, container, make_pod, match_labels, preemption_node
from golden_compare import GOLDEN, case_names
from test_pod_index import _generator, _rebuilt

HOST = "kubernetes.io/hostname"


def _aggregates(ni: NodeInfo) -> tuple:
    return (
        [p.uid for p in ni.pods],
        [p.uid for p in ni.pods_with_affinity],
        [p.uid for p in ni.pods_with_required_anti_affinity],
        ni.requested.as_dict(), list(ni.requested.scalar.items()),
        ni.non_zero_requested.as_dict(),
        {ip: sorted(s) for ip, s in ni.used_ports.ports.items()}, list(ni.used_ports.ports),
        list(ni.pvc_ref_counts.items()),
    )


def _one_by_one(snap) -> list[tuple]:
    out = []
    for ni in snap.node_infos:
        fresh = NodeInfo(ni.node)
        for pi in ni.pods:
            fresh.add_pod(pi)
        out.append(_aggregates(fresh))
    return out


def _check_snapshot(objects) -> None:
    cluster = build_cluster(objects)
    snap = build_snapshot(cluster)
    assert [id(p) for p in snap.pending_pods] == [id(p) for p in cluster.pending_pods()]
    assert [_aggregates(ni) for ni in snap.node_infos] == _one_by_one(snap)
    # Every bound pod is known to the snapshot, on its node, in input order.
    assert list(snap.assigned_pod_node.items()) == [
        (pi.uid, ni.name) for pi in snap.pod_infos.values() for ni in [snap.by_name[pi.node_name]]]


def _golden_objects(name: str) -> list:
    return read_objects([str(GOLDEN / "cases" / f"{name}.yaml")])


def test_every_golden_case_adds_its_pods_as_one_by_one():
    for name in case_names():
        _check_snapshot(_golden_objects(name))


def test_a_generated_mixed_workload_adds_its_pods_as_one_by_one():
    objs = _generator().generate(40, 300, 3, 5, groups=3, replicas=3, seed=11)
    _check_snapshot([(o, Origin("generated")) for o in objs])


_quantities = st.sampled_from(["0", "1", "100m", "250m", "1Gi", "3", "17Mi"])
_pods = st.lists(st.fixed_dictionaries({
    "node": st.sampled_from(["n1", "n2"]),
    "requests": st.dictionaries(st.sampled_from(["cpu", "memory", "ephemeral-storage", "example.com/gpu",
                                                 "example.com/fpga"]), _quantities, max_size=4),
    "ports": st.lists(st.tuples(st.integers(1, 4), st.sampled_from(["", "10.0.0.1"]), st.sampled_from(["TCP", "UDP"])),
                      max_size=2),
    "claims": st.lists(st.sampled_from(["a", "b"]), max_size=2),
    "affinity": st.sampled_from([None, "affinity", "anti"]),
    "twin": st.booleans(),
}), max_size=12)


@settings(max_examples=60, deadline=None)
@given(_pods)
def test_random_pods_add_up_as_one_by_one(specs):
    objects = [preemption_node("n1"), preemption_node("n2")]
    for i, s in enumerate(specs):
        ports = [{"containerPort": 80, "hostPort": p, "hostIP": ip, "protocol": proto} for p, ip, proto in s["ports"]]
        affinity = None
        if s["affinity"]:
            kind = "podAffinity" if s["affinity"] == "affinity" else "podAntiAffinity"
            affinity = {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [
                affinity_term(match_labels(app="web"), HOST)]}}
        # Extended resources as the API server takes them: whole, their limits equal.
        requests = {k: ("1" if "/" in k and v.endswith("m") else v) for k, v in s["requests"].items()}
        limits = {k: v for k, v in requests.items() if "/" in k}
        pod = make_pod(f"p{i}", "ns", uid=None, labels={"app": "web"}, node=s["node"], affinity=affinity,
                       containers=[container("c", requests=requests or None, limits=limits or None,
                                             ports=ports or None)],
                       volumes=[{"name": c, "persistentVolumeClaim": {"claimName": c}} for c in s["claims"]] or None)
        objects.append(pod)
        if s["twin"]:  # an equal spec: shared facts
            twin = copy.deepcopy(pod)
            twin["metadata"]["name"] += "-twin"
            objects.append(twin)
    _check_snapshot([(o, Origin("t.yaml", i)) for i, o in enumerate(objects)])


def _entries(idx: pod_index.PodIndex) -> tuple:
    """The index as lists: insertion order counts (it is the order nodes are walked)."""
    return (
        [(sig, list(nodes.items())) for sig, nodes in idx.sig_nodes.items()],
        {ns: sorted(sigs) for ns, sigs in idx.ns_sigs.items()}, list(idx.ns_sigs),
        [(key, list(entry[1].items())) for key, entry in idx.terms_nodes.items()],
    )


def _check_index(objects) -> pod_index.PodIndex:
    snap = build_snapshot(build_cluster(objects))
    at_once = pod_index.index_of(snap)
    assert all(ni.pod_index is at_once for ni in snap.node_infos)
    # Each pod's terms are the object the index counts it under.
    for ni in snap.node_infos:
        for p in ni.pods_with_affinity:
            assert at_once.terms_nodes[id(affinity_terms(p))][1][ni.name] >= 1
    assert _entries(at_once) == _entries(_rebuilt(snap))
    return at_once


def test_the_index_built_at_once_equals_one_built_pod_by_pod():
    for name in case_names():
        _check_index(_golden_objects(name))
    objs = _generator().generate(40, 300, 3, 5, groups=3, replicas=3, seed=11)
    idx = _check_index([(o, Origin("generated")) for o in objs])
    assert idx.terms_nodes and idx.sig_nodes


def test_a_pod_whose_terms_were_parsed_before_is_indexed_under_its_own():
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        affinity_term(match_labels(app="web"), HOST)]}}
    pods = [make_pod(f"w{i}", "ns", uid=None, labels={"app": "web"}, node="n1", affinity=copy.deepcopy(anti))
            for i in range(3)]
    snap = build_snapshot(build_cluster([(o, Origin("t.yaml", i)) for i, o in
                                         enumerate([preemption_node("n1"), *pods])]))
    first, *others = snap.node_infos[0].pods
    own = first.cached("PodAffinityTerms", _compute_terms)
    idx = pod_index.index_of(snap)
    assert idx.terms_nodes[id(own)][1] == {"n1": 1}
    shared = affinity_terms(others[0])
    assert shared is not own and affinity_terms(others[1]) is shared
    assert idx.terms_nodes[id(shared)][1] == {"n1": 2}


def test_the_spec_key_leaves_the_spec_as_it_was():
    spec = {"containers": [{"name": "c", "image": "i"}], "nodeName": "n1", "priority": 1}
    pod = {"metadata": {"name": "p"}, "spec": spec}
    key = spec_key(spec, pod)
    assert list(spec.items()) == [("containers", [{"name": "c", "image": "i"}]), ("nodeName", "n1"), ("priority", 1)]
    other = copy.deepcopy(dict(spec, nodeName="n2"))
    assert spec_key(other, {"metadata": {}, "spec": other}) == key
    # Equal specs read from one document have equal keys.
    from kschedx.sources.fixtures import parse_documents

    (_, doc), = parse_documents("t.json", json.dumps({"items": [spec, other]}).encode())
    first, second = doc["items"]
    assert spec_key(first, {"metadata": {}, "spec": first}) == spec_key(second, {"metadata": {}, "spec": second})
    # Key order and exact types count; nodeName's place among the keys too.
    assert spec_key({"nodeName": "n1", "containers": spec["containers"], "priority": 1}, pod) != key
    assert spec_key(dict(spec, priority=1.0), pod) != key
    assert spec_key(dict(spec, priority=True), pod) != key
    # What marshal cannot write has no key, and the spec is restored.
    from datetime import datetime

    odd = {"nodeName": "n1", "when": datetime(2025, 1, 1)}
    assert spec_key(odd, {"metadata": {}, "spec": odd}) is None
    assert list(odd) == ["nodeName", "when"] and odd["nodeName"] == "n1"


def test_the_spec_key_leaves_service_account_volume_names_out_and_puts_them_back():
    def spec(volume_name, source="projected", when=None):
        volumes = [{"name": "data", "persistentVolumeClaim": {"claimName": "c"}}, {"name": volume_name, source: {}}]
        if when is not None:
            volumes[1]["when"] = when
        return {"containers": [{"name": "c", "image": "i"}], "volumes": volumes, "nodeName": "n1"}

    def key(s):
        return spec_key(s, {"metadata": {}, "spec": s})

    a, b = spec("kube-api-access-abcde"), spec("kube-api-access-fghij")
    assert key(a) == key(b)
    assert [v["name"] for v in a["volumes"]] == ["data", "kube-api-access-abcde"] and a["nodeName"] == "n1"
    # Only projected volumes of that name; other volumes' names count.
    assert key(spec("kube-api-access-abcde", "secret")) != key(spec("kube-api-access-fghij", "secret"))
    assert key(spec("my-abcde")) != key(spec("my-fghij"))
    # Put back when the spec cannot be keyed too.
    from datetime import datetime

    odd = spec("kube-api-access-abcde", when=datetime(2025, 1, 1))
    assert key(odd) is None
    assert odd["volumes"][1]["name"] == "kube-api-access-abcde" and odd["nodeName"] == "n1"
