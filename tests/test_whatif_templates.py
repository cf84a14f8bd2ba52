"""Node templates on fixtures/whatif/add-nodes/: simulate --add-nodes auto (the
fewest nodes, which template, why not the others), explain --node-template
(which pools could take a pod), --fix adding a template's node; the placements
checked against the real kube-scheduler (the oracle) on the cluster with the
nodes added."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kschedx.commands.explain import explain
from kschedx.commands.load import load_workload
from kschedx.commands.whatif import Change, simulate_changed
from kschedx.result.sink import DocumentSink
from kschedx.sources.node_templates import read_templates
from kschedx.util.errors import InputError
from test_whatif_fixtures import ADD, _after_simulate, node_from_template

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ADD / "templates"


def templates(*names):
    return read_templates([str(TEMPLATES / f"{n}.yaml") for n in names])


def add_nodes(pod_files, names, how="auto"):
    workload = load_workload([str(ADD / "cluster.yaml")], [str(ADD / f) for f in pod_files])
    sink = DocumentSink()
    code = simulate_changed(sink, workload, Change(templates=templates(*names), add_nodes=how), tie_break="name")
    return code, sink.doc


# -- Done means --------------------------------------------------------------------------------------
def test_the_sixth_replica_gets_exactly_one_node_from_the_zone_that_needs_it():
    code, doc = add_nodes(["web.yaml"], ["pool-b", "pool-c"])
    assert code == 0
    add = doc["addNodes"]
    assert add["perTemplate"] == {"pool-c": 1}
    [node] = add["nodes"]
    assert (node["name"], node["template"], len(node["pods"])) == ("pool-c-1", "pool-c", 1)
    assert [d["status"] for d in node["daemonSetPods"]] == ["Scheduled"]
    assert all(p["placedNode"] for p in doc["pods"]) and len(doc["pods"]) == 6
    assert sorted(p["placedNode"] for p in doc["pods"]) == ["a1", "a2", "b1", "b2", "c1", "pool-c-1"]
    [pool_b] = [t for t in add["templates"] if t["template"] == "pool-b"]
    assert pool_b["used"] == 0
    assert [(w["plugin"], w["code"], w["reasons"]) for w in pool_b["why"]] == [
        ("PodTopologySpread", "Unschedulable", ["node(s) didn't match pod topology spread constraints"])]
    assert add["answer"].startswith("add 1 node of pool-c (pool-c-1): all 6 pods are placed; not pool-b: "
                                    "PodTopologySpread: node(s) didn't match pod topology spread constraints")
    assert add["search"]["proven"] is True and add["search"]["lowerBound"] == 1
    assert doc["whatIf"] == {"drain": None, "nodeTemplates": ["pool-b", "pool-c"], "addNodes": "auto"}
    util = {u["node"]: u for u in doc["utilization"]}
    assert util["pool-c-1"]["addedFrom"] == "pool-c" and util["pool-c-1"]["before"]["pods"] == 0


def test_the_gpu_pod_gets_one_gpu_node():
    code, doc = add_nodes(["gpu-job.yaml"], ["pool-gpu", "pool-b"])
    assert code == 0
    assert doc["addNodes"]["perTemplate"] == {"pool-gpu": 1}
    assert doc["addNodes"]["answer"] == ("add 1 node of pool-gpu (pool-gpu-1): the pod is placed; not pool-b: "
                                         "NodeResourcesFit: Insufficient nvidia.com/gpu (ml/train)")
    [p] = doc["pods"]
    assert p["placedNode"] == "pool-gpu-1"


def test_three_pods_each_fitting_one_pool_need_three_nodes():
    code, doc = add_nodes(["web.yaml", "gpu-job.yaml", "dra-job.yaml"], ["pool-b", "pool-c", "pool-gpu",
                                                                          "pool-gpu-dra"])
    assert code == 0
    assert doc["addNodes"]["perTemplate"] == {"pool-c": 1, "pool-gpu": 1, "pool-gpu-dra": 1}
    placed = {p["pod"]: p["placedNode"] for p in doc["pods"]}
    assert (placed["ml/train"], placed["ml/infer"]) == ("pool-gpu-1", "pool-gpu-dra-1")
    assert doc["addNodes"]["search"]["lowerBound"] == 3  # three classes, no template shared


def test_no_template_fits_is_said_and_fails():
    code, doc = add_nodes(["gpu-job.yaml"], ["pool-b", "pool-c"])
    assert code == 1
    add = doc["addNodes"]
    assert add["nodes"] == [] and add["noTemplateFits"][0]["pods"] == ["ml/train"]
    assert "no template fits ml/train (pool-b: NodeResourcesFit: Insufficient nvidia.com/gpu" in add["answer"]


def test_nothing_pending_needs_no_node():
    code, doc = add_nodes(["gpu-job.yaml"], ["pool-gpu"], how={"pool-gpu": 1})
    assert code == 0 and doc["addNodes"]["answer"] == "with 1 of pool-gpu (pool-gpu-1): the pod is placed"
    workload = load_workload([str(ADD / "cluster.yaml")])
    sink = DocumentSink()
    simulate_changed(sink, workload, Change(templates=templates("pool-b"), add_nodes="auto"), tie_break="name")
    assert sink.doc["addNodes"]["answer"] == "no node needs adding: no pod waits for a node"


def test_runs_leave_the_shared_cluster_as_it_was():
    workload = load_workload([str(ADD / "cluster.yaml")], [str(ADD / "web.yaml")])
    before = [n["metadata"]["name"] for n in workload.cluster.nodes]
    simulate_changed(DocumentSink(), workload, Change(templates=templates("pool-b", "pool-c"), add_nodes="auto"),
                     tie_break="name")
    assert [n["metadata"]["name"] for n in workload.cluster.nodes] == before


# -- the oracle: the cluster with the nodes added --------------------------------------------------------
def _oracle(objects) -> dict:
    from tests.oracle import binary_or_skip, run
    import tempfile

    binary_or_skip("1.36")
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        yaml.safe_dump_all(objects, f)
    doc = run("1.36", f.name, "simulate")
    Path(f.name).unlink()
    return {p["pod"]: p["placedNode"] for p in doc["pods"]}


@pytest.mark.parametrize("pod_files, names, added", [
    (["web.yaml"], ["pool-b", "pool-c"], ["pool-c"]),
    (["gpu-job.yaml"], ["pool-gpu", "pool-b"], ["pool-gpu"]),
])
def test_placements_are_the_real_schedulers(pod_files, names, added):
    """The plain run's placements bound, the template nodes added (with their
    DaemonSet pods), the pods left pending scheduled by the oracle: the same
    nodes as kschedx's."""
    _, doc = add_nodes(pod_files, names)
    objects, pending, _ = _after_simulate(pod_files)
    for t in added:
        objects += node_from_template(objects, TEMPLATES / f"{t}.yaml", 1)
    theirs = _oracle(objects + pending)
    ours = {p["pod"]: p["placedNode"] for p in doc["pods"]}
    assert theirs and all(ours[k] == v for k, v in theirs.items())


# -- explain --node-template ---------------------------------------------------------------------------------
def test_explain_says_which_pools_could_take_each_pod():
    workload = load_workload([str(ADD / "cluster.yaml")], [str(ADD / "gpu-job.yaml"), str(ADD / "dra-job.yaml")])
    doc = explain(workload, tie_break="name", templates=templates("pool-b", "pool-c", "pool-gpu", "pool-gpu-dra"))
    by_pod = {p["pod"]: p["templates"] for p in doc["pods"]}
    assert by_pod["ml/train"]["couldTake"] == ["pool-gpu"]
    assert by_pod["ml/infer"]["couldTake"] == ["pool-gpu-dra"]
    verdicts = {r["template"]: (r.get("plugin"), r.get("reasons")) for r in by_pod["ml/infer"]["results"]}
    assert verdicts == {"pool-b": ("DynamicResources", ["cannot allocate all claims"]),
                        "pool-c": ("DynamicResources", ["cannot allocate all claims"]),
                        "pool-gpu": ("TaintToleration", ["node(s) had untolerated taint(s)"]),
                        "pool-gpu-dra": (None, None)}
    gpu = next(r for r in by_pod["ml/train"]["results"] if r["template"] == "pool-gpu")
    assert gpu["feasible"] and gpu["selectedNode"] == "pool-gpu-1" and gpu["node"]["name"] == "pool-gpu-1"
    # The probes leave nothing behind: the snapshot has its six nodes.
    assert len(workload.cluster.nodes) == 6


def test_explain_schedulable_pods_get_no_templates():
    # The Deployment's replicas are judged as a whole: the five placed get no
    # pools; the sixth, kept off every node by the zone spread, is asked with
    # the five before it in place.
    workload = load_workload([str(ADD / "cluster.yaml")], [str(ADD / "web.yaml")])
    doc = explain(workload, tie_break="name", templates=templates("pool-b", "pool-c"))
    placed = [p for p in doc["pods"] if p.get("placedNode")]
    assert len(placed) == 5 and all("templates" not in p for p in placed)
    [sixth] = [p for p in doc["pods"] if not p.get("placedNode")]
    verdicts = {r["template"]: (r["feasible"], r.get("plugin")) for r in sixth["templates"]["results"]}
    assert verdicts == {"pool-b": (False, "PodTopologySpread"), "pool-c": (True, None)}


def test_fix_adds_a_node_of_the_template_that_takes_the_pod():
    workload = load_workload([str(ADD / "cluster.yaml")], [str(ADD / "gpu-job.yaml")], keep_raw=True)
    doc = explain(workload, tie_break="name", fix=True, templates=templates("pool-b", "pool-c", "pool-gpu",
                                                                            "pool-gpu-dra"))
    [fix] = [f for f in doc["pods"][0]["fixes"] if f["kind"] == "add-node"]
    assert fix["verified"]["selectedNode"] == "pool-gpu-1"
    assert fix["changes"][0]["template"] == "pool-gpu"
    assert fix["description"].startswith("add a node pool-gpu-1 from template pool-gpu (cpu 7910m, memory 30Gi, "
                                         "nvidia.com/gpu 1, its labels and taints; runs kube-system/node-exporter-")
    assert "scale node pool pool-gpu by 1" in fix["description"]


def test_fix_with_a_device_template_fixes_a_device_shortage():
    workload = load_workload([str(ADD / "cluster.yaml")], [str(ADD / "dra-job.yaml")], keep_raw=True)
    doc = explain(workload, tie_break="name", fix=True, templates=templates("pool-gpu-dra"))
    [fix] = [f for f in doc["pods"][0]["fixes"] if f["kind"] == "add-node"]
    assert fix["verified"]["selectedNode"] == "pool-gpu-dra-1"


# -- template files ----------------------------------------------------------------------------------------
def test_template_makes_nodes_as_the_autoscalers_do():
    from kschedx.sources.node_templates import make_node

    [t] = templates("pool-gpu-dra")
    made = make_node(t, "pool-gpu-dra-2", 2)
    assert made.node["metadata"]["labels"]["kubernetes.io/hostname"] == "pool-gpu-dra-2"
    [s] = made.slices
    assert (s["metadata"]["name"], s["spec"]["pool"]["name"], s["spec"]["nodeName"]) == (
        "pool-gpu-dra-gpu.example.com-2", "pool-gpu-dra-2", "pool-gpu-dra-2")


@pytest.mark.parametrize("text, message", [
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n",
     "holds 0 Nodes: a node template is one Node"),
    ("apiVersion: v1\nkind: Node\nmetadata: {name: a}\nstatus: {allocatable: {cpu: '1', pods: '10'}}\n---\n"
     "apiVersion: v1\nkind: Node\nmetadata: {name: b}\n", "holds 2 Nodes"),
    ("apiVersion: v1\nkind: Node\nmetadata: {name: a}\n", "field status.allocatable: a node template needs"),
    ("apiVersion: v1\nkind: Node\nmetadata: {name: a}\nstatus: {allocatable: {cpu: '1', pods: '0'}}\n",
     "needs status.allocatable.pods above 0"),
    ("apiVersion: v1\nkind: Node\nmetadata: {name: a}\nstatus: {allocatable: {cpu: '1', pods: '10'}}\n---\n"
     "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
     "spec: {driver: d, nodeName: other, pool: {name: p, generation: 1, resourceSliceCount: 1}}\n",
     "spec.nodeName must be 'a' (or unset)"),
    ("apiVersion: v1\nkind: Node\nmetadata: {name: a}\nstatus: {allocatable: {cpu: '1', pods: '10'}}\n---\n"
     "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n", "kind 'Service' has no place in a node template"),
])
def test_bad_template_files(tmp_path, text, message):
    path = tmp_path / "t.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as e:
        read_templates([str(path)])
    assert message in str(e.value) and str(path) in str(e.value)


def test_transient_taints_are_dropped_with_a_warning(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: a}\nspec: {taints: [{key: dedicated, value: x, "
                    "effect: NoSchedule}, {key: node.kubernetes.io/not-ready, effect: NoSchedule}, "
                    "{key: startup-taint.cluster-autoscaler.kubernetes.io/x, effect: NoSchedule}]}\n"
                    "status: {allocatable: {cpu: '1', pods: '10'}}\n")
    [t] = read_templates([str(path)])
    assert t.node["spec"]["taints"] == [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    assert "node.kubernetes.io/not-ready:NoSchedule" in t.warnings[0]


def test_two_templates_of_one_name(tmp_path):
    for d in ("x", "y"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "t.yaml").write_text("apiVersion: v1\nkind: Node\nmetadata: {name: a}\n"
                                             "status: {allocatable: {cpu: '1', pods: '10'}}\n")
    with pytest.raises(InputError) as e:
        read_templates([str(tmp_path / "x"), str(tmp_path / "y")])
    assert "node template 'a' is also given by" in str(e.value)


# -- the command line ----------------------------------------------------------------------------------------
def cli(*args):
    proc = subprocess.run([sys.executable, "-m", "kschedx", *args], capture_output=True, text=True, cwd=ROOT)
    return proc.returncode, proc.stdout, proc.stderr


A = "fixtures/whatif/add-nodes"


def test_cli_add_nodes_human_and_ci():
    args = ("simulate", f"{A}/web.yaml", "--snapshot", f"{A}/cluster.yaml", "--tie-break", "name",
            "--node-template", f"{A}/templates/pool-b.yaml", "--node-template", f"{A}/templates/pool-c.yaml",
            "--add-nodes", "auto")
    code, out, _ = cli(*args)
    assert code == 0
    assert out.splitlines()[1].startswith("add 1 node of pool-c (pool-c-1): all 6 pods are placed")
    assert "pool-c-1 (new: pool-c)" in out
    _, out, _ = cli(*args, "-o", "junit")
    assert '<testcase name="add nodes" classname="kschedx.simulate.whatif">' in out
    _, out, _ = cli(*args, "-o", "github")
    assert out.startswith("::notice title=add nodes::add 1 node of pool-c (pool-c-1)")
    _, out, _ = cli(*args, "-o", "tap")
    assert "ok 1 - add nodes: add 1 node of pool-c (pool-c-1)" in out
    _, out, _ = cli(*args, "-o", "json")
    assert json.loads(out)["addNodes"]["perTemplate"] == {"pool-c": 1}


def test_cli_explain_templates_in_every_format():
    args = ("explain", f"{A}/gpu-job.yaml", "--snapshot", f"{A}/cluster.yaml", "--tie-break", "name",
            "--node-template", f"{A}/templates/")
    code, out, _ = cli(*args)
    assert code == 1
    assert "node templates (one new node of each, the pod's cycle run again with it):" in out
    assert "pool-gpu      ✓ could take it (→ pool-gpu-1)" in out
    assert "pool-b        ✗ NodeResourcesFit: Insufficient nvidia.com/gpu" in out
    _, out, _ = cli(*args, "-o", "junit")
    assert "node templates that could take it: pool-gpu" in out
    _, out, _ = cli(*args, "-o", "tap")
    assert "templates: 'node templates that could take it: pool-gpu'" in out
    _, out, _ = cli(*args, "-o", "github")
    assert "::notice title=ml/train node templates::node templates that could take it: pool-gpu" in out


@pytest.mark.parametrize("args, code, message", [
    (("--add-nodes", "auto"), 2, "--add-nodes needs --node-template"),
    (("--node-template", f"{A}/templates/pool-b.yaml"), 2, "--node-template needs --add-nodes"),
    (("--node-template", f"{A}/templates/pool-b.yaml", "--add-nodes", "pool-x=1"), 2,
     "no node template named 'pool-x'"),
    (("--node-template", f"{A}/templates/pool-b.yaml", "--add-nodes", "pool-b=0"), 2, "with N at least 1"),
    (("--node-template", f"{A}/cluster.yaml", "--add-nodes", "auto"), 3, "holds 6 Nodes"),
])
def test_cli_errors(args, code, message):
    got, _, err = cli("simulate", f"{A}/web.yaml", "--snapshot", f"{A}/cluster.yaml", *args)
    assert got == code and message in err


def test_html_report_shows_the_templates(tmp_path):
    report = tmp_path / "r.html"
    cli("explain", f"{A}/gpu-job.yaml", "--snapshot", f"{A}/cluster.yaml", "--tie-break", "name",
        "--node-template", f"{A}/templates/", "--report", str(report))
    page = report.read_text()
    assert '<section class="templates"><h3>Node templates</h3><p>could take it: <b>pool-gpu</b>' in page
    assert "✗ NodeResourcesFit: Insufficient nvidia.com/gpu" in page
    report = tmp_path / "s.html"
    cli("simulate", f"{A}/web.yaml", "--snapshot", f"{A}/cluster.yaml", "--tie-break", "name",
        "--node-template", f"{A}/templates/pool-b.yaml", "--node-template", f"{A}/templates/pool-c.yaml",
        "--add-nodes", "auto", "--report", str(report))
    page = report.read_text()
    assert "<p class=\"answer\"><b>add 1 node of pool-c (pool-c-1): all 6 pods are placed" in page


# -- small clusters written here: the search's whole runs, a search with nothing to try, a drain -----------
# n1 full but for nothing; every node runs the agent DaemonSet's 500m.
SMALL_CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "2", memory: 8Gi, pods: "20"}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system, uid: ds-agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      tolerations: [{operator: Exists}]
      containers: [{name: c, image: x, resources: {requests: {cpu: 500m}}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: agent-n1
  namespace: kube-system
  labels: {app: agent}
  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: ds-agent, controller: true}]
spec:
  nodeName: n1
  tolerations: [{operator: Exists}]
  containers: [{name: c, image: x, resources: {requests: {cpu: 500m}}}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: filler, namespace: default}
spec:
  nodeName: n1
  containers: [{name: c, image: x, resources: {requests: {cpu: 1500m}}}]
status: {phase: Running}
"""
FIVE_REPLICAS = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: default}
spec:
  replicas: 5
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
"""
TOO_BIG = """
apiVersion: v1
kind: Pod
metadata: {name: big, namespace: default}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "5"}}}]
"""


def _template(name: str, cpu: str) -> str:
    return f"""
apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{pool: {name}}}}}
status: {{allocatable: {{cpu: "{cpu}", memory: 8Gi, pods: "20"}}}}
"""


def _written(tmp_path, **files) -> dict:
    out = {}
    for name, text in files.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(text)
        out[name] = str(path)
    return out


def _auto(tmp_path, pod_text, template_names, drain=None, cluster=SMALL_CLUSTER, how="auto"):
    f = _written(tmp_path, cluster=cluster, pods=pod_text, small=_template("small", "2"),
                 big=_template("big", "8"))
    workload = load_workload([f["cluster"]], [f["pods"]] if pod_text else [])
    sink = DocumentSink()
    change = Change(drain=drain, templates=read_templates([f[n] for n in template_names]), add_nodes=how)
    code = simulate_changed(sink, workload, change, tie_break="name")
    return code, sink.doc


def test_the_search_runs_do_not_start_with_the_greedy_passs_nodes(tmp_path):
    # A small node takes one replica (2 CPU less its agent), a big one all
    # five. The greedy pass (small first) needs 5; a run with its nodes left
    # in the cluster would "prove" a smaller plan that places one pod.
    code, doc = _auto(tmp_path, FIVE_REPLICAS, ["big", "small"])
    add = doc["addNodes"]
    assert code == 0
    assert add["answer"] == "add 1 node of big (big-1): all 5 pods are placed"
    assert add["search"]["proven"] is True and add["search"]["greedy"] == 5
    assert all(p["placedNode"] == "big-1" for p in doc["pods"])


def test_the_search_answer_with_one_template_places_every_pod(tmp_path):
    code, doc = _auto(tmp_path, FIVE_REPLICAS, ["small"])
    add = doc["addNodes"]
    assert code == 0
    assert add["perTemplate"] == {"small": 5} and add["answer"].endswith(": all 5 pods are placed")
    # The requests allow 4 nodes; only whole runs show a fifth is needed.
    assert (add["search"]["lowerBound"], add["search"]["proven"]) == (4, True)


def test_no_template_fits_says_no_plan_was_tried(tmp_path):
    from kschedx.render.whatif import search_line

    code, doc = _auto(tmp_path, TOO_BIG, ["small"])
    search = doc["addNodes"]["search"]
    assert code == 1
    assert (search["proven"], search["greedy"], search["runs"]) == (False, None, 0)
    assert search["why"] == "no template fits any pending pod, so no plan was tried"
    line = search_line(doc["addNodes"])
    assert line == ("search: 1 pending pod(s) in 1 class(es); no template fits any pending pod, so no plan was "
                    "tried; 0 whole run(s), 1 cycle(s)")
    assert "proven" not in line and "greedy" not in line


def test_nothing_pending_says_no_node_is_tried(tmp_path):
    from kschedx.render.whatif import search_line

    _, doc = _auto(tmp_path, "", ["small"])
    assert search_line(doc["addNodes"]) == "search: the run leaves no pod Unschedulable, no node is tried"


# d1 holds two web replicas (one budget: one at a time) and a 1500m pod; m1
# and m2 have room for two of the three new pods.
DRAIN_CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: d1, labels: {kubernetes.io/hostname: d1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "20"}}
---
apiVersion: v1
kind: Node
metadata: {name: m1, labels: {kubernetes.io/hostname: m1}}
status: {allocatable: {cpu: "2", memory: 8Gi, pods: "20"}}
---
apiVersion: v1
kind: Node
metadata: {name: m2, labels: {kubernetes.io/hostname: m2}}
status: {allocatable: {cpu: "2", memory: 8Gi, pods: "20"}}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-abc, namespace: default, uid: rs-web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: big-x, namespace: default, uid: rs-big}
spec:
  replicas: 1
  selector: {matchLabels: {app: big}}
  template:
    metadata: {labels: {app: big}}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: 1500m}}}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: default}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: web}}
""" + "".join(f"""---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: default
  labels: {{app: {app}}}
  ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: {rs}, uid: {uid}, controller: true}}]
spec:
  nodeName: {node}
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
status:
  phase: Running
  conditions: [{{type: Ready, status: "True"}}]
""" for name, app, rs, uid, node, cpu in [
    ("web-abc-1", "web", "web-abc", "rs-web", "d1", "1"), ("web-abc-2", "web", "web-abc", "rs-web", "d1", "1"),
    ("web-abc-3", "web", "web-abc", "rs-web", "m1", "1"), ("big-x-1", "big", "big-x", "rs-big", "d1", "1500m")])


@pytest.mark.parametrize("how", ["auto", {"small": 1}])
def test_a_drain_counts_the_new_pod_the_added_node_takes(tmp_path, how):
    from kschedx.whatif.drain import DrainOptions

    code, doc = _auto(tmp_path, "", ["small"], drain=DrainOptions(["d1"]), cluster=DRAIN_CLUSTER, how=how)
    drain = doc["drain"]
    assert code == 0
    assert (drain["outcome"], drain["replacementsPending"], drain["moved"]) == ("Drained", 0, 3)
    assert drain["answer"].startswith("d1 can be drained: 3 pods move")
    assert drain["answer"].endswith("default/web-abc-2 → small-1")
    report = {p["pod"]: p for p in drain["nodes"][0]["pods"]}
    assert report["default/web-abc-2"]["replacement"]["placedNode"] == "small-1"
    assert report["default/web-abc-2"]["replacement"]["status"] == "Scheduled"


def test_a_drain_with_nodes_added_passes_in_ci(tmp_path):
    f = _written(tmp_path, cluster=DRAIN_CLUSTER, small=_template("small", "2"))
    code, out, _ = cli("simulate", "--snapshot", f["cluster"], "--drain", "d1", "--node-template", f["small"],
                       "--add-nodes", "auto", "--tie-break", "name", "-o", "junit")
    assert code == 0
    assert "<failure" not in out


# d1's two web replicas and m1's one want host port 80: a new pod fits only
# on a new node, one per node; so does the pending pod `gate`. The budget
# lets one replica go at a time.
PORT = "ports: [{containerPort: 80, hostPort: 80}], resources: {requests: {cpu: 100m}}"
PORT_CLUSTER = f"""
apiVersion: v1
kind: Node
metadata: {{name: d1, labels: {{kubernetes.io/hostname: d1}}}}
status: {{allocatable: {{cpu: "4", memory: 8Gi, pods: "20"}}}}
---
apiVersion: v1
kind: Node
metadata: {{name: m1, labels: {{kubernetes.io/hostname: m1}}}}
status: {{allocatable: {{cpu: "4", memory: 8Gi, pods: "20"}}}}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {{name: web-abc, namespace: default, uid: rs-web}}
spec:
  replicas: 3
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers: [{{name: c, image: x, {PORT}}}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: web, namespace: default}}
spec:
  maxUnavailable: 1
  selector: {{matchLabels: {{app: web}}}}
""" + "".join(f"""---
apiVersion: v1
kind: Pod
metadata:
  name: web-abc-{i}
  namespace: default
  labels: {{app: web}}
  ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: web-abc, uid: rs-web, controller: true}}]
spec:
  nodeName: {node}
  containers: [{{name: c, image: x, {PORT}}}]
status:
  phase: Running
  conditions: [{{type: Ready, status: "True"}}]
""" for i, node in [(1, "d1"), (2, "d1"), (3, "m1")])
GATE = f"""
apiVersion: v1
kind: Pod
metadata: {{name: gate, namespace: default, labels: {{app: gate}}}}
spec:
  containers: [{{name: c, image: x, {PORT}}}]
"""


def test_the_search_runs_drain_from_the_budgets_as_read(tmp_path):
    # The plain run leaves the budget at 0 allowed and web-abc-2 blocked; a
    # whole run that started from that status would block at once and
    # "place" everything with one node. Once nodes take web-abc-1's new
    # pod, the drain goes on and web-abc-2's new pod needs a third node.
    from kschedx.whatif.drain import DrainOptions

    code, doc = _auto(tmp_path, GATE, ["small"], drain=DrainOptions(["d1"]), cluster=PORT_CLUSTER)
    add = doc["addNodes"]
    assert code == 0
    assert add["answer"] == "add 3 nodes of small (small-1, small-2, small-3): all 3 pods are placed"
    assert (add["search"]["greedy"], add["search"]["proven"]) == (2, True)
    assert doc["drain"]["outcome"] == "Drained" and doc["drain"]["replacementsPending"] == 0
