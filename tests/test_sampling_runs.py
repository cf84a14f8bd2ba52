"""`--sampling upstream` and the `sampling` field on clusters of several
hundred nodes, against a reference written here from schedule_one.go's
algorithm (numFeasibleNodesToFind, the node tree's zone interleaving, the
search from nextStartNodeIndex that stops at the (k+1)-th feasible node, the
index carried to the next cycle), independent of kschedx's own sampling code.

The profile scores with NodeResourcesFit (LeastAllocated) only, so the
reference can score nodes itself: (free cpu % + free memory %) / 2."""

from __future__ import annotations

import random

import pytest
import yaml
from click.testing import CliRunner

from kschedx.commands.explain import explain
from kschedx.commands.load import load_workload
from kschedx.commands.simulate import simulate
from kschedx.cli.main import main
from kschedx.framework.configured import parse_config

ZONE = "topology.kubernetes.io/zone"
CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: {global_pct}
profiles:
- schedulerName: default-scheduler
{profile_pct}  plugins:
    score:
      disabled: [{{name: "*"}}]
      enabled: [{{name: NodeResourcesFit}}]
"""
GI = 1024 ** 3


def make_cluster(seed: int, num_nodes: int, num_pods: int):
    """Nodes in a shuffled order over four zones (and some without a zone),
    one in five tainted; pods of 1-3 CPUs. Returns (objects, node facts)."""
    rng = random.Random(seed)
    names = [f"node-{i:03d}" for i in range(num_nodes)]
    rng.shuffle(names)
    objects, nodes = [], []
    for name in names:
        zone = rng.choice(["us-a", "us-b", "us-c", "eu-a", None])
        cpu = rng.randint(2, 16)
        tainted = rng.random() < 0.2
        node = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {ZONE: zone} if zone else {}},
                "status": {"allocatable": {"cpu": str(cpu), "memory": "16Gi", "pods": "110"}}}
        if tainted:
            node["spec"] = {"taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]}
        objects.append(node)
        nodes.append({"name": name, "zone": zone or "", "cpu": cpu * 1000, "memory": 16 * GI, "tainted": tainted,
                      "used_cpu": 0, "used_memory": 0})
    pods = []
    for j in range(num_pods):
        cpu = rng.randint(1, 3)
        objects.append({"apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": f"p{j:02d}", "namespace": "default", "uid": f"uid-{j}",
                                     "creationTimestamp": f"2024-01-01T00:{j // 60:02d}:{j % 60:02d}Z"},
                        "spec": {"containers": [{"name": "c", "image": "app",
                                                 "resources": {"requests": {"cpu": str(cpu), "memory": "1Gi"}}}]}})
        pods.append({"name": f"default/p{j:02d}", "cpu": cpu * 1000, "memory": GI})
    return objects, nodes, pods


# -- the reference -------------------------------------------------------------
def ref_num_to_find(pct: int, n: int) -> int:
    if n < 100:
        return n
    if pct == 0:
        pct = max(50 - n // 125, 5)
    return max(n * pct // 100, 100)


def ref_tree_order(nodes):
    zones: dict[str, list] = {}
    for nd in nodes:
        zones.setdefault(nd["zone"], []).append(nd)
    out, i = [], 0
    while len(out) < len(nodes):
        for members in zones.values():
            if i < len(members):
                out.append(members[i])
        i += 1
    return out


def ref_fits(nd, pod) -> bool:
    return (not nd["tainted"] and nd["used_cpu"] + pod["cpu"] <= nd["cpu"]
            and nd["used_memory"] + pod["memory"] <= nd["memory"])


def ref_score(nd, pod) -> int:
    def free(req, cap):
        return (cap - req) * 100 // cap
    return (free(nd["used_cpu"] + pod["cpu"], nd["cpu"]) + free(nd["used_memory"] + pod["memory"], nd["memory"])) // 2


def ref_cycle(order, pod, start: int, k: int):
    """(kept feasible nodes, processed count) of one search from `start`."""
    found, failed = [], 0
    n = len(order)
    for i in range(n):
        nd = order[(start + i) % n]
        if ref_fits(nd, pod):
            if len(found) == k:
                break
            found.append(nd)
        else:
            failed += 1
    return found, len(found) + failed


def ref_pick(found, pod):
    return min(found, key=lambda nd: (-ref_score(nd, pod), nd["name"]))


def write(tmp_path, objects, config_text):
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(objects))
    return load_workload([str(tmp_path / "cluster.yaml")]), parse_config(config_text, "sched.yaml")


@pytest.mark.parametrize("seed, num_nodes, global_pct, profile_pct", [
    (1, 400, 0, None),     # adaptive: 50 - 400/125 = 47% of 400
    (2, 600, 100, 30),     # the profile's 30% beats the global 100%
    (3, 250, 20, None),    # 20% of 250 is 50: raised to 100
])
def test_simulate_upstream_follows_the_reference(tmp_path, seed, num_nodes, global_pct, profile_pct):
    objects, nodes, pods = make_cluster(seed, num_nodes, 40)
    pct_line = f"  percentageOfNodesToScore: {profile_pct}\n" if profile_pct is not None else ""
    workload, config = write(tmp_path, objects, CONFIG.format(global_pct=global_pct, profile_pct=pct_line))
    doc = simulate(workload, tie_break="name", config=config, sampling="upstream")

    order = ref_tree_order(nodes)
    assert [nd["name"] for nd in order] != [nd["name"] for nd in nodes]  # zones do interleave
    k = ref_num_to_find(profile_pct if profile_pct is not None else global_pct, num_nodes)
    start = 0
    by_pod = {p["pod"]: p for p in doc["pods"]}
    for pod in pods:
        got = by_pod[pod["name"]]
        found, processed = ref_cycle(order, pod, start, k)
        s = got["sampling"]
        assert (s["numFeasibleNodesToFind"], s["startIndex"], s["processedNodes"], s["foundNodes"]) == \
            (k, start, processed, len(found)), pod["name"]
        assert s["nextStartIndex"] == (start + processed) % num_nodes
        scored = sorted(n["name"] for n in got["nodes"] if n.get("scores") is not None)
        assert scored == sorted(nd["name"] for nd in found)
        best = ref_pick(found, pod)
        assert got["placedNode"] == best["name"], pod["name"]
        best["used_cpu"] += pod["cpu"]
        best["used_memory"] += pod["memory"]
        start = (start + processed) % num_nodes


def test_all_mode_reports_what_upstream_could_pick(tmp_path):
    """--sampling all places on the best of all nodes, and names every node
    that is the best of some window of k consecutive feasible nodes."""
    objects, nodes, pods = make_cluster(4, 300, 12)
    workload, config = write(tmp_path, objects, CONFIG.format(global_pct=0, profile_pct=""))
    doc = simulate(workload, tie_break="name", config=config)
    order = ref_tree_order(nodes)
    k = ref_num_to_find(0, 300)
    start = 0
    for pod, got in zip(pods, doc["pods"]):
        feasible = [nd for nd in order if ref_fits(nd, pod)]
        best = ref_pick(feasible, pod)
        assert got["placedNode"] == best["name"]
        s = got["sampling"]
        found, processed = ref_cycle(order, pod, start, k)
        assert (s["mode"], s["startIndex"], s["processedNodes"], s["feasibleNodes"]) == \
            ("all", start, processed, len(feasible))
        top = max(ref_score(nd, pod) for nd in found)
        assert s["startWindowBest"] == sorted(nd["name"] for nd in found if ref_score(nd, pod) == top)
        could = set()
        for first in range(len(feasible)):
            window = [feasible[(first + j) % len(feasible)] for j in range(k)]
            w_top = max(ref_score(nd, pod) for nd in window)
            could.update(nd["name"] for nd in window if ref_score(nd, pod) == w_top)
        assert s["couldBeMissed"] is (len(feasible) > k)
        assert s["upstreamCouldPick"] == sorted(could)
        best["used_cpu"] += pod["cpu"]
        best["used_memory"] += pod["memory"]
        start = (start + processed) % 300


def test_explain_starts_every_pod_at_index_zero(tmp_path):
    objects, nodes, pods = make_cluster(5, 200, 5)
    workload, config = write(tmp_path, objects, CONFIG.format(global_pct=0, profile_pct=""))
    doc = explain(workload, tie_break="name", config=config, sampling="upstream")
    order = ref_tree_order(nodes)
    for pod, got in zip(pods, doc["pods"]):
        found, processed = ref_cycle(order, pod, 0, 100)
        assert got["sampling"]["startIndex"] == 0
        assert got["sampling"]["processedNodes"] == processed
        assert got["selectedNode"] == ref_pick(found, pod)["name"]


def test_small_cluster_has_no_sampling_field(tmp_path):
    objects, _, _ = make_cluster(6, 40, 3)
    workload, config = write(tmp_path, objects, CONFIG.format(global_pct=0, profile_pct=""))
    for mode in ("all", "upstream"):
        doc = simulate(workload, tie_break="name", config=config, sampling=mode)
        assert all("sampling" not in p for p in doc["pods"])


def test_without_score_plugins_one_feasible_node_is_enough(tmp_path):
    """findNodesThatPassFilters: nothing scores, so k = 1 even on 5 nodes;
    the start index then moves the pods round robin over the nodes."""
    names = ["c", "a", "e", "b", "d"]
    objects = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n},
                "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "110"}}} for n in names]
    objects += [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{j}", "namespace": "default",
                 "creationTimestamp": f"2024-01-01T00:00:0{j}Z"},
                 "spec": {"containers": [{"name": "c", "image": "x"}]}} for j in range(7)]
    config = CONFIG.format(global_pct=0, profile_pct="").replace("      enabled: [{name: NodeResourcesFit}]\n", "")
    workload, cfg = write(tmp_path, objects, config)
    doc = simulate(workload, tie_break="name", config=cfg, sampling="upstream")
    assert [p["placedNode"] for p in doc["pods"]] == ["c", "a", "e", "b", "d", "c", "a"]
    assert [p["sampling"]["startIndex"] for p in doc["pods"]] == [0, 1, 2, 3, 4, 0, 1]
    assert all(p["sampling"]["numFeasibleNodesToFind"] == 1 for p in doc["pods"])


def test_fitting_nominated_node_searches_nothing(tmp_path):
    """A pod whose nominated node fits is placed there without a search: no
    sampling field, and the next pod starts where this one would have."""
    objects, nodes, pods = make_cluster(7, 150, 3)
    free = next(nd for nd in ref_tree_order(nodes) if not nd["tainted"])
    pod_objs = [o for o in objects if o["kind"] == "Pod"]
    pod_objs[0]["status"] = {"nominatedNodeName": free["name"]}
    workload, config = write(tmp_path, objects, CONFIG.format(global_pct=0, profile_pct=""))
    doc = simulate(workload, tie_break="name", config=config, sampling="upstream")
    first, second = doc["pods"][0], doc["pods"][1]
    assert first["placedNode"] == free["name"] and "sampling" not in first
    assert second["sampling"]["startIndex"] == 0


def test_cli_flag_and_human_line(tmp_path):
    objects, _, _ = make_cluster(8, 220, 2)
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(objects))
    runner = CliRunner()
    r = runner.invoke(main, ["explain", "--snapshot", str(tmp_path / "cluster.yaml"), "--tie-break", "name"])
    assert r.exit_code == 0, r.output
    assert "sampling: kube-scheduler stops at 107 feasible nodes of 220 (percentageOfNodesToScore 0 = adaptive)" \
        in r.output
    r = runner.invoke(main, ["explain", "--snapshot", str(tmp_path / "cluster.yaml"), "--tie-break", "name",
                             "--sampling", "upstream"])
    assert r.exit_code == 0, r.output
    assert "sampling (upstream): scored the first 107 feasible nodes found from start index 0" in r.output
    r = runner.invoke(main, ["explain", "--snapshot", str(tmp_path / "cluster.yaml"), "--sampling", "some"])
    assert r.exit_code == 2


def test_failed_nominated_node_counts_as_processed(tmp_path):
    """evaluateNominatedNode records the nominated node's failure in the same
    NodeToStatus: when the search then stops before reaching that node, it
    still counts in processedNodes."""
    objects, nodes, pods = make_cluster(9, 300, 2)
    order = ref_tree_order(nodes)
    k = ref_num_to_find(0, 300)
    found, processed = ref_cycle(order, pods[0], 0, k)
    reached = {nd["name"] for nd in order[:processed]}
    tainted = next(nd for nd in reversed(order) if nd["tainted"] and nd["name"] not in reached)
    pod_objs = [o for o in objects if o["kind"] == "Pod"]
    pod_objs[0]["status"] = {"nominatedNodeName": tainted["name"]}
    workload, config = write(tmp_path, objects, CONFIG.format(global_pct=0, profile_pct=""))
    doc = simulate(workload, tie_break="name", config=config, sampling="upstream")
    s = doc["pods"][0]["sampling"]
    assert s["processedNodes"] == processed + 1
    assert doc["pods"][1]["sampling"]["startIndex"] == processed + 1


def test_node_story_and_html_report_say_it(tmp_path):
    objects, nodes, pods = make_cluster(10, 220, 1)
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(objects))
    workload, config = write(tmp_path, objects, CONFIG.format(global_pct=0, profile_pct=""))
    doc = explain(workload, tie_break="name", config=config)
    s = doc["pods"][0]["sampling"]
    feasible = [n["name"] for n in doc["pods"][0]["nodes"] if n["feasible"]]
    never = next(n for n in feasible if n not in s["upstreamCouldPick"])
    runner = CliRunner()
    (tmp_path / "sched.yaml").write_text(CONFIG.format(global_pct=0, profile_pct=""))
    base = ["explain", "--snapshot", str(tmp_path / "cluster.yaml"), "--tie-break", "name",
            "--config", str(tmp_path / "sched.yaml")]
    r = runner.invoke(main, base + ["--node", never])
    assert "kube-scheduler's node sampling never picks it" in r.output
    r = runner.invoke(main, base + ["--node", s["upstreamCouldPick"][0]])
    assert "kube-scheduler's node sampling could pick it" in r.output
    report = tmp_path / "r.html"
    r = runner.invoke(main, base + ["--report", str(report)])
    assert r.exit_code == 0, r.output
    assert "sampling: kube-scheduler stops at" in report.read_text()
    up = explain(workload, tie_break="name", config=config, sampling="upstream")["pods"][0]
    unscored = next(n["name"] for n in up["nodes"] if n["feasible"] and n.get("scores") is None)
    r = runner.invoke(main, base + ["--sampling", "upstream", "--node", unscored])
    assert "not scored: kube-scheduler's search (node sampling)" in r.output


def test_prefilter_result_narrows_the_search(tmp_path):
    """A PreFilterResult (NodeAffinity on metadata.name) makes the search run
    over its nodes only: k from their number, the start index taken modulo
    it, the next one modulo all nodes."""
    objects, nodes, pods = make_cluster(11, 300, 3)
    rng = random.Random(11)
    chosen = sorted(rng.sample([nd["name"] for nd in nodes], 150))
    # One term per name: a field selector's In takes one value only.
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]} for name in chosen]}}}
    for o in objects:
        if o["kind"] == "Pod":
            o["spec"]["affinity"] = affinity
    workload, config = write(tmp_path, objects, CONFIG.format(global_pct=0, profile_pct=""))
    doc = simulate(workload, tie_break="name", config=config, sampling="upstream")
    order = [nd for nd in ref_tree_order(nodes) if nd["name"] in set(chosen)]
    start = 0
    for pod, got in zip(pods, doc["pods"]):
        found, processed = ref_cycle(order, pod, start % 150, 100)
        s = got["sampling"]
        assert (s["nodes"], s["numFeasibleNodesToFind"], s["startIndex"], s["processedNodes"]) == \
            (150, 100, start, processed)
        best = ref_pick(found, pod)
        assert got["placedNode"] == best["name"]
        best["used_cpu"] += pod["cpu"]
        best["used_memory"] += pod["memory"]
        start = (start + processed) % 300


def test_extenders_filter_the_nodes_the_search_kept(tmp_path):
    """findNodesThatPassExtenders runs on the feasible nodes the search kept
    (upstream mode): the extender sees exactly them. In all mode it sees every
    feasible node, and a node it rejects is nobody's pick."""
    from extender_server import ExtenderServer

    objects, nodes, pods = make_cluster(12, 160, 1)
    order = ref_tree_order(nodes)
    found, _ = ref_cycle(order, pods[0], 0, 100)
    rejected = ref_pick(found, pods[0])["name"]  # the node the search would pick
    server = ExtenderServer().start()
    try:
        server.on("filter", lambda args: {"NodeNames": [n for n in args["NodeNames"] if n != rejected],
                                          "FailedNodes": {rejected: "no licence"}})
        text = CONFIG.format(global_pct=0, profile_pct="") + yaml.safe_dump(
            {"extenders": [{"urlPrefix": server.url, "filterVerb": "filter", "nodeCacheCapable": True}]})
        workload, config = write(tmp_path, objects, text)
        up = explain(workload, tie_break="name", config=config, sampling="upstream")["pods"][0]
        [(_, args, _)] = server.requests
        assert sorted(args["NodeNames"]) == sorted(nd["name"] for nd in found)
        assert up["selectedNode"] != rejected
        assert up["selectedNode"] == ref_pick([nd for nd in found if nd["name"] != rejected], pods[0])["name"]
        server.requests.clear()
        doc = explain(workload, tie_break="name", config=config)["pods"][0]
        [(_, args, _)] = server.requests
        assert len(args["NodeNames"]) == doc["sampling"]["feasibleNodes"]
        assert rejected not in doc["sampling"]["upstreamCouldPick"]
        assert rejected not in doc["sampling"]["startWindowBest"]
    finally:
        server.stop()
