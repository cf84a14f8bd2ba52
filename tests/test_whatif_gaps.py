"""What the drain and node templates needed from the rest of kschedx: pods'
Ready condition kept in snapshots, generated names cut as the API server
cuts them, a node added to a snapshot seen by node sampling, the add-node
fix's new node running its DaemonSet pods, the pods' controllers read from a
live cluster (and granted by deploy/rbac.yaml)."""

from __future__ import annotations

from fixhelp import node, pod, the_pod
from kschedx.sources.workloads import MAX_GENERATED_NAME_LENGTH, generated_name, indexed_pods_prefix, pods_prefix


def test_snapshots_keep_the_ready_condition():
    # The Eviction API and the disruption controller read it (IsPodReady).
    from kschedx.sources.trim import trim

    p = pod("web", node_name="n1")
    p["status"]["conditions"] = [{"type": "Ready", "status": "True", "lastProbeTime": None},
                                 {"type": "PodScheduled", "status": "True"}]
    assert [c["type"] for c in trim(p)["status"]["conditions"]] == ["Ready"]


def test_generated_names_are_cut_as_the_api_server_cuts_them():
    # SimpleNameGenerator: the base cut to 58 characters, then 5 more.
    long = "a" * 70 + "-"
    name = generated_name(long, "seed")
    assert len(name) == 63 and name.startswith("a" * MAX_GENERATED_NAME_LENGTH)
    # getPodsPrefix: the dash, unless the prefix would not be a valid generateName.
    assert pods_prefix("web") == "web-" and pods_prefix("x" * 253) == "x" * 253
    # podGenerateNameWithIndex: the index survives the cut.
    assert indexed_pods_prefix("j" * 60, 12) == "j" * (58 - 4) + "-12-"
    assert indexed_pods_prefix("job", 3) == "job-3-"


def test_expanded_workload_pod_names_are_at_most_63_characters(tmp_path):
    from kschedx.commands.load import load_workload

    name = "a-very-long-deployment-name-that-goes-on-and-on-and-on-for-ever"
    (tmp_path / "c.yaml").write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n"
                                     "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '10'}}\n")
    (tmp_path / "d.yaml").write_text(f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\n"
                                     "spec: {replicas: 2, selector: {matchLabels: {a: b}}, template: {metadata: "
                                     "{labels: {a: b}}, spec: {containers: [{name: c, image: i}]}}}\n")
    workload = load_workload([str(tmp_path / "c.yaml")], [str(tmp_path / "d.yaml")])
    assert [len(pi.name) for pi in workload.pods] == [63, 63]


def test_node_sampling_sees_a_node_added_to_the_snapshot():
    # The node-tree order was cached per snapshot object: an added node
    # (a template's, an add-node fix's) was left out of sampled searches.
    from kschedx.commands.load import load_workload
    from kschedx.framework.dispatch import new_schedulers
    from kschedx.framework.journal import Journal
    from kschedx.sources.fixtures import Origin

    origin = Origin("t")
    workload = load_workload((), cluster_objects=[(node(f"n{i}"), origin) for i in range(3)])
    scheds = new_schedulers(workload.cluster, tie_break="name", seed=None, sampling="upstream")
    order = scheds.sampling.order_names(scheds.snapshot)
    assert order == ["n0", "n1", "n2"]
    journal = Journal(scheds.snapshot, scheds.frameworks)
    journal.add_node(node("m0"))
    assert scheds.sampling.order_names(scheds.snapshot) == ["n0", "n1", "n2", "m0"]
    journal.rollback()
    assert scheds.sampling.order_names(scheds.snapshot) == ["n0", "n1", "n2"]
    assert [n["metadata"]["name"] for n in workload.cluster.nodes] == ["n0", "n1", "n2"]


def _daemon_set(cpu):
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "agent", "namespace": "kube-system", "uid": "ds-uid"},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                     "template": {"metadata": {"labels": {"app": "agent"}},
                                  "spec": {"containers": [{"name": "a", "image": "agent",
                                                           "resources": {"requests": {"cpu": cpu}}}]}}}}


def _agent_on(node_name, cpu):
    p = pod(f"agent-{node_name}", cpu=cpu, node_name=node_name, ns="kube-system", labels={"app": "agent"})
    p["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent",
                                         "uid": "ds-uid", "controller": True}]
    return p


def test_add_node_fix_counts_the_daemon_set_pods_a_new_node_runs():
    # n1 (2 CPU) runs the agent (1500m): a pod of 600m does not fit. A copy
    # of n1 would run the agent too: 1500m + 600m is more than 2 CPU, so a
    # copy is no fix (an empty copy would have looked like one).
    objects = [node("n1", cpu="2"), _daemon_set("1500m"), _agent_on("n1", "1500m"), pod("web", cpu="600m")]
    p = the_pod(objects)
    assert p["status"] == "Unschedulable"
    assert "add-node" not in [f["kind"] for f in p["fixes"]]
    # 500m fits next to the agent on a new node: the fix, the agent with it.
    objects[-1] = pod("web", cpu="500m")
    objects.insert(3, pod("other", cpu="100m", node_name="n1"))
    p = the_pod(objects)
    [fix] = [f for f in p["fixes"] if f["kind"] == "add-node"]
    assert fix["verified"]["selectedNode"] == "n1-copy"
    assert fix["changes"][0]["patch"][0]["value"]["metadata"]["labels"]["kubernetes.io/hostname"] == "n1-copy"


def test_controllers_are_read_and_granted():
    # A drain needs the pods' controllers from a live cluster (kubectl's
    # DaemonSet check, the scales of percentage budgets, a Job's policy).
    from test_rbac import grants, roles
    from kschedx.sources.kinds import CONTROLLER_KINDS

    assert {k.kind for k in CONTROLLER_KINDS} == {"Deployment", "DaemonSet", "Job"}
    for role in ("kschedx-read", "kschedx-bind"):
        granted = grants(roles()[role])
        for k in CONTROLLER_KINDS:
            for verb in ("get", "list", "watch"):
                assert (k.api_version.rpartition("/")[0], k.plural, verb) in granted
