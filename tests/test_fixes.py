"""explain --fix: every fix kind found on a small cluster, checked by the
real cycle, ranked, and really making the pod fit when applied to the
objects as written and explained again."""

from __future__ import annotations

import json

import pytest

from fixhelp import apply_fix, explain, node, pod, pod_after, priority_class, the_pod

GPU_TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}


def kinds(p):
    return [f["kind"] for f in p["fixes"]]


def fix_of(p, kind):
    found = [f for f in p["fixes"] if f["kind"] == kind]
    assert found, f"no {kind} fix in {kinds(p)}"
    return found[0]


def assert_fits(objects, fix, key="default/web"):
    after = pod_after(objects, fix, key)
    assert after["status"] == "Scheduled", after["message"]
    assert after["selectedNode"] == fix["verified"]["selectedNode"] or after["topNodes"]
    return after


def test_toleration_for_the_taint_that_alone_blocks_a_node():
    objects = [node("gpu-1", cpu="8", taints=[GPU_TAINT]), node("small", cpu="1"), pod("web", cpu="2")]
    p = the_pod(objects)
    assert p["status"] == "Unschedulable"
    fix = fix_of(p, "add-toleration")
    assert fix["side"] == "pod" and fix["objects"] == 1
    assert fix["target"] == {"apiVersion": "v1", "kind": "Pod", "namespace": "default", "name": "web"}
    # The pod as written has no tolerations: the patch adds the list (admission adds its defaults again).
    assert fix["patch"] == [{"op": "add", "path": "/spec/tolerations",
                             "value": [{"key": "dedicated", "operator": "Equal", "value": "gpu",
                                        "effect": "NoSchedule"}]}]
    assert fix["verified"] == {"status": "Scheduled", "selectedNode": "gpu-1", "feasibleNodes": 1, "nodes": ["gpu-1"]}
    assert "dedicated=gpu:NoSchedule" in fix["description"]
    assert_fits(objects, fix)
    # The same node opened from the cluster's side: the taint removed. A pod change ranks first.
    taint = fix_of(p, "remove-taint")
    assert taint["side"] == "cluster" and taint["patch"] == [{"op": "remove", "path": "/spec/taints/0"}]
    assert taint["target"]["kind"] == "Node" and taint["target"]["name"] == "gpu-1"
    assert kinds(p).index("add-toleration") < kinds(p).index("remove-taint")
    assert_fits(objects, taint)


def test_toleration_appended_to_the_pods_own_list():
    objects = [node("gpu-1", taints=[GPU_TAINT]),
               pod("web", tolerations=[{"key": "other", "operator": "Exists", "effect": "NoSchedule"}])]
    fix = fix_of(the_pod(objects), "add-toleration")
    assert fix["patch"][0]["path"] == "/spec/tolerations/-"
    assert_fits(objects, fix)


def test_uncordon_a_cordoned_node():
    cordon = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
    objects = [node("a", taints=[cordon], unschedulable=True), pod("web")]
    p = the_pod(objects)
    fix = fix_of(p, "remove-taint")
    assert "uncordon node a" in fix["description"]
    assert {"op": "remove", "path": "/spec/unschedulable"} in fix["patch"]
    assert_fits(objects, fix)


def test_node_selector_relaxed_or_node_labelled():
    objects = [node("a", labels={"disk": "ssd"}), node("b"), pod("web", nodeSelector={"disk": "nvme"})]
    p = the_pod(objects)
    relax = fix_of(p, "relax-node-affinity")
    assert relax["patch"] == [{"op": "remove", "path": "/spec/nodeSelector/disk"}]
    assert relax["verified"]["feasibleNodes"] == 2
    assert_fits(objects, relax)
    # Only b lacks the label: a's disk=ssd is not changed behind the user's back.
    label = fix_of(p, "label-node")
    assert label["target"]["name"] == "b"
    assert label["patch"] == [{"op": "add", "path": "/metadata/labels/disk", "value": "nvme"}]
    assert label["verified"]["selectedNode"] == "b"
    assert_fits(objects, label)
    assert kinds(p).index("relax-node-affinity") < kinds(p).index("label-node")


def test_required_node_affinity_requirement_dropped():
    zone_term = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]},
                                      {"key": "gpu", "operator": "Exists"}]}
    objects = [node("a", labels={"zone": "z1"}), node("b", labels={"zone": "z2"}),
               pod("web", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                   "nodeSelectorTerms": [zone_term]}}})]
    p = the_pod(objects)
    relax = fix_of(p, "relax-node-affinity")
    # Dropping "gpu Exists" opens a only; dropping the zone requirement opens nothing (no gpu label).
    assert relax["patch"] == [{"op": "remove", "path": "/spec/affinity/nodeAffinity/"
                               "requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms/0/matchExpressions/1"}]
    assert relax["verified"]["nodes"] == ["a"]
    assert_fits(objects, relax)
    label = fix_of(p, "label-node")
    assert label["patch"] == [{"op": "add", "path": "/metadata/labels/gpu", "value": "true"}]
    assert_fits(objects, label)


_ZONE = "topology.kubernetes.io/zone"
_AFFINITY = "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution"


def _required(*terms) -> dict:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def _in(key, *values) -> dict:
    return {"key": key, "operator": "In", "values": list(values)}


def test_node_needing_selector_and_affinity_changes_keeps_the_requirements_it_meets():
    # a is in z1 but silver and without disk=ssd: dropping disk and "tier In
    # (gold)" opens it and keeps the pod in z1; dropping the whole affinity
    # would let it leave z1 (b, in z2, needs that).
    objects = [node("a", labels={_ZONE: "z1", "tier": "silver"}),
               node("b", labels={_ZONE: "z2", "tier": "silver", "disk": "hdd"}),
               pod("web", nodeSelector={"disk": "ssd"},
                   affinity=_required({"matchExpressions": [_in(_ZONE, "z1"), _in("tier", "gold")]}))]
    p = the_pod(objects)
    relax = fix_of(p, "relax-node-affinity")
    assert relax["patch"] == [{"op": "remove", "path": "/spec/nodeSelector/disk"},
                              {"op": "remove", "path": _AFFINITY + "/nodeSelectorTerms/0/matchExpressions/1"}]
    assert relax["verified"]["nodes"] == ["a"]
    assert_fits(objects, relax)
    # The narrower change verifies: the whole affinity is not dropped by any fix.
    assert not [f for f in p["fixes"] if {"op": "remove", "path": _AFFINITY} in f["patch"]]


def test_node_affinity_term_needing_fewest_drops_is_chosen():
    # Term 0 fails on zone, tier and gpu; term 1 on tier only (the terms are ORed).
    terms = ({"matchExpressions": [_in(_ZONE, "z9"), _in("tier", "gold"), {"key": "gpu", "operator": "Exists"}]},
             {"matchExpressions": [_in(_ZONE, "z1"), _in("tier", "gold")]})
    objects = [node("a", labels={_ZONE: "z1", "tier": "silver"}),
               pod("web", nodeSelector={"disk": "ssd"}, affinity=_required(*terms))]
    relax = fix_of(the_pod(objects), "relax-node-affinity")
    assert relax["patch"] == [{"op": "remove", "path": "/spec/nodeSelector/disk"},
                              {"op": "remove", "path": _AFFINITY + "/nodeSelectorTerms/1/matchExpressions/1"}]
    assert_fits(objects, relax)


def test_whole_node_affinity_dropped_when_the_node_fails_every_requirement():
    # b fails both requirements of the only term: dropping them leaves an
    # empty term (which matches no node), so only the whole affinity goes.
    objects = [node("b", labels={_ZONE: "z2", "tier": "silver"}),
               pod("web", nodeSelector={"disk": "ssd"},
                   affinity=_required({"matchExpressions": [_in(_ZONE, "z1"), _in("tier", "gold")]}))]
    relax = fix_of(the_pod(objects), "relax-node-affinity")
    assert relax["patch"] == [{"op": "remove", "path": "/spec/nodeSelector/disk"},
                              {"op": "remove", "path": _AFFINITY}]
    assert_fits(objects, relax)


def test_topology_spread_max_skew_raised_to_what_the_nodes_need():
    sel = {"matchLabels": {"app": "web"}}
    spread = [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": sel}]
    objects = [node("a", labels={"zone": "z1"}), node("b", cpu="1", labels={"zone": "z2"}),
               pod("b-fill", cpu="900m", node_name="b"),
               pod("w1", labels={"app": "web"}, node_name="a"), pod("w2", labels={"app": "web"}, node_name="a"),
               pod("web", labels={"app": "web"}, cpu="500m", topologySpreadConstraints=spread)]
    p = the_pod(objects)
    fix = fix_of(p, "relax-topology-spread")
    # Zone z1 holds 2 matching pods, z2 none: the pod there makes the skew 3.
    assert fix["patch"] == [{"op": "add", "path": "/spec/topologySpreadConstraints/0/maxSkew", "value": 3}]
    assert fix["verified"]["selectedNode"] == "a"
    assert_fits(objects, fix)
    # A raised maxSkew that fits makes the softer, bigger change unnecessary.
    assert sum(k == "relax-topology-spread" for k in kinds(p)) == 1


def test_pod_anti_affinity_term_made_preferred_or_a_node_added():
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    objects = [node("a"), node("b"),
               pod("w1", labels={"app": "web"}, node_name="a"), pod("w2", labels={"app": "web"}, node_name="b"),
               pod("web", labels={"app": "web"}, affinity=anti)]
    p = the_pod(objects)
    relax = fix_of(p, "relax-pod-affinity")
    # The term kept as a preference: smaller than dropping it, which is then not proposed.
    assert relax["patch"] == [
        {"op": "remove", "path": "/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/0"},
        {"op": "add", "path": "/spec/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution",
         "value": [{"weight": 100, "podAffinityTerm": term}]}]
    assert "app=web per kubernetes.io/hostname" in relax["description"] and "preferred" in relax["description"]
    assert relax["widening"] == "softer" and relax["widens"][0]["kind"] == "anti-affinity"
    assert kinds(p).count("relax-pod-affinity") == 1
    assert_fits(objects, relax)
    added = fix_of(p, "add-node")
    assert added["changes"][0]["action"] == "create"
    new = added["patch"][0]["value"]
    assert added["patch"][0]["path"] == "" and new["kind"] == "Node" and new["metadata"]["name"] == "a-copy"
    # A copy of a's shape in a hostname domain of its own, without a's pods.
    assert new["metadata"]["labels"]["kubernetes.io/hostname"] == "a-copy"
    assert new["status"]["allocatable"] == {"cpu": "4", "memory": "16Gi", "pods": "110"}
    assert added["verified"]["selectedNode"] == "a-copy"
    assert_fits(objects, added)
    # A node like a widens nothing: it ranks before the pod's softer anti-affinity.
    assert added["widening"] == "none" and added["widens"] == []
    assert kinds(p).index("add-node") < kinds(p).index("relax-pod-affinity")


def test_largest_request_that_fits_found_by_bisection():
    objects = [node("a", cpu="4"), pod("busy", cpu="2900m", node_name="a"), pod("web", cpu="3")]
    p = the_pod(objects)
    fix = fix_of(p, "reduce-request")
    assert fix["patch"] == [{"op": "add", "path": "/spec/containers/0/resources/requests",
                             "value": {"cpu": "1100m", "memory": "128Mi"}}]
    assert "from 3 to 1100m" in fix["description"]
    assert_fits(objects, fix)
    # The largest in steps of 10m: one step more does not fit.
    bigger = json.loads(json.dumps(fix).replace("1100m", "1110m"))
    assert pod_after(objects, bigger, "default/web")["status"] == "Unschedulable"


def test_memory_request_in_binary_steps():
    objects = [node("a", memory="8Gi"), pod("busy", memory="5Gi", node_name="a"), pod("web", memory="4Gi")]
    fix = fix_of(the_pod(objects), "reduce-request")
    # 8Gi - 5Gi is free; the grid for a 4Gi request has steps of 128Mi.
    assert fix["patch"][0]["value"]["memory"] == "3Gi"
    assert "in steps of 128Mi" in fix["description"]
    assert_fits(objects, fix)
    bigger = json.loads(json.dumps(fix).replace('"3Gi"', '"3200Mi"'))
    assert pod_after(objects, bigger, "default/web")["status"] == "Unschedulable"


def test_priority_that_makes_preemption_succeed_and_pods_to_delete():
    objects = [priority_class("low", 10), priority_class("mid", 500), priority_class("high", 1000),
               node("a", cpu="2"),
               pod("batch", cpu="1500m", node_name="a", priorityClassName="mid"),
               pod("web", cpu="1", priorityClassName="low")]
    p = the_pod(objects)
    assert not (p["preemption"] or {}).get("nominatedNode")
    prio = fix_of(p, "raise-priority")
    assert prio["patch"] == [{"op": "add", "path": "/spec/priorityClassName", "value": "high"}]
    assert prio["verified"]["nominatedNode"] == "a"
    assert [v["pod"] for v in prio["verified"]["victims"]] == ["default/batch"]
    after = pod_after(objects, prio, "default/web")
    assert after["preemption"]["nominatedNode"] == "a"
    delete = fix_of(p, "remove-pods")
    assert delete["changes"] == [{"action": "delete", "patch": [],
                                  "target": {"apiVersion": "v1", "kind": "Pod", "namespace": "default",
                                             "name": "batch"}}]
    assert_fits(objects, delete)
    # One object before many is the first rule; here both are one object: the pod change first.
    assert kinds(p).index("raise-priority") < kinds(p).index("remove-pods")


def _claiming(obj, claim="data"):
    obj["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
    return obj


def test_no_fix_verifies():
    # A claim that does not exist, and nothing in the cluster to back one.
    objects = [node("a"), _claiming(pod("web", cpu="100m"))]
    p = the_pod(objects)
    assert p["status"] == "Unschedulable"
    assert p["fixes"] == []
    assert p["fixSearch"]["verified"] == 0
    assert p["fixSearch"]["candidates"] == 0  # a PreFilter rejection: no Filter ran
    assert p["fixSearch"]["uncovered"] == [
        {"plugin": "VolumeRestrictions",
         "reason": "no StorageClass or PersistentVolume could back claim default/data (kschedx does not invent a "
                   "volume source)"}]


def test_request_no_node_offers_is_dropped_with_its_limit():
    objects = [node("a"), pod("web", cpu="100m")]
    res = objects[1]["spec"]["containers"][0]["resources"]
    res["requests"]["example.com/widget"] = "1"
    res["limits"] = {"example.com/widget": "1"}
    p = the_pod(objects)
    fix = fix_of(p, "reduce-request")
    assert fix["patch"] == [
        {"op": "remove", "path": "/spec/containers/0/resources/requests/example.com~1widget"},
        {"op": "remove", "path": "/spec/containers/0/resources/limits/example.com~1widget"}]
    assert fix["description"].startswith("drop the example.com/widget request and limit (no node has it free")
    assert_fits(objects, fix)


def test_request_is_never_dropped_when_a_node_has_it_where_only_something_else_blocks():
    # gpu-1 has the GPU free; only its taint keeps the pod off: tolerate it, never drop the GPU.
    gpu = node("gpu-1", taints=[GPU_TAINT])
    gpu["status"]["allocatable"]["example.com/gpu"] = "1"
    objects = [gpu, node("b"), pod("web")]
    objects[2]["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "1"
    objects[2]["spec"]["containers"][0]["resources"]["limits"] = {"example.com/gpu": "1"}
    p = the_pod(objects)
    assert "add-toleration" in kinds(p)
    assert "reduce-request" not in kinds(p)


def test_extended_request_lowered_with_its_limit():
    # Requests of an extended resource must equal its limits: both are lowered.
    a = node("a")
    a["status"]["allocatable"]["example.com/gpu"] = "4"
    busy = pod("busy", node_name="a")
    busy["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "3"
    busy["spec"]["containers"][0]["resources"]["limits"] = {"example.com/gpu": "3"}
    web = pod("web")
    web["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "2"
    web["spec"]["containers"][0]["resources"]["limits"] = {"example.com/gpu": "2"}
    objects = [a, busy, web]
    fix = fix_of(the_pod(objects), "reduce-request")
    assert fix["patch"] == [
        {"op": "add", "path": "/spec/containers/0/resources/requests",
         "value": {"cpu": "100m", "memory": "128Mi", "example.com/gpu": "1"}},
        {"op": "add", "path": "/spec/containers/0/resources/limits", "value": {"example.com/gpu": "1"}}]
    assert_fits(objects, fix)


def test_scheduled_pods_get_no_fixes_and_no_flag_no_fixes():
    objects = [node("a"), pod("web")]
    assert "fixes" not in the_pod(objects)
    objects = [node("a", taints=[GPU_TAINT]), pod("web")]
    (p,) = explain(objects, fix=False)["pods"]
    assert "fixes" not in p and "fixSearch" not in p


LEVELS = ("none", "softer", "placement", "reserved", "others", "gives-up")


def test_ranking_less_widening_first_then_one_object_before_many_pod_before_cluster():
    objects = [priority_class("mid", 500), node("a", cpu="2", taints=[GPU_TAINT]), node("b", cpu="2"),
               pod("f1", cpu="800m", node_name="b", priorityClassName="mid"),
               pod("f2", cpu="800m", node_name="b", priorityClassName="mid"),
               pod("web", cpu="1500m")]
    p = the_pod(objects)
    ranks = [(LEVELS.index(f["widening"]), f["objects"], f["side"]) for f in p["fixes"]]
    assert ranks == sorted(ranks, key=lambda r: (r[0], r[1], r[2] != "pod"))
    assert [f["widening"] for f in p["fixes"] if f["kind"] == "add-toleration"] == ["reserved"]
    assert fix_of(p, "remove-pods")["objects"] == 2
    assert kinds(p)[-1] == "remove-pods"
    for fix in p["fixes"]:
        assert_fits(objects, fix)


def test_search_leaves_the_snapshot_as_it_was():
    """Pods after one with fixes see the cluster unchanged (the changes are undone)."""
    objects = [node("a", cpu="2", taints=[GPU_TAINT]), node("b", cpu="2"),
               pod("f1", cpu="800m", node_name="b"), pod("web", cpu="1500m"), pod("later", cpu="1500m")]
    with_fix = explain(objects)
    without = explain(objects, fix=False)
    for a, b in zip(with_fix["pods"], without["pods"]):
        a = {k: v for k, v in a.items() if k not in ("fixes", "fixSearch")}
        assert a == b


@pytest.mark.parametrize("output", ["human", "json"])
def test_cli_fix_flag(tmp_path, output):
    import yaml
    from click.testing import CliRunner

    from kschedx.cli.main import main

    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump_all([node("gpu-1", cpu="8", taints=[GPU_TAINT]), node("small", cpu="1"),
                                     pod("web", cpu="2")]))
    res = CliRunner().invoke(main, ["explain", "--snapshot", str(f), "--fix", "-o", output, "--tie-break", "name"])
    assert res.exit_code == 1, res.output
    if output == "json":
        doc = json.loads(res.output)
        # The smaller request widens less than tolerating the taint reserving gpu-1.
        assert [x["kind"] for x in doc["pods"][0]["fixes"]][:2] == ["reduce-request", "add-toleration"]
    else:
        assert "fixes (each checked by running the scheduling cycle again" in res.output
        assert "2. [add-toleration] tolerate taint dedicated=gpu:NoSchedule" in res.output
        assert "widens: tolerates taint dedicated=gpu:NoSchedule, which reserves 1 node(s) (gpu-1)" in res.output
        assert "patch Pod default/web: add /spec/tolerations" in res.output
        assert "\x1b[" not in res.output  # plain text without a terminal


# ---- the bundled examples (fixtures/fix/README.md and the README's "explain --fix") ----------------
def _fixture_table():
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    rows = {}
    for line in (root / "fixtures" / "fix" / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 3 and cells[0].endswith(".yaml"):
            rows[cells[0]] = [k.split()[0] for k in cells[2].split("; ")]
    return root, rows


def _fixture_kinds(root, pods, snapshot):
    from kschedx.commands import explain as explaining
    from kschedx.commands.load import load_workload

    workload = load_workload([str(root / snapshot)], [str(root / p) for p in pods], keep_raw=True)
    return [[f["kind"] for f in p["fixes"]] for p in explaining.explain(workload, tie_break="name", fix=True)["pods"]]


def test_fixture_table_stays_true():
    root, rows = _fixture_table()
    assert rows
    for name, expected in rows.items():
        assert _fixture_kinds(root, [f"fixtures/fix/{name}"], "fixtures/cluster") == [expected], name


def test_readme_examples_stay_true():
    root, _ = _fixture_table()
    assert _fixture_kinds(root, ["fixtures/pods/too-big.yaml"], "fixtures/cluster") == [["reduce-request"]]
    # A node like worker-1 widens nothing; the smaller cpu request asks for less.
    assert _fixture_kinds(root, ["fixtures/preemption/urgent.yaml"], "fixtures/preemption/cluster.yaml") == [
        ["add-node", "reduce-request"]]


def test_several_requests_cut_to_what_one_node_has_free():
    objects = [node("a", cpu="4", memory="8Gi"), pod("busy", cpu="3", memory="6Gi", node_name="a"),
               pod("web", cpu="2", memory="4Gi")]
    p = the_pod(objects)
    fix = fix_of(p, "reduce-request")
    assert fix["patch"] == [{"op": "add", "path": "/spec/containers/0/resources/requests",
                             "value": {"cpu": "1", "memory": "2Gi"}}]
    assert "cpu request from 2 to 1 and the memory request from 4Gi to 2Gi" in fix["description"]
    assert_fits(objects, fix)


def _with_port(obj, port=8080):
    obj["spec"]["containers"][0]["ports"] = [{"containerPort": port, "hostPort": port}]
    return obj


def test_pods_holding_a_host_port_deleted():
    objects = [node("a"), _with_port(pod("holder", node_name="a")), _with_port(pod("web"))]
    p = the_pod(objects)
    fix = fix_of(p, "remove-pods")
    assert [c["target"]["name"] for c in fix["changes"]] == ["holder"]
    assert_fits(objects, fix)


def test_pods_whose_anti_affinity_rejects_the_pod_deleted():
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone"}]}}
    objects = [node("a", labels={"zone": "z1"}), node("b", labels={"zone": "z1"}),
               pod("loner", node_name="b", affinity=anti), pod("web", labels={"app": "web"})]
    p = the_pod(objects)
    fix = fix_of(p, "remove-pods")
    # loner runs on b but its zone-wide anti-affinity keeps web off a too.
    assert [c["target"]["name"] for c in fix["changes"]] == ["loner"]
    assert_fits(objects, fix)


def test_daemonset_pods_are_never_proposed():
    ds = _with_port(pod("exporter", node_name="a"))
    ds["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "exporter",
                                          "uid": "u1", "controller": True}]
    p = the_pod([node("a"), ds, _with_port(pod("web"))])
    assert "remove-pods" not in kinds(p)


def test_combined_change_when_no_single_change_to_the_pod_opens_a_node():
    objects = [node("a", cpu="4", taints=[GPU_TAINT], labels={"disk": "hdd"}),
               pod("busy", cpu="3", node_name="a"), pod("web", cpu="2", nodeSelector={"disk": "ssd"})]
    p = the_pod(objects)
    assert not any(f["side"] == "pod" and f["kind"] != "combined" for f in p["fixes"])
    fix = fix_of(p, "combined")
    assert fix["description"].startswith("tolerate taint dedicated=gpu:NoSchedule; drop nodeSelector disk=ssd; "
                                          "lower the cpu request from 2 to 1 (for node a)")
    assert [op["path"] for op in fix["patch"]] == ["/spec/tolerations", "/spec/nodeSelector/disk",
                                                   "/spec/containers/0/resources/requests"]
    assert_fits(objects, fix)


def test_human_says_when_no_fix_verifies():
    import io

    from kschedx.render.human import render

    objects = [node("a"), _claiming(pod("web"))]
    out = io.StringIO()
    render(explain(objects), out=out, color=False)
    text = out.getvalue()
    assert "fixes: none found: no change kschedx tried makes the pod schedulable" in text
    # Under the verdict: before the filter matrix.
    assert text.index("fixes: none found") < text.index("Filter")


def _daemon(obj):
    obj["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "exporter",
                                           "uid": "u-ds", "controller": True}]
    return obj


def test_host_port_held_by_a_daemonset_dropped_from_the_pod():
    objects = [node("a"), _daemon(_with_port(pod("exporter", node_name="a"))), _with_port(pod("web"))]
    p = the_pod(objects)
    fix = fix_of(p, "relax-host-port")
    assert fix["patch"] == [{"op": "remove", "path": "/spec/containers/0/ports/0/hostPort"}]
    assert "held on node a by default/exporter; the containerPort stays" in fix["description"]
    assert_fits(objects, fix)


def test_host_port_of_an_ordinary_pod_is_that_pods_to_give_up():
    objects = [node("a"), _with_port(pod("holder", node_name="a")), _with_port(pod("web"))]
    p = the_pod(objects)
    assert "relax-host-port" not in kinds(p)
    assert "remove-pods" in kinds(p)


def test_a_soft_spread_constraint_loses_min_domains():
    # minDomains is allowed only with DoNotSchedule: a constraint made soft
    # with it is a pod the API server refuses. Golden case-1-24: spreading
    # and memory keep the pod off every node; only both changes fit it.
    from golden_compare import GOLDEN
    from kschedx.sources.fixtures import read_objects

    objects = [o for o, _ in read_objects([str(GOLDEN / "cases" / "case-1-24.yaml")])]
    (p,) = [p for p in explain(objects)["pods"] if p["pod"] == "default/worker-qkwgv"]
    fix = fix_of(p, "combined")
    assert "relax-topology-spread" in fix["parts"]
    assert {"op": "remove", "path": "/spec/topologySpreadConstraints/0/minDomains"} in fix["patch"]
    assert_fits(objects, fix, "default/worker-qkwgv")


def _ports(obj, *ports):
    obj["spec"]["containers"][0]["ports"] = [dict(p) for p in ports]
    return obj


def test_host_port_dropped_only_for_the_protocol_held():
    # 53/UDP held by the DaemonSet: 53/TCP and 9000 are free and stay asked for.
    objects = [node("a"), _daemon(_ports(pod("exporter", node_name="a"),
                                         {"containerPort": 53, "hostPort": 53, "protocol": "UDP"})),
               _ports(pod("web"), {"containerPort": 53, "hostPort": 53, "protocol": "TCP"},
                      {"containerPort": 53, "hostPort": 53, "protocol": "UDP"},
                      {"containerPort": 9000, "hostPort": 9000})]
    fix = fix_of(the_pod(objects), "relax-host-port")
    assert fix["patch"] == [{"op": "remove", "path": "/spec/containers/0/ports/1/hostPort"}]
    assert "drop hostPort 53/UDP of container app (held on node a by default/exporter;" in fix["description"]
    assert "53/TCP" not in fix["description"]
    assert_fits(objects, fix)


def test_host_port_dropped_only_for_the_address_held():
    # 10.0.0.1:8080 held: the pod's 10.0.0.2:8080 is no conflict and stays.
    held = {"containerPort": 8080, "hostPort": 8080, "hostIP": "10.0.0.1"}
    other = {"containerPort": 8081, "hostPort": 8080, "hostIP": "10.0.0.2"}
    objects = [node("a"), _daemon(_ports(pod("exporter", node_name="a"), held)), _ports(pod("web"), held, other)]
    fix = fix_of(the_pod(objects), "relax-host-port")
    assert fix["patch"] == [{"op": "remove", "path": "/spec/containers/0/ports/0/hostPort"},
                            {"op": "remove", "path": "/spec/containers/0/ports/0/hostIP"}]
    assert "drop hostPort 8080/TCP on 10.0.0.1 of container app (held" in fix["description"]
    assert_fits(objects, fix)


def test_host_port_held_on_every_address_conflicts_with_each():
    # 0.0.0.0 binds every address: the pod's ports on 10.0.0.1 and 10.0.0.2 both conflict.
    objects = [node("a"), _daemon(_ports(pod("exporter", node_name="a"), {"containerPort": 8080, "hostPort": 8080})),
               _ports(pod("web"), {"containerPort": 8080, "hostPort": 8080, "hostIP": "10.0.0.1"},
                      {"containerPort": 8081, "hostPort": 8080, "hostIP": "10.0.0.2"})]
    fix = fix_of(the_pod(objects), "relax-host-port")
    assert [op["path"] for op in fix["patch"]] == [
        "/spec/containers/0/ports/0/hostPort", "/spec/containers/0/ports/0/hostIP",
        "/spec/containers/0/ports/1/hostPort", "/spec/containers/0/ports/1/hostIP"]
    assert_fits(objects, fix)


def _number_affinity(op, bound):
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "example.com/offset", "operator": op, "values": [bound]}]}]}}}


@pytest.mark.parametrize("op, bound", [("Lt", "0"), ("Gt", "9223372036854775807")])
def test_no_node_label_when_no_label_value_matches(op, bound):
    # Lt 0 asks for a negative value, which no label value is ("-1" is refused
    # by the API server); past int64 no label value parses as a number.
    objects = [node("a"), node("b"), pod("web", affinity=_number_affinity(op, bound))]
    p = the_pod(objects)
    assert "label-node" not in kinds(p)
    assert "relax-node-affinity" in kinds(p)


@pytest.mark.parametrize("op, bound, value", [("Lt", "1", "0"), ("Gt", "7", "8")])
def test_node_labelled_with_the_nearest_number_past_the_bound(op, bound, value):
    objects = [node("a"), pod("web", affinity=_number_affinity(op, bound))]
    label = fix_of(the_pod(objects), "label-node")
    assert label["patch"] == [{"op": "add", "path": "/metadata/labels/example.com~1offset", "value": value}]
    assert_fits(objects, label)


NOT_READY = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
DISK_PRESSURE = {"key": "node.kubernetes.io/disk-pressure", "effect": "NoSchedule"}


def test_a_conditions_taint_is_tolerated_never_removed():
    # The node lifecycle controller puts these back while the condition lasts.
    objects = [node("a", taints=[NOT_READY]), node("b", taints=[DISK_PRESSURE]), pod("web")]
    p = the_pod(objects)
    assert "remove-taint" not in kinds(p)
    assert sorted(f["patch"][0]["value"][0]["key"] for f in p["fixes"] if f["kind"] == "add-toleration") == [
        "node.kubernetes.io/disk-pressure", "node.kubernetes.io/not-ready"]


def test_a_node_with_a_conditions_taint_is_not_opened_by_removing_its_others():
    objects = [node("a", taints=[GPU_TAINT, NOT_READY]), pod("web")]
    p = the_pod(objects)
    assert "remove-taint" not in kinds(p)
    assert_fits(objects, fix_of(p, "add-toleration"))


def test_a_cordoned_node_is_still_uncordoned():
    cordon = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
    objects = [node("a", taints=[cordon, GPU_TAINT], unschedulable=True), pod("web")]
    fix = fix_of(the_pod(objects), "remove-taint")
    assert fix["description"] == ("uncordon node a and remove taint dedicated=gpu:NoSchedule from node a: fits on "
                                  "1 node(s) (a), scheduled on a")


def _containers(obj, *containers, init=()):
    """The pod with containers (name, resources) and init containers (name,
    resources, restartPolicy or None)."""
    obj["spec"]["containers"] = [{"name": n, "image": "nginx", "resources": r} for n, r in containers]
    if init:
        obj["spec"]["initContainers"] = [
            {"name": n, "image": "busybox", "resources": r, **({"restartPolicy": rp} if rp else {})}
            for n, r, rp in init]
    return obj


def test_cut_names_the_container_with_its_own_amounts():
    # The pod asks for 2 cpu (1500m + 500m), 1500m are free: container a
    # goes from 1500m to 1; the pod's total is labelled as such.
    objects = [node("a", cpu="2"), pod("busy", cpu="500m", node_name="a"),
               _containers(pod("web"), ("a", {"requests": {"cpu": "1500m", "memory": "1Gi"}}),
                           ("b", {"requests": {"cpu": "500m", "memory": "1Gi"}}))]
    fix = fix_of(the_pod(objects), "reduce-request")
    assert fix["patch"] == [{"op": "add", "path": "/spec/containers/0/resources/requests",
                             "value": {"cpu": "1", "memory": "1Gi"}}]
    assert fix["description"].startswith("lower the cpu request of container a from 1500m to 1 "
                                          "(pod total 2 -> 1500m; the largest that fits, in steps of 10m)")
    assert_fits(objects, fix)


def test_cut_spread_over_containers_when_one_is_not_enough():
    # 500m free for two containers of 1 cpu: one alone cannot give up 1500m.
    objects = [node("a", cpu="2"), pod("busy", cpu="1500m", node_name="a"),
               _containers(pod("web"), ("a", {"requests": {"cpu": "1", "memory": "1Gi"}}),
                           ("b", {"requests": {"cpu": "1", "memory": "1Gi"}}))]
    fix = fix_of(the_pod(objects), "reduce-request")
    assert fix["patch"] == [
        {"op": "add", "path": "/spec/containers/0/resources/requests", "value": {"cpu": "250m", "memory": "1Gi"}},
        {"op": "add", "path": "/spec/containers/1/resources/requests", "value": {"cpu": "250m", "memory": "1Gi"}}]
    assert fix["description"].startswith("lower the cpu request of container a from 1 to 250m and of container b "
                                          "from 1 to 250m (pod total 2 -> 500m;")
    assert_fits(objects, fix)


def test_init_container_that_sets_the_request_is_lowered():
    # The init container's 3 cpu is the pod's request (its containers ask for
    # 1200m); 1500m are free.
    objects = [node("a", cpu="2"), pod("busy", cpu="500m", node_name="a"),
               _containers(pod("web"), ("a", {"limits": {"cpu": "1", "memory": "1Gi"}}),
                           ("b", {"requests": {"cpu": "200m", "memory": "1Gi"}}),
                           init=[("init", {"requests": {"cpu": "3", "memory": "100Mi"}}, None)])]
    fix = fix_of(the_pod(objects), "reduce-request")
    assert fix["patch"] == [{"op": "add", "path": "/spec/initContainers/0/resources/requests",
                             "value": {"cpu": "1500m", "memory": "100Mi"}}]
    assert fix["description"].startswith("lower the cpu request from 3 to 1500m (init container init;")
    assert_fits(objects, fix)


def test_init_container_after_a_sidecar_keeps_room_for_it():
    # The sidecar (restartPolicy Always) runs beside the init container after
    # it: 500m + 2 cpu is the pod's request; with 1500m free the init
    # container may have 1 cpu.
    objects = [node("a", cpu="2"), pod("busy", cpu="500m", node_name="a"),
               _containers(pod("web"), ("a", {"requests": {"cpu": "500m", "memory": "1Gi"}}),
                           init=[("proxy", {"requests": {"cpu": "500m", "memory": "64Mi"}}, "Always"),
                                 ("migrate", {"requests": {"cpu": "2", "memory": "64Mi"}}, None)])]
    fix = fix_of(the_pod(objects), "reduce-request")
    assert fix["patch"] == [{"op": "add", "path": "/spec/initContainers/1/resources/requests",
                             "value": {"cpu": "1", "memory": "64Mi"}}]
    assert fix["description"].startswith("lower the cpu request of init container migrate from 2 to 1 "
                                          "(pod total 2500m -> 1500m;")
    assert_fits(objects, fix)
