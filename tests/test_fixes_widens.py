"""What each fix widens (fixes/widens.py): its level and its words, read
from its changes, and fixes that widen less ranked first."""

from __future__ import annotations

from fixhelp import node, pod, priority_class, the_pod

LEVELS = ("none", "softer", "placement", "reserved", "others", "gives-up")
ZONE = "topology.kubernetes.io/zone"


def _fix(p, kind):
    (fix,) = [f for f in p["fixes"] if f["kind"] == kind][:1]
    return fix


def _kinds(fix):
    return [e["kind"] for e in fix["widens"]]


def test_every_fix_says_what_it_widens_and_less_widening_ranks_first():
    taint = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}
    objects = [node("infra", cpu="8", taints=[taint]), node("small", cpu="1", labels={ZONE: "z1"}),
               pod("web", cpu="2")]
    p = the_pod(objects)
    levels = [LEVELS.index(f["widening"]) for f in p["fixes"]]
    assert levels == sorted(levels)
    tolerate = _fix(p, "add-toleration")
    assert tolerate["widening"] == "reserved" and _kinds(tolerate) == ["taint"]
    assert tolerate["widens"][0]["text"] == ("tolerates taint dedicated=infra:NoSchedule, which reserves 1 node(s) "
                                            "(infra) for other pods")
    remove = _fix(p, "remove-taint")
    assert remove["widening"] == "others"
    smaller = _fix(p, "reduce-request")
    assert smaller["widening"] == "softer" and smaller["widens"][0]["text"] == "asks for less cpu (2 -> 1)"
    assert [f["kind"] for f in p["fixes"]] == ["reduce-request", "add-toleration", "remove-taint"]


def test_a_new_node_widens_nothing_and_ranks_first():
    objects = [priority_class("high", 1000), node("a", cpu="2"), pod("busy", cpu="1500m", node_name="a"),
               pod("web", cpu="1")]
    p = the_pod(objects)
    assert [(f["kind"], f["widening"]) for f in p["fixes"]] == [
        ("add-node", "none"), ("reduce-request", "softer"), ("raise-priority", "reserved"), ("remove-pods", "others")]
    assert p["fixes"][0]["widens"] == []


def test_a_taint_for_pods_asking_for_the_resource_widens_nothing():
    # ExtendedResourceToleration's rule: a taint keyed by the extended
    # resource the pod requests keeps off the pods that do not.
    gpu = {"key": "example.com/gpu", "value": "present", "effect": "NoSchedule"}
    n = node("gpu-1", taints=[gpu])
    n["status"]["allocatable"]["example.com/gpu"] = "1"
    web = pod("train")
    web["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100m", "example.com/gpu": "1"},
                                                 "limits": {"example.com/gpu": "1"}}
    p = the_pod([n, web])
    tolerate = _fix(p, "add-toleration")
    assert tolerate["widening"] == "none" and tolerate["widens"] == []


def test_a_cordoned_node_uncordoned_widens_for_others():
    cordoned = node("a", unschedulable=True)
    cordoned["spec"]["taints"] = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
    p = the_pod([cordoned, pod("web")])
    fix = _fix(p, "remove-taint")
    assert fix["widening"] == "others" and _kinds(fix) == ["cordon"]
    assert fix["widens"][0]["text"].startswith("uncordons node a")


def test_dropping_a_zone_selector_says_the_zone():
    objects = [node("a", labels={ZONE: "z2"}), pod("web", nodeSelector={ZONE: "z1"})]
    p = the_pod(objects)
    fix = _fix(p, "relax-node-affinity")
    assert fix["widening"] == "placement" and _kinds(fix) == ["zone"]
    assert fix["widens"][0]["text"] == f"may leave zone z1 (drops nodeSelector {ZONE}=z1)"


def test_spreading_less_evenly_is_softer():
    sel = {"matchLabels": {"app": "web"}}
    spread = [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": sel}]
    objects = [node("a", labels={"zone": "z1"}), node("b", cpu="1", labels={"zone": "z2"}),
               pod("b-fill", cpu="900m", node_name="b"),
               pod("w1", labels={"app": "web"}, node_name="a"), pod("w2", labels={"app": "web"}, node_name="a"),
               pod("web", labels={"app": "web"}, cpu="500m", topologySpreadConstraints=spread)]
    fix = _fix(the_pod(objects), "relax-topology-spread")
    assert fix["widening"] == "softer" and fix["widens"][0]["text"] == "spreads less evenly (maxSkew 1 -> 3)"


def test_deleting_pods_and_preempting_them():
    objects = [priority_class("high", 1000), node("a", cpu="2"),
               pod("busy", cpu="1500m", node_name="a"), pod("web", cpu="1")]
    p = the_pod(objects)
    raise_ = _fix(p, "raise-priority")
    assert raise_["widening"] == "reserved" and _kinds(raise_) == ["preemption"]
    assert raise_["widens"][0]["text"] == "preempts 1 pod(s) of lower priority (default/busy)"
    delete = _fix(p, "remove-pods")
    assert delete["widening"] == "others" and delete["widens"][0]["text"] == "deletes pod default/busy"


def test_widens_is_in_every_ci_line():
    from kschedx.render.fixes import fix_lines

    p = the_pod([node("a", cpu="1"), pod("web", cpu="2")])
    assert fix_lines(p)[0].endswith("(widens: asks for less cpu (2 -> 1))") or \
        fix_lines(p)[0].endswith("(widens nothing)")


def test_a_conditions_taint_removed_is_not_called_a_reservation():
    # remove-taint never proposes it (its controller puts it back), but the
    # words for a node patch removing one still say what the taint is.
    from types import SimpleNamespace

    from kschedx.fixes.widens import widening

    n = node("a", taints=[{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}])
    search = SimpleNamespace(snapshot=SimpleNamespace(get=lambda name: SimpleNamespace(node=n)))
    change = {"action": "patch", "target": {"kind": "Node", "name": "a"},
              "patch": [{"op": "remove", "path": "/spec/taints/0"}]}
    w = widening(search, "remove-taint", None, None, [change], {})
    assert w.name == "others"
    assert w.entries[0]["text"] == ("opens node a, not ready, to every pod: removes taint "
                                    "node.kubernetes.io/not-ready:NoSchedule, which a controller sets from the "
                                    "node's state")
    assert "reserves" not in w.entries[0]["text"]


def test_a_cut_of_requests_defaulted_from_limits_asks_for_less():
    # Container a sets only limits: it asks for 3 cpu. The cut is softer than
    # a node like n1, and makes the Guaranteed pod Burstable.
    web = pod("web")
    web["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "3", "memory": "1Gi"}}
    p = the_pod([node("n1", cpu="4"), pod("busy", cpu="2500m", node_name="n1"), web])
    smaller = _fix(p, "reduce-request")
    assert smaller["widening"] == "softer"
    assert smaller["widens"] == [
        {"kind": "requests", "level": "softer", "text": "asks for less cpu (3 -> 1500m)"},
        {"kind": "qos", "level": "softer",
         "text": "its QoS class becomes Burstable (was Guaranteed; requests below limits: the kubelet evicts it "
                 "before Guaranteed pods under node pressure and gives it no exclusive CPUs)"}]
    assert [f["kind"] for f in p["fixes"]][:2] == ["add-node", "reduce-request"]


def test_a_cut_of_extended_requests_defaulted_from_limits_asks_for_less():
    n = node("n1")
    n["status"]["allocatable"]["example.com/foo"] = "1"
    web = pod("web")
    web["spec"]["containers"][0]["resources"] = {"limits": {"example.com/foo": "2", "memory": "1Gi"}}
    smaller = _fix(the_pod([n, web]), "reduce-request")
    # No cpu limit: Burstable before and after, nothing said of the QoS class.
    assert smaller["widening"] == "softer"
    assert smaller["widens"] == [{"kind": "requests", "level": "softer", "text": "asks for less example.com/foo (2 -> 1)"}]
