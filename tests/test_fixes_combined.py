"""explain --fix when no single change makes the pod fit: parts joined for
one node (the pod's own, or with the cluster's), on top of a change that
showed what else blocks (chained), and a last resort so a pod a Filter
keeps off some node is never left without a candidate checked."""

from __future__ import annotations

from fixhelp import explain, node, pod, pod_after, pv, pvc, the_pod, with_claim
from golden_compare import GOLDEN
from kschedx.sources.fixtures import read_objects

TAINT = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}


def kinds(p):
    return [f["kind"] for f in p["fixes"]]


def assert_fits(objects, fix, key="default/web"):
    after = pod_after(objects, fix, key)
    assert after["status"] == "Scheduled", after["message"]
    return after


def test_selector_and_memory_at_once():
    # The pod: its nodeSelector leaves one node, where the memory is
    # taken; the other node has memory but not the label and is tainted.
    objects = [node("ssd", memory="4Gi", labels={"disk": "ssd"}), node("hdd", memory="16Gi", taints=[TAINT]),
               pod("busy", memory="4Gi", node_name="ssd"), pod("web", memory="8Gi", nodeSelector={"disk": "ssd"})]
    p = the_pod(objects)
    assert not [f for f in p["fixes"] if f["kind"] != "combined" and f["side"] == "pod"]
    assert p["fixSearch"]["candidates"] >= 1 and p["fixSearch"]["combinations"] >= 1
    (fix,) = [f for f in p["fixes"] if f["kind"] == "combined"]
    assert fix["parts"] == ["add-toleration", "relax-node-affinity"]
    assert fix["description"].startswith("tolerate taint dedicated=infra:NoSchedule; drop nodeSelector disk=ssd "
                                         "(for node hdd)")
    assert fix["objects"] == 1 and fix["side"] == "pod"
    assert_fits(objects, fix)


def test_joined_node_affinity_part_drops_only_the_requirement_the_node_fails():
    # hdd is tainted and silver: the join tolerates the taint and drops
    # "tier In (gold)" only, keeping the pod in z1.
    zone = "topology.kubernetes.io/zone"
    required = "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution"
    term = {"matchExpressions": [{"key": zone, "operator": "In", "values": ["z1"]},
                                 {"key": "tier", "operator": "In", "values": ["gold"]}]}
    objects = [node("hdd", labels={zone: "z1", "tier": "silver"}, taints=[TAINT]),
               pod("web", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                   "nodeSelectorTerms": [term]}}})]
    p = the_pod(objects)
    (fix,) = [f for f in p["fixes"] if f["kind"] == "combined"]
    assert fix["parts"] == ["add-toleration", "relax-node-affinity"]
    assert {"op": "remove", "path": required + "/nodeSelectorTerms/0/matchExpressions/1"} in fix["patch"]
    assert {"op": "remove", "path": required} not in fix["patch"]
    assert_fits(objects, fix)


def test_pod_and_cluster_parts_joined_when_nothing_alone_verifies():
    # A ReadWriteOncePod claim held elsewhere (only deleting its pod frees it)
    # and a taint on the one node with room: a cluster part and a pod part.
    holder = with_claim(pod("owner", node_name="small"))
    objects = [node("small", cpu="100m"), node("big", cpu="8", taints=[TAINT]), holder,
               pv("pv-data", modes=("ReadWriteOncePod",), claim="data"),
               pvc("data", modes=("ReadWriteOncePod",), volume="pv-data"), with_claim(pod("web", cpu="2"))]
    p = the_pod(objects)
    (fix,) = [f for f in p["fixes"] if f["kind"] == "combined"]
    assert fix["side"] == "cluster" and set(fix["parts"]) == {"add-toleration", "free-rwop-claim"}
    assert [c["action"] for c in fix["changes"]] == ["patch", "delete"]
    assert_fits(objects, fix)


def _case_1_49():
    return [o for o, _ in read_objects([str(GOLDEN / "cases" / "case-1-49.yaml")])]


def test_init_container_cut_joined_with_the_pod_affinity_drop():
    # golden case-1-49: the pod's cpu request is its init container's (500m),
    # more than node-3 has free once its required pod affinity is dropped:
    # lowering the init container joins the drop, a softer change than
    # deleting a pod there.
    objects = _case_1_49()
    (p,) = [p for p in explain(objects)["pods"] if p["pod"] == "default/frontend-n4j2gtpljr-j4z77"]
    (fix,) = [f for f in p["fixes"] if f["kind"] == "combined"]
    assert sorted(fix["parts"]) == ["reduce-request", "relax-pod-affinity"]
    assert fix["widening"] == "placement"
    assert fix["description"].startswith("lower the cpu request of init container init-db from 500m to 200m; ")
    assert fix["patch"][0] == {"op": "add", "path": "/spec/initContainers/0/resources/requests",
                               "value": {"cpu": "200m", "memory": "1Gi"}}
    assert_fits(objects, fix, p["pod"])


def test_chained_on_what_the_first_change_revealed(monkeypatch):
    # golden case-1-49 without the pod's request cuts among the parts: the
    # pod's own required pod affinity fails everywhere; once dropped, an
    # existing pod's anti-affinity keeps it off the node it would go to:
    # both changes together.
    from kschedx.config import names
    from kschedx.fixes import combine

    table = combine.providers()
    monkeypatch.setitem(table, names.NodeResourcesFit,
                        tuple(e for e in table[names.NodeResourcesFit] if e[0] != combine.POD))
    objects = _case_1_49()
    doc = explain(objects)
    (p,) = [p for p in doc["pods"] if p["pod"] == "default/frontend-n4j2gtpljr-j4z77"]
    (fix,) = [f for f in p["fixes"] if f["kind"] == "combined"]
    assert sorted(fix["parts"]) == ["relax-pod-affinity", "remove-pods"]
    assert [c["action"] for c in fix["changes"]] == ["patch", "delete"]
    assert_fits(objects, fix, p["pod"])


def test_no_combination_when_a_single_change_verifies():
    objects = [node("a", taints=[TAINT]), pod("web")]
    p = the_pod(objects)
    assert "add-toleration" in kinds(p) and "combined" not in kinds(p)
    assert p["fixSearch"]["combinations"] == 0


def test_a_filter_failure_never_ends_with_no_candidate():
    # Four plugins keep the pod off the one node (joins take two or three):
    # the last resort joins what opens each of them.
    daemon = pod("exporter", node_name="a")
    daemon["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 80}]
    daemon["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "exporter",
                                              "uid": "u-ds", "controller": True}]
    web = pod("web", cpu="2", nodeSelector={"disk": "ssd"})
    web["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 80}]
    objects = [node("a", cpu="1", taints=[TAINT], labels={"disk": "hdd"}), daemon, web]
    p = the_pod(objects)
    # One join; without any of its parts it cannot open the node (no cycle needed to know).
    assert len(p["nodes"][0]["filters"]) and p["fixSearch"]["candidates"] == 1
    (fix,) = p["fixes"]
    assert fix["kind"] == "combined"
    assert fix["parts"] == ["add-toleration", "relax-node-affinity", "relax-host-port", "reduce-request"]
    assert_fits(objects, fix)
