"""explain judges a workload of a POD_FILE as a whole: its replicas placed
one after another with simulate's step, each with the ones before it, and
the cluster as it was for every pod and workload after it. fixtures/workloads
(its README's table), the real kube-scheduler (the oracle) on the same
state, folding, CI formats, --fix on a workload (every replica placed again),
and simulate --fix."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from fixhelp import node, pod
from kschedx.cli.main import main
from kschedx.commands import explain as explaining
from kschedx.commands import simulate as simulating
from kschedx.commands.load import load_workload
from kschedx.fixes.jsonpatch import apply_patch

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "fixtures" / "workloads"
CLUSTER = HERE / "cluster.yaml"
WEB = HERE / "manifests" / "web-spread.yaml"
SELECTOR = HERE / "manifests" / "batch-selector.yaml"
GPU = HERE / "manifests" / "gpu-train.yaml"
ANTI = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}


def _explain(snapshot, pods, *, fix=False, jobs=1, reuse=True, tie_break="name") -> dict:
    from kschedx.result.sink import DocumentSink

    workload = load_workload([str(snapshot)], [str(p) for p in pods], keep_raw=fix)
    sink = DocumentSink()
    explaining.explain_into(sink, workload, tie_break=tie_break, fix=fix, jobs=jobs, reuse=reuse)
    return sink.doc


def _cli(*args) -> tuple[int, str]:
    res = CliRunner().invoke(main, [str(a) for a in args])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return res.exit_code, res.output


def deployment(replicas=6, name="web", ns="shop", cpu="500m", affinity=ANTI, **spec) -> dict:
    """A Deployment of `name`'s pods, by default at most one per node."""
    template_spec = {"containers": [{"name": "web", "image": "nginx",
                                     "resources": {"requests": {"cpu": cpu, "memory": "128Mi"}}}], **spec}
    if affinity:
        template_spec["affinity"] = json.loads(json.dumps(affinity).replace('"app": "web"', f'"app": "{name}"'))
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": template_spec}}}


def _write(tmp_path, name, objects) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(objects if isinstance(objects, list) else [objects]))
    return path


# -- the Deployment ------------------------------------------------------------------
def test_anti_affinity_deployment_places_five_replicas_and_not_the_sixth():
    doc = _explain(CLUSTER, [WEB])
    pods = doc["pods"]
    assert [p["workload"]["replica"] for p in pods] == [1, 2, 3, 4, 5, 6]
    assert {p["workload"]["name"] for p in pods} == {"web"} and pods[0]["workload"]["replicas"] == 6
    placed = [p["placedNode"] for p in pods[:5]]
    assert all(p["status"] == "Scheduled" for p in pods[:5])
    assert sorted(placed) == ["worker-1", "worker-2", "worker-3", "worker-4", "worker-5"]  # 5 different nodes
    sixth = pods[5]
    assert sixth["status"] == "Unschedulable" and sixth["placedNode"] is None
    assert sixth["message"].startswith("0/6 nodes are available: 1 node(s) had untolerated taint(s), "
                                       "5 node(s) didn't match pod anti-affinity rules.")
    (w,) = doc["workloads"]
    assert (w["kind"], w["namespace"], w["name"], w["replicas"], w["placed"], w["fits"]) == \
        ("Deployment", "shop", "web", 6, 5, False)
    assert w["firstUnplaced"] == {"replica": 6, "pod": sixth["pod"], "status": "Unschedulable",
                                  "message": sixth["message"]}
    assert w["source"] == {"file": str(WEB), "line": 7}


def test_anti_affinity_deployment_exit_code_and_human_report():
    code, out = _cli("explain", WEB, "--snapshot", CLUSTER, "--tie-break", "name")
    assert code == 1
    assert "Deployment shop/web: 6 replicas, placed one after another as its controller creates them" in out
    assert "replica 1 of 6" in out
    assert "  replicas 2-5  ✓ Scheduled → " in out  # the run of the same answer, folded
    assert "✗ Unschedulable   replica 6 of 6" in out
    assert "Deployment shop/web: ✗ 5 of 6 replicas placed; the first not placed: replica 6 (shop/web-" in out
    assert "1 workload: 0 with every replica placed, Deployment shop/web 5 of 6" in out


def test_the_oracle_places_the_same_replicas_with_the_same_message(tmp_path):
    """The real kube-scheduler, in simulate mode on the same cluster with the
    Deployment's pods pending: the same placements and FailedScheduling text."""
    from tests.oracle import binary_or_skip, run

    binary_or_skip("1.37")  # kschedx's default version
    workload = load_workload([str(CLUSTER)], [str(WEB)])
    pods = _write(tmp_path, "pods.yaml", [pi.pod for pi in workload.pods])
    oracle = run("1.37", [CLUSTER, pods], "simulate")
    ours = _explain(CLUSTER, [WEB])
    assert [(p["pod"], p["status"], p["placedNode"], p["message"]) for p in ours["pods"]] == \
        [(p["pod"], p["status"], p.get("placedNode"), p.get("message")) for p in oracle["pods"]]


@pytest.mark.parametrize("output", ["junit", "github", "tap"])
def test_ci_formats_give_one_case_per_workload(output):
    code, out = _cli("explain", WEB, SELECTOR, "--snapshot", CLUSTER, "--tie-break", "name", "-o", output)
    assert code == 1
    if output == "junit":
        import xml.etree.ElementTree as ET

        from test_render_ci import _validate

        _validate(out)
        cases = ET.fromstring(out).findall("testsuite/testcase")
        assert [c.get("name") for c in cases] == ["Deployment shop/web", "batch/report-7f2k9"]
        failure = cases[0].find("failure")
        assert failure.get("message").startswith("5 of 6 replica(s) placed; replica 6 (shop/web-")
        assert "didn't match pod anti-affinity rules" in failure.get("message")
    elif output == "github":
        errors = [line for line in out.splitlines() if line.startswith("::error")]
        assert len(errors) == 2
        assert errors[0].startswith(f"::error file={WEB},line=7,title=Deployment shop/web places 5 of 6 replica(s)::")
        assert out.splitlines()[-1].endswith(": 1 of 1 workload(s) cannot place every replica; "
                                             "1 of 1 pod(s) cannot be scheduled")
    else:
        lines = out.splitlines()
        assert lines[1] == "1..2"
        assert "not ok 1 - Deployment shop/web: places 5 of 6 replica(s)" in lines


def test_a_workload_that_fits_passes_as_one_case(tmp_path):
    objects = [node(f"n{i}") for i in range(3)]
    snap = _write(tmp_path, "c.yaml", objects)
    dep = _write(tmp_path, "d.yaml", deployment(replicas=3))
    code, out = _cli("explain", dep, "--snapshot", snap, "--tie-break", "name", "-o", "tap")
    assert code == 0
    assert "ok 1 - Deployment shop/web: all 3 replica(s) placed, on 3 node(s)" in out.splitlines()


# -- pods alone, workloads one after another, and what comes after them -------------------
def test_pods_given_alone_are_judged_independently(tmp_path):
    snap = _write(tmp_path, "c.yaml", [node("only")])
    loose = [pod(f"w{i}", labels={"app": "web"}, affinity=copy.deepcopy(ANTI), ns="shop") for i in range(2)]
    alone = _explain(snap, [_write(tmp_path, "pods.yaml", loose)])
    assert [p["status"] for p in alone["pods"]] == ["Scheduled", "Scheduled"]
    assert "workloads" not in alone and all("workload" not in p for p in alone["pods"])
    together = _explain(snap, [_write(tmp_path, "d.yaml", deployment(replicas=2))])
    assert [p["status"] for p in together["pods"]] == ["Scheduled", "Unschedulable"]


def test_each_workload_and_pod_after_a_workload_meet_the_cluster_as_it_was(tmp_path):
    snap = _write(tmp_path, "c.yaml", [node("a", cpu="2"), node("b", cpu="2")])
    first = deployment(replicas=2, name="big", cpu="1500m", affinity=None)
    second = deployment(replicas=2, name="other", cpu="1500m", affinity=None)
    files = [_write(tmp_path, "1.yaml", first), _write(tmp_path, "2.yaml", pod("alone", cpu="1500m", ns="shop")),
             _write(tmp_path, "3.yaml", second)]
    doc = _explain(snap, files)
    by_name = {}
    for p in doc["pods"]:
        by_name.setdefault(p.get("workload", {}).get("name", "alone"), []).append(p)
    # Each Deployment fills both nodes; neither it nor the pod sees the other's replicas.
    assert [p["placedNode"] for p in by_name["big"]] == ["a", "b"]
    assert [p["placedNode"] for p in by_name["other"]] == ["a", "b"]
    assert by_name["alone"][0]["status"] == "Scheduled"
    alone = _explain(snap, [files[1]])["pods"][0]
    assert by_name["alone"][0] == alone


def test_replicas_after_the_first_not_placed_take_its_result_and_fold(tmp_path, monkeypatch):
    from kschedx.framework.dispatch import Schedulers

    snap = _write(tmp_path, "c.yaml", [node(f"n{i}") for i in range(3)])
    dep = _write(tmp_path, "d.yaml", deployment(replicas=6))
    cycles = []
    real = Schedulers.schedule
    monkeypatch.setattr(Schedulers, "schedule", lambda self, pi: cycles.append(pi.name) or real(self, pi))
    doc = _explain(snap, [dep])
    assert [p["placedNode"] is not None for p in doc["pods"]] == [True] * 3 + [False] * 3
    # Replica 4 is not placed and changes nothing: 5 and 6 take its result.
    assert len(cycles) == 4
    messages = {p["message"] for p in doc["pods"][3:]}
    assert len(messages) == 1
    assert [p["pod"] for p in doc["pods"][3:]] == [p["pod"] for p in doc["pods"][3:]]
    assert len({p["pod"] for p in doc["pods"]}) == 6
    monkeypatch.setattr(Schedulers, "schedule", real)
    assert _explain(snap, [dep], reuse=False)["pods"] == doc["pods"]
    code, out = _cli("explain", dep, "--snapshot", snap, "--tie-break", "name")
    assert "  replicas 5-6  ✗ Unschedulable   the same answer as replica 4" in out
    assert "  replicas 2-3  ✓ Scheduled → n1, n2   each with the replicas before it in place" in out


def test_wide_shows_every_replica(tmp_path):
    snap = _write(tmp_path, "c.yaml", [node(f"n{i}") for i in range(3)])
    dep = _write(tmp_path, "d.yaml", deployment(replicas=4))
    code, out = _cli("explain", dep, "--snapshot", snap, "--tie-break", "name", "-o", "wide")
    assert code == 1
    assert "replicas 2-" not in out and out.count("replica 3 of 4") == 1


def test_jobs_give_the_same_document(tmp_path):
    snap = _write(tmp_path, "c.yaml", [node(f"n{i}") for i in range(3)])
    loose = [pod(f"p{i}", ns="shop") for i in range(4)]
    for p in loose:
        del p["metadata"]["creationTimestamp"]  # queue order: as the files are given
    files = [_write(tmp_path, f"p{i}.yaml", p) for i, p in enumerate(loose)]
    files.insert(2, _write(tmp_path, "d.yaml", deployment(replicas=4)))
    one = _explain(snap, files)
    assert [p.get("workload", {}).get("replica") for p in one["pods"]] == [None, None, 1, 2, 3, 4, None, None]
    assert _explain(snap, files, jobs=2) == one


def test_replicas_placed_by_preemption_as_simulate_places_them(tmp_path):
    from fixhelp import priority_class

    objects = [priority_class("high", 1000), node("a", cpu="2"), node("b", cpu="2"),
               pod("low-a", cpu="1500m", node_name="a", ns="shop"), pod("low-b", cpu="1500m", node_name="b", ns="shop")]
    snap = _write(tmp_path, "c.yaml", objects)
    dep = _write(tmp_path, "d.yaml", deployment(replicas=3, cpu="1", affinity=None, priorityClassName="high"))
    doc = _explain(snap, [dep])
    sim = simulating.simulate(load_workload([str(snap)], [str(dep)]), tie_break="name")
    assert [(p["status"], p["placedNode"]) for p in doc["pods"]] == \
        [(p["status"], p["placedNode"]) for p in sim["pods"]]
    # 1 preempts low-a, 2 fits beside it, 3 preempts low-b.
    assert [p["placedNode"] for p in doc["pods"]] == ["a", "a", "b"]
    assert [p["status"] for p in doc["pods"]] == ["Unschedulable", "Scheduled", "Unschedulable"]
    (w,) = doc["workloads"]
    assert w["placedByPreemption"] == 2 and w["victims"] == 2 and w["placed"] == 3 and w["fits"]
    code, out = _cli("explain", dep, "--snapshot", snap, "--tie-break", "name")
    assert code == 0 and "placed on a by preemption" in out


def test_statefulset_replicas_in_ordinal_order(tmp_path):
    sts = deployment(replicas=3, name="db")
    sts["kind"] = "StatefulSet"
    sts["spec"]["serviceName"] = "db"
    snap = _write(tmp_path, "c.yaml", [node("a"), node("b")])
    doc = _explain(snap, [_write(tmp_path, "s.yaml", sts)])
    assert [p["pod"] for p in doc["pods"]] == ["shop/db-0", "shop/db-1", "shop/db-2"]
    assert [p["placedNode"] is not None for p in doc["pods"]] == [True, True, False]


def test_a_daemonset_pod_per_node_each_on_its_node(tmp_path):
    ds = deployment(name="agent", affinity=None)
    ds["kind"] = "DaemonSet"
    del ds["spec"]["replicas"]
    snap = _write(tmp_path, "c.yaml", [node("a"), node("b", cpu="100m")])
    doc = _explain(snap, [_write(tmp_path, "ds.yaml", ds)])
    assert [(p["workload"]["replica"], p["placedNode"]) for p in doc["pods"]] == [(1, "a"), (2, None)]


def test_the_trial_leaves_the_snapshot_as_it_was():
    """Every golden case: its pending pods placed (preemptions and Reserve
    included) in a trial, then every pending pod explained again: the same
    documents as before the trial."""
    from golden_compare import GOLDEN, case_names
    from kschedx.framework.dispatch import new_schedulers
    from kschedx.framework.simulation import Simulation
    from kschedx.sources.fixtures import read_objects

    for name in case_names():
        objects = [(o, origin) for o, origin in read_objects([str(GOLDEN / "cases" / f"{name}.yaml")])]
        workload = load_workload((), cluster_objects=objects)
        scheds = new_schedulers(workload.cluster, tie_break="name", seed=None)
        before = [json.dumps(_doc(scheds, pi), sort_keys=True, default=str) for pi in workload.pods]
        sim = Simulation(scheds)
        with sim.trial():
            for pi in workload.pods:
                sim.step(pi)
        after = [json.dumps(_doc(scheds, pi), sort_keys=True, default=str) for pi in workload.pods]
        assert after == before, name


def test_a_trial_keeps_no_replicas_result():
    """A trial keeps what it needs to undo a step, not the step's result
    (every node's verdicts and scores): a workload's replicas would otherwise
    hold megabytes each on a large cluster until the last one is placed."""
    import gc
    import weakref

    from kschedx.framework.dispatch import new_schedulers
    from kschedx.framework.simulation import Simulation

    workload = load_workload([str(CLUSTER)], [str(WEB)])
    scheds = new_schedulers(workload.cluster, tie_break="name", seed=None)
    sim = Simulation(scheds)
    with sim.trial():
        refs = []
        for pi in workload.pods:
            r = sim.step(pi)
            refs.append((weakref.ref(r), r.placed_node))
            del r
        gc.collect()
        assert [placed is not None for _, placed in refs] == [True] * 5 + [False]
        assert [ref() for ref, _ in refs] == [None] * 6


def _doc(scheds, pi) -> dict:
    from kschedx.result.document import pod_dict

    scheds.sampling.next_start_node_index = 0
    return pod_dict(scheds.schedule(pi), "explain")


# -- fixes: minimal and safe -----------------------------------------------------------------
def _replay(tmp_path, snapshot, pods, fix) -> dict:
    """The fix's changes made to the objects as written, then explain again."""
    cluster = [o for o, _ in _read(snapshot)]
    given = [o for p in pods for o, _ in _read(p)]
    for change in fix["changes"]:
        t = change["target"]
        if change["action"] == "create":
            cluster.append(apply_patch(None, change["patch"]))
            continue
        for objs in (cluster, given):
            for i, o in enumerate(objs):
                meta = o.get("metadata") or {}
                if o["kind"] == t["kind"] and meta.get("name") == t["name"]:
                    objs[i] = apply_patch(o, change["patch"])
    return _explain(_write(tmp_path, "fixed-cluster.yaml", cluster), [_write(tmp_path, "fixed.yaml", given)])


def _read(path):
    from kschedx.sources.fixtures import read_objects

    return read_objects([str(path)])


def test_the_deployments_fixes_each_place_every_replica(tmp_path):
    code, out = _cli("explain", WEB, "--snapshot", CLUSTER, "--tie-break", "name", "--fix", "-o", "json")
    assert code == 1
    doc = json.loads(out)
    sixth = doc["pods"][5]
    assert all("fixes" not in p for p in doc["pods"][:5])
    kinds = [f["kind"] for f in sixth["fixes"]]
    assert kinds == ["add-node", "relax-pod-affinity", "add-toleration", "remove-taint"]
    assert [f["widening"] for f in sixth["fixes"]] == ["none", "softer", "reserved", "others"]
    assert sixth["fixSearch"]["sequences"] >= 4
    for fix in sixth["fixes"]:
        assert fix["verified"]["replicas"] == fix["verified"]["placed"] == 6
        after = _replay(tmp_path, CLUSTER, [WEB], fix)
        assert after["workloads"][0]["fits"] and after["workloads"][0]["placed"] == 6, fix["description"]
    anti = sixth["fixes"][1]
    assert anti["target"] == {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "shop", "name": "web"}
    assert "preferred (weight 100)" in anti["description"]
    add = sixth["fixes"][0]
    assert add["description"].startswith("add a node worker-1-copy shaped like worker-1")
    assert "all 6 replicas placed" in add["description"]


def test_add_node_says_how_many_nodes(tmp_path):
    snap = _write(tmp_path, "c.yaml", [node("a", cpu="2"), node("b", cpu="2")])
    dep = _write(tmp_path, "d.yaml", deployment(replicas=8, cpu="900m", affinity=None))
    doc = _explain(snap, [dep], fix=True)
    first = next(p for p in doc["pods"] if "fixes" in p)
    assert first["workload"]["replica"] == 5
    (add,) = [f for f in first["fixes"] if f["kind"] == "add-node"]
    # 4 replicas left, 2 on each new node like a: 2 nodes, and 1 is not enough.
    assert add["description"].startswith("add 2 nodes a-copy, a-copy-2 shaped like a")
    assert add["objects"] == 2 and [c["action"] for c in add["changes"]] == ["create", "create"]
    after = _replay(tmp_path, snap, [dep], add)
    assert after["workloads"][0]["placed"] == 8


def test_the_selector_pods_first_fix_drops_both_entries_and_tolerates_nothing(tmp_path):
    doc = _explain(CLUSTER, [SELECTOR], fix=True)
    (p,) = doc["pods"]
    first = p["fixes"][0]
    assert first["kind"] == "relax-node-affinity"
    assert first["patch"] == [{"op": "remove", "path": "/spec/nodeSelector/node.kubernetes.io~1instance-type"},
                              {"op": "remove", "path": "/spec/nodeSelector/workload"}]
    assert not any("tolerations" in op["path"] for f in p["fixes"] for op in f["patch"])
    assert first["widening"] == "placement" and [e["kind"] for e in first["widens"]] == ["selector", "selector"]
    assert first["verified"]["feasibleNodes"] == 5
    after = _replay(tmp_path, CLUSTER, [SELECTOR], first)
    assert after["pods"][0]["status"] == "Scheduled"


def test_the_gpu_pod_keeps_its_gpus(tmp_path):
    doc = _explain(CLUSTER, [GPU], fix=True)
    (p,) = doc["pods"]
    kinds = [f["kind"] for f in p["fixes"]]
    assert kinds == ["add-node", "reduce-request"]  # keeping the GPUs ranks before dropping them
    add, drop = p["fixes"]
    assert "with nvidia.com/gpu 2 (no node advertises nvidia.com/gpu)" in add["description"]
    new = add["patch"][0]["value"]
    assert new["status"]["allocatable"]["nvidia.com/gpu"] == "2"
    assert add["widening"] == "none" and drop["widening"] == "gives-up"
    after = _replay(tmp_path, CLUSTER, [GPU], add)
    (placed,) = after["pods"]
    assert placed["status"] == "Scheduled" and placed["requests"]["nvidia.com/gpu"] == "2"


def test_a_join_without_a_part_it_does_not_need_is_proposed_instead():
    """The selector pod's old fix (tolerate infra's taint and drop both
    entries, for node infra-1) made minimal: without the toleration it
    verifies, on the workers, as relax-node-affinity."""
    from kschedx.fixes import combine, node_affinity, tolerations
    from kschedx.fixes.blockers import Blockers
    from kschedx.fixes.parts import Context
    from kschedx.fixes.search import Search
    from kschedx.fixes.verify import Verifier
    from kschedx.framework.dispatch import new_schedulers
    from kschedx.commands.document import pod_document

    workload = load_workload([str(CLUSTER)], [str(SELECTOR)], keep_raw=True)
    scheds = new_schedulers(workload.cluster, tie_break="name", seed=None)
    (pi,) = workload.pods
    doc = pod_document(scheds.schedule(pi), "explain", workload)
    search = Search(Verifier(scheds.primary, workload.raw_pods[pi.key], pi), Blockers(doc), doc)
    ctx = Context.of(search)
    parts = tolerations.parts(ctx, "infra-1") + node_affinity.parts(ctx, "infra-1")
    cand = combine.join(parts, "infra-1")
    fix = search.check(cand, combination=True)
    assert fix is not None and fix.kind == "combined"
    smaller = combine.smallest(search, cand, fix)
    assert smaller.kind == "relax-node-affinity" and smaller.parts is None
    assert [op["path"] for op in smaller.changes[0]["patch"]] == [
        "/spec/nodeSelector/node.kubernetes.io~1instance-type", "/spec/nodeSelector/workload"]


def test_label_node_picks_the_least_loaded_node_that_fits():
    from fixhelp import the_pod

    objects = [node("busy", labels={"disk": "hdd"}), node("idle", labels={"disk": "hdd"}),
               node("full", cpu="1", labels={"disk": "hdd"}),
               pod("x", cpu="3", node_name="busy"), pod("y", cpu="900m", node_name="full"),
               pod("web", cpu="500m", nodeSelector={"tier": "fast"})]
    p = the_pod(objects)
    (label,) = [f for f in p["fixes"] if f["kind"] == "label-node"]
    assert label["target"]["name"] == "idle"


def test_simulate_fix_places_what_the_run_left_unplaced(tmp_path):
    code, out = _cli("simulate", WEB, SELECTOR, GPU, "--snapshot", CLUSTER, "--tie-break", "name", "--fix",
                     "-o", "json")
    assert code == 1
    doc = json.loads(out)
    fixed = {p["pod"]: p for p in doc["pods"] if "fixes" in p}
    web = next(p for p in doc["pods"] if p.get("workload", {}).get("replica") == 6)
    assert set(fixed) == {web["pod"], "batch/report-7f2k9", "ml/train-resnet"}
    assert [f["kind"] for f in fixed["batch/report-7f2k9"]["fixes"]] == ["relax-node-affinity"]
    assert fixed["batch/report-7f2k9"]["fixes"][0]["verified"]["othersKeptPlaced"] == 5
    assert fixed["ml/train-resnet"]["fixes"][0]["kind"] == "add-node"
    for fix in fixed[web["pod"]]["fixes"]:
        assert fix["verified"]["placed"] == 6
    code, human = _cli("simulate", WEB, "--snapshot", CLUSTER, "--tie-break", "name", "--fix")
    assert "Deployment shop/web (replica 6 of 6, " in human and "1. [add-node] add a node worker-1-copy" in human
    # The run's own placements are as without --fix.
    plain = simulating.simulate(load_workload([str(CLUSTER)], [str(WEB), str(SELECTOR), str(GPU)]), tie_break="name")
    assert [(p["pod"], p["placedNode"]) for p in plain["pods"]] == [(p["pod"], p["placedNode"]) for p in doc["pods"]]


def test_add_node_counts_the_nodes_anti_affinity_needs(tmp_path):
    snap = _write(tmp_path, "c.yaml", [node(f"n{i}") for i in range(3)])
    dep = _write(tmp_path, "d.yaml", deployment(replicas=12))
    doc = _explain(snap, [dep], fix=True)
    first = next(p for p in doc["pods"] if "fixes" in p)
    (add,) = [f for f in first["fixes"] if f["kind"] == "add-node"]
    # One replica per node: 9 more nodes, found without counting up to them.
    assert add["objects"] == 9 and add["description"].startswith("add 9 nodes n0-copy, n0-copy-2, n0-copy-3, ...")
    assert first["fixSearch"]["sequences"] <= 8
