"""Pods whose specs are equal as written share one admitted spec
(Admission.pod) and what PodInfo derives from it (snapshot.SpecFacts).
Nothing may leak between them: every golden case with twins of its pods
gives the same pods, the same PodInfos and the same documents with and
without sharing; what admission reads beyond the spec (labels for
matchLabelKeys, the run's classes) and what PodInfo reads beyond it
(in-place resizes in the status) stays each pod's own; bad input in a
later twin is reported for that pod and field, exactly as without sharing."""

from __future__ import annotations

import copy
import json

import pytest

from kschedx.commands.explain import explain_into
from kschedx.commands.load import load_workload
from kschedx.commands.simulate import simulate
from kschedx.state import cluster as cluster_module, snapshot as snapshot_module
from kschedx.state.cluster import build_cluster
from kschedx.util.errors import InputError
from kschedx.result.sink import DocumentSink
from kschedx.state.snapshot import build_snapshot
from kschedx.sources.fixtures import Origin, read_objects
from builders import HIGH, LOW, ONE_POD, affinity_term, container, label_selector, make_pod, match_labels
from builders import preemption_node, preemption_pod, priority_class, spread_constraint
from golden_compare import GOLDEN, case_names

HOST = "kubernetes.io/hostname"


@pytest.fixture(params=[True, False], ids=["shared", "unshared"])
def sharing(request, monkeypatch):
    monkeypatch.setattr(cluster_module, "SHARE_SPECS", request.param)
    monkeypatch.setattr(snapshot_module, "SHARE_SPEC_FACTS", request.param)
    return request.param


def _set_sharing(monkeypatch, on: bool) -> None:
    monkeypatch.setattr(cluster_module, "SHARE_SPECS", on)
    monkeypatch.setattr(snapshot_module, "SHARE_SPEC_FACTS", on)


def _twin(obj: dict, suffix: str, labels: bool = False) -> dict:
    twin = copy.deepcopy(obj)
    meta = twin.setdefault("metadata", {})
    meta["name"] = f"{meta.get('name')}-{suffix}"
    if meta.get("uid"):
        meta["uid"] = f"{meta['uid']}-{suffix}"
    if labels and isinstance(meta.get("labels"), dict):
        meta["labels"] = {k: f"{v}-{suffix}" if isinstance(v, str) else v for k, v in meta["labels"].items()}
    return twin


def _with_twins(name: str) -> list:
    """The golden case with, after each pod, a twin (other name and uid) and
    a twin whose label values differ too."""
    objs = []
    for obj, origin in read_objects([str(GOLDEN / "cases" / f"{name}.yaml")]):
        objs.append((obj, origin))
        if obj.get("kind") == "Pod":
            objs.append((_twin(obj, "twin"), origin))
            objs.append((_twin(obj, "other", labels=True), origin))
    return objs


def _facts(snap) -> list:
    return [(pi.key, pi.node_name, pi.resource.as_dict(), pi.non0_cpu, pi.non0_mem, pi.host_ports, pi.pvc_names,
             pi.has_affinity, pi.has_required_anti_affinity, pi.priority, pi.signature)
            for pi in snap.pod_infos.values()]


def _outcome(name: str, objects=_with_twins) -> str:
    """The admitted pods, the snapshot's PodInfos and the explain document
    (or the error), as text: key order counts."""
    try:
        cluster = build_cluster(objects(name))
    except InputError as exc:
        return f"error: {exc}"
    pods = json.dumps(cluster.pods, default=repr)
    facts = json.dumps(_facts(build_snapshot(cluster)), default=repr)
    try:
        workload = load_workload((), cluster_objects=objects(name))
    except InputError as exc:
        return f"{pods}\n{facts}\nerror: {exc}"
    sink = DocumentSink()
    explain_into(sink, workload, tie_break="name", seed=None)
    return f"{pods}\n{facts}\n{json.dumps(sink.doc, default=repr)}"


@pytest.mark.parametrize("name", case_names())
def test_golden_cases_with_twins_are_the_same_with_and_without_sharing(name, monkeypatch):
    _set_sharing(monkeypatch, False)
    alone = _outcome(name)
    _set_sharing(monkeypatch, True)
    assert _outcome(name) == alone


def _as_read_from_a_cluster(obj: dict, suffix: str, resized: bool = False) -> dict:
    """The pod as a cluster serves it: a service-account volume of its own
    name, and (bound pods) the resources the kubelet reports per container,
    the spec's own or, `resized`, others."""
    obj = copy.deepcopy(obj)
    spec = obj.get("spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("volumes", []), list):
        return obj
    spec["volumes"] = [*spec.get("volumes", []), {"name": f"kube-api-access-{suffix}", "projected": {}}]
    containers = spec.get("containers")
    if spec.get("nodeName") and isinstance(containers, list) and all(isinstance(c, dict) for c in containers):
        statuses = []
        for c in containers:
            resources = copy.deepcopy(c.get("resources") or {})
            if resized:
                resources = {"requests": {"cpu": "3", "memory": "3Gi"}}
            statuses.append({"name": c.get("name"), "resources": resources})
        status = obj.setdefault("status", {})
        if isinstance(status, dict):
            status["containerStatuses"] = statuses
    return obj


@pytest.mark.parametrize("name", case_names())
def test_golden_cases_read_from_a_cluster_are_the_same_with_and_without_sharing(name, monkeypatch):
    # Each pod with a token volume of its own name, as every pod of a live
    # cluster has, and the kubelet's resources in its status: twins share
    # their admission and PodInfo facts but keep their own volumes, and a
    # resized twin keeps its own requests.
    def from_cluster(name):
        out = []
        for i, (obj, origin) in enumerate(_with_twins(name)):
            if obj.get("kind") == "Pod":
                obj = _as_read_from_a_cluster(obj, f"{i:05d}", resized=obj["metadata"]["name"].endswith("-other"))
            out.append((obj, origin))
        return out

    _set_sharing(monkeypatch, False)
    alone = _outcome(name, from_cluster)
    _set_sharing(monkeypatch, True)
    assert _outcome(name, from_cluster) == alone
    assert "kube-api-access-" in alone or "error:" in alone or "[]" in alone.split("\n")[0]


def _pod(name, labels=None, node=None, **spec):
    return make_pod(name, "ns", uid=None, labels=labels, node=node, **spec)


def _by_name(cluster) -> dict:
    return {p["metadata"]["name"]: p for p in cluster.pods}


def test_twins_share_nested_objects_but_not_the_spec_itself():
    c = build_cluster([(p, Origin("t.yaml", i)) for i, p in enumerate(
        [_pod("a", node="n1"), _pod("b", node="n2"), _pod("c")])])
    a, b, c = (_by_name(c)[n]["spec"] for n in "abc")
    assert a is not b and a["containers"] is b["containers"]  # shared
    assert (a["nodeName"], b["nodeName"], "nodeName" in c) == ("n1", "n2", False)
    assert list(a) == list(b)  # the same key order as admitting each
    assert c["containers"] is not a["containers"]  # no nodeName: another spec as written


def test_match_label_keys_take_each_pods_own_labels(sharing):
    term = affinity_term(match_labels(tier="web"), HOST, matchLabelKeys=["app"], mismatchLabelKeys=["team"])
    spread = spread_constraint(1, HOST, "DoNotSchedule", match_labels(tier="web"), match_label_keys=["app"])
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    pods = [_pod(n, labels={"tier": "web", "app": app_, "team": n}, affinity=copy.deepcopy(affinity),
                 topologySpreadConstraints=[copy.deepcopy(spread)]) for n, app_ in (("a", "x"), ("b", "y"), ("c", "x"))]
    by_name = _by_name(build_cluster([(p, Origin("t.yaml", i)) for i, p in enumerate(pods)]))
    for name, app_ in (("a", "x"), ("b", "y"), ("c", "x")):
        spec = by_name[name]["spec"]
        term = spec["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
        assert term["labelSelector"]["matchExpressions"] == [
            {"key": "app", "operator": "In", "values": [app_]}, {"key": "team", "operator": "NotIn", "values": [name]}]
        constraint = spec["topologySpreadConstraints"][0]
        assert constraint["labelSelector"]["matchExpressions"] == [{"key": "app", "operator": "In", "values": [app_]}]


def test_priority_comes_from_each_pods_class(sharing):
    objs = [priority_class("high", 1000), priority_class("base", 10, global_default=True),
            _pod("a", priorityClassName="high"), _pod("b"), _pod("c", priorityClassName="high"), _pod("d")]
    by_name = _by_name(build_cluster([(o, Origin("t.yaml", i)) for i, o in enumerate(objs)]))
    assert [by_name[n]["spec"]["priority"] for n in "abcd"] == [1000, 10, 1000, 10]
    assert [by_name[n]["spec"]["priorityClassName"] for n in "abcd"] == ["high", "base", "high", "base"]


def test_an_in_place_resize_counts_for_its_own_pod_only(sharing):
    cpu = {"cpu": "100m", "memory": "64Mi"}
    resized = {"phase": "Running", "containerStatuses": [
        {"name": "c", "resources": {"requests": {"cpu": "700m", "memory": "64Mi"}}}]}
    pods = [_pod("a", node="n1", containers=[container("c", requests=cpu)]),
            _pod("b", node="n1", containers=[container("c", requests=cpu)], status=resized),
            _pod("c", node="n1", containers=[container("c", requests=cpu)])]
    objs = [preemption_node("n1"), *pods]
    snap = build_snapshot(build_cluster([(o, Origin("t.yaml", i)) for i, o in enumerate(objs)]))
    cpus = {pi.name: pi.resource.milli_cpu for pi in snap.pod_infos.values()}
    assert cpus == {"a": 100, "b": 700, "c": 100}


def test_simulate_and_preemption_leave_the_twins_of_a_changed_pod_alone(sharing):
    # Four twins: two bound low-priority victims-to-be, two pending. The
    # urgent pod preempts on n1; the pending twins are placed one by one.
    req = {"cpu": "1"}
    objs = [preemption_node("n1", {"cpu": "2", "memory": "4Gi"}), preemption_node("n2", {"cpu": "1", "memory": "4Gi"}),
            preemption_pod("v1", node="n1", req=req, priority=LOW), preemption_pod("v2", node="n1", req=req, priority=LOW),
            preemption_pod("urgent", req={"cpu": "2"}, priority=HIGH),
            preemption_pod("w1", req=req, priority=LOW), preemption_pod("w2", req=req, priority=LOW)]
    workload = load_workload((), cluster_objects=[(o, Origin("t.yaml", i)) for i, o in enumerate(objs)])
    before = json.dumps(workload.cluster.pods)
    doc = simulate(workload, tie_break="name")
    placed = {p["pod"]: p.get("placedNode") for p in doc["pods"]}
    assert placed == {"ns/urgent": "n1", "ns/w1": "n2", "ns/w2": None} or placed == {
        "default/urgent": "n1", "default/w1": "n2", "default/w2": None}
    # The snapshot's pods are what simulate placed; the cluster's pods as read stay as they were.
    assert json.dumps(workload.cluster.pods) == before
    for p in workload.cluster.pods:
        name = p["metadata"]["name"]
        assert p["spec"].get("nodeName") == {"v1": "n1", "v2": "n1"}.get(name)


BAD_TWINS = {
    "label value": (lambda p: p["metadata"]["labels"].update(app=5), "metadata.labels[app]"),
    "status field": (lambda p: p.setdefault("status", {}).update(startTime=[1]), "status.startTime"),
    "node name": (lambda p: p["spec"].update(nodeName=7), "spec.nodeName"),
    "no name": (lambda p: p["metadata"].pop("name"), "metadata.name"),
    "metadata and status": (lambda p: (p["metadata"].update(namespace=3), p.update(status={"phase": 1})),
                            "metadata.namespace"),
}


@pytest.mark.parametrize("bad", sorted(BAD_TWINS))
def test_bad_input_in_a_later_twin_names_that_pod_and_field(bad, monkeypatch):
    change, field = BAD_TWINS[bad]

    def error() -> str:
        pods = [_pod(n, labels={"app": "web"}, node="n1", containers=[container("c", requests={"cpu": "1"})])
                for n in ("first", "second", "third")]
        change(pods[1])
        with pytest.raises(InputError) as ei:
            build_cluster([(p, Origin("t.yaml", i + 1)) for i, p in enumerate(pods)])
        return str(ei.value)

    _set_sharing(monkeypatch, False)
    alone = error()
    _set_sharing(monkeypatch, True)
    assert error() == alone
    assert field in alone and ("/second:" in alone or bad == "no name")
    assert "t.yaml" in alone


def test_the_pod_index_gives_twins_in_other_namespaces_their_own_terms(sharing):
    from kschedx.state.pod_index import index_of
    from kschedx.state.podaffinity import affinity_terms

    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        affinity_term(match_labels(app="web"), HOST)]}}
    pods = [make_pod(f"{ns}-{i}", ns, uid=None, labels={"app": "web"}, node="n1", affinity=copy.deepcopy(anti))
            for ns in ("blue", "green") for i in range(3)]
    snap = build_snapshot(build_cluster([(o, Origin("t.yaml", i)) for i, o in
                                         enumerate([preemption_node("n1"), *pods])]))
    index = index_of(snap)
    by_ns: dict = {}
    for pi in snap.pod_infos.values():
        terms = affinity_terms(pi)
        assert [t.namespaces for t in terms.required_anti_affinity] == [frozenset({pi.namespace})]
        by_ns.setdefault(pi.namespace, set()).add(id(terms))
    assert all(len(ids) == 1 for ids in by_ns.values())  # one parsed object per namespace
    assert sorted(nodes["n1"] for _, nodes in index.terms_nodes.values()) == [3, 3]


def test_pods_read_from_a_cluster_share_all_but_their_token_volumes(sharing):
    def read(name, suffix, **kw):
        pod = _pod(name, node="n1", containers=[container("c", requests={"cpu": "1"})], **kw)
        return _as_read_from_a_cluster(pod, suffix)

    claim = [{"name": "data", "persistentVolumeClaim": {"claimName": "data-a"}}]
    other_claim = [{"name": "data", "persistentVolumeClaim": {"claimName": "data-b"}}]
    pods = [read("a", "aaaaa"), read("b", "bbbbb"), read("c", "ccccc", volumes=claim),
            read("d", "ddddd", volumes=other_claim)]
    cluster = build_cluster([(p, Origin("t.yaml", i)) for i, p in enumerate([preemption_node("n1"), *pods])])
    by_name = _by_name(cluster)
    assert [v["name"] for v in by_name["b"]["spec"]["volumes"]] == ["kube-api-access-bbbbb"]
    assert [v["name"] for v in by_name["d"]["spec"]["volumes"]] == ["data", "kube-api-access-ddddd"]
    assert _containers_shared(cluster, "a", "b") is sharing
    assert not _containers_shared(cluster, "a", "c") and not _containers_shared(cluster, "c", "d")
    infos = {pi.name: pi for pi in build_snapshot(cluster).pod_infos.values()}
    assert (infos["a"].resource is infos["b"].resource) is sharing
    assert infos["c"].pvc_names == ["data-a"] and infos["d"].pvc_names == ["data-b"]
    assert infos["a"].resource.milli_cpu == infos["b"].resource.milli_cpu == 1000


def _containers_shared(cluster, a: str, b: str) -> bool:
    by_name = _by_name(cluster)
    return by_name[a]["spec"]["containers"] is by_name[b]["spec"]["containers"]


def test_sharing_stops_where_pods_rarely_share():
    # StatefulSet replicas: a hostname of each pod's own (DaemonSet ones
    # name their node in their affinity). A service-account volume of each
    # pod's own name does not stop sharing (kube-api-access-...).
    def pod_named(name, hostname):
        return _pod(name, node="n1", hostname=hostname,
                    volumes=[{"name": f"kube-api-access-{name}", "projected": {}}])

    def twins():
        return [pod_named("a", "same"), pod_named("b", "same")]

    distinct = [pod_named(f"p{i}", f"p{i}") for i in range(2000)]
    cluster = build_cluster([(p, Origin("t.yaml", i)) for i, p in enumerate(distinct + twins())])
    assert not _containers_shared(cluster, "a", "b")
    assert _by_name(cluster)["b"]["spec"]["hostname"] == "same"
    replicas = [pod_named(f"r{i}", "same") for i in range(2000)]
    cluster = build_cluster([(p, Origin("t.yaml", i)) for i, p in enumerate(replicas + twins())])
    assert _containers_shared(cluster, "a", "b") and _containers_shared(cluster, "r0", "b")
    assert _by_name(cluster)["b"]["spec"]["volumes"] == [{"name": "kube-api-access-b", "projected": {}}]


def test_pods_holding_one_spec_object_keep_it_whole(sharing):
    # A YAML alias (`spec: *s`) gives two pods one spec object; this one
    # needs nothing from admission, so its key is the same after it.
    tolerations = [{"key": k, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
                   for k in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")]
    spec = {"containers": [{"name": "c", "image": "i"}], "schedulerName": "default-scheduler", "priority": 0,
            "preemptionPolicy": "PreemptLowerPriority", "tolerations": tolerations}
    first = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "ns"}, "spec": spec}
    second = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b", "namespace": "ns"}, "spec": spec}
    expected = copy.deepcopy(spec)
    cluster = build_cluster([(first, Origin("t.yaml", 1)), (second, Origin("t.yaml", 2))])
    assert [p["spec"] for p in cluster.pods] == [expected, expected]
