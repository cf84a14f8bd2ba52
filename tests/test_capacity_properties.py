"""capacity's count is exact: with N copies of the pod bound where capacity
placed them, copy N+1 does not fit (preemption off), and `explain` gives
it the very FailedScheduling message capacity reports."""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import preemption_node as node
from builders import preemption_pod as pod
from kschedx.commands.explain import explain
from kschedx.commands.load import load_workload
from kschedx.commands import capacity as cap

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
MAX = 25


@st.composite
def scenarios(draw):
    n_nodes = draw(st.integers(1, 5))
    nodes = []
    for i in range(n_nodes):
        name = f"n{i}"
        nodes.append(node(name, {"cpu": str(draw(st.integers(1, 4))), "memory": f"{draw(st.integers(1, 8))}Gi",
                                 "pods": str(draw(st.integers(2, 12)))},
                          labels={HOST: name, ZONE: f"z{draw(st.integers(0, 2))}"}))
    running = []
    for j in range(draw(st.integers(0, 4))):
        running.append(pod(f"run{j}", node=f"n{draw(st.integers(0, n_nodes - 1))}",
                           labels={"app": draw(st.sampled_from(["web", "db"]))},
                           req={"cpu": f"{draw(st.integers(1, 10)) * 100}m", "memory": "256Mi"}))
    spread = None
    if draw(st.booleans()):
        spread = [{"maxSkew": draw(st.integers(1, 2)), "topologyKey": draw(st.sampled_from([ZONE, HOST])),
                   "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}}]
    affinity = None
    if draw(st.booleans()):
        affinity = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": draw(st.sampled_from([ZONE, HOST]))}]}}
    template = pod("web", labels={"app": "web"}, spread=spread, affinity=affinity,
                   req={"cpu": f"{draw(st.integers(1, 15)) * 100}m", "memory": f"{draw(st.integers(1, 8)) * 128}Mi"})
    if draw(st.booleans()):
        template["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    return nodes + running, template


def _write(path: Path, objs) -> str:
    path.write_text(yaml.safe_dump_all(objs))
    return str(path)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_copy_n_plus_one_never_fits(scenario):
    cluster_objs, template = scenario
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cluster = _write(tmp / "cluster.yaml", cluster_objs)
        pods = _write(tmp / "pod.yaml", [template])
        doc = cap.capacity(load_workload([cluster], [pods]), cap.Options(max=MAX), tie_break="name")
        [t] = doc["templates"]
        assert sum(t["perNode"].values()) == t["count"]
        if t["stop"] == cap.STOP_MAX:
            assert t["count"] == MAX
            return
        bound = []
        i = 0
        for node_name, n in t["perNode"].items():
            for _ in range(n):
                i += 1
                c = copy.deepcopy(template)
                c["metadata"]["name"] = f"web-capacity-{i}"
                c["metadata"]["uid"] = f"copy-{i}"
                c["spec"]["nodeName"] = node_name
                bound.append(c)
        filled = _write(tmp / "filled.yaml", cluster_objs + bound)
        nxt = copy.deepcopy(template)
        nxt["metadata"]["name"] = f"web-capacity-{t['count'] + 1}"
        nxt["metadata"]["uid"] = "next"
        result = explain(load_workload([filled], [_write(tmp / "next.yaml", [nxt])]), tie_break="name")
        [p] = result["pods"]
        assert p["status"] == "Unschedulable"
        assert p["message"] == t["message"]
