"""The example configurations of fixtures/config do what their comments say.

bin-packing.yaml: on two nodes of 4 cpu / 8Gi, one already running a pod of
1 cpu / 2Gi, a pod of 500m / 1Gi. MostAllocated (cpu weight 1, memory 2)
scores requested * 100 / allocatable per resource, with the pod, in integer
arithmetic: the busy node 1500m -> 37, 3Gi -> 37, (37 + 2 * 37) / 3 = 37; the
empty one 500m -> 12, 1Gi -> 12, so 12. With weight 5 the busy node wins,
where the default profile (LeastAllocated) picks the empty one.
"""

from __future__ import annotations

import json

from click.testing import CliRunner

from kschedx.cli.main import main

NODE = """\
apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}}}}}
status:
  allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}
  capacity: {{cpu: "4", memory: 8Gi, pods: "110"}}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default, uid: uid-{name}}}
spec:
  {node}
  containers:
  - name: app
    image: app:1
    resources: {{requests: {{cpu: {cpu}, memory: {memory}}}}}
"""


def cluster(tmp_path):
    d = tmp_path / "cluster"
    d.mkdir()
    docs = [NODE.format(name="busy"), NODE.format(name="empty"),
            POD.format(name="running", node="nodeName: busy", cpu='"1"', memory="2Gi")]
    (d / "objects.yaml").write_text("---\n".join(docs))
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD.format(name="new", node="", cpu="500m", memory="1Gi"))
    return str(d), str(pod)


def explain(snap, pod, *extra):
    r = CliRunner().invoke(main, ["explain", pod, "--snapshot", snap, "--tie-break", "name", "-o", "json", *extra])
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)["pods"][0]


def fit_scores(pod_doc):
    return {n["name"]: next((s["raw"], s["weight"]) for s in n["scores"] if s["plugin"] == "NodeResourcesFit")
            for n in pod_doc["nodes"]}


def test_bin_packing_fills_the_busy_node_first(tmp_path):
    snap, pod = cluster(tmp_path)
    default = explain(snap, pod)
    assert default["selectedNode"] == "empty"
    packed = explain(snap, pod, "--config", "fixtures/config/bin-packing.yaml")
    assert packed["selectedNode"] == "busy"
    assert fit_scores(packed) == {"busy": (37, 5), "empty": (12, 5)}
    plugins = {s["plugin"] for n in packed["nodes"] for s in n["scores"]}
    assert "NodeResourcesBalancedAllocation" not in plugins
