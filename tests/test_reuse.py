"""Identical pods share one cycle in explain (commands/reuse.py): the whole
document is the same with reuse and without, on every golden case and on
generated clusters whose pending pods come in identical groups; pods that
differ in anything a plugin reads never share."""

from __future__ import annotations

import copy
import json

import pytest
from click.testing import CliRunner

from kschedx.commands.explain import explain, explain_into
from kschedx.commands.load import Workload, load_workload
from kschedx.framework.dispatch import new_schedulers
from kschedx.cli.main import main
from kschedx.framework.runtime import Framework
from kschedx.commands.reuse import ResultReuse, scheduling_key
from kschedx.result.sink import DocumentSink
from kschedx.state.types import PodInfo
from kschedx.sources.fixtures import Origin
from builders import HIGH, LOW, ONE_POD, make_node, make_pod, preemption_node, preemption_pod
from golden_compare import GOLDEN, case_names

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def explain_text(workload_of, **kwargs) -> str:
    """The whole explain document as text (key order included)."""
    sink = DocumentSink()
    explain_into(sink, workload_of(), **kwargs)
    return json.dumps(sink.doc, default=repr, ensure_ascii=False)


@pytest.fixture
def hits(monkeypatch):
    """How many pods took an earlier pod's result."""
    seen = []
    document = ResultReuse.document

    def counted(self, key, pi):
        out = document(self, key, pi)
        if out is not None:
            seen.append(pi.key)
        return out

    monkeypatch.setattr(ResultReuse, "document", counted)
    return seen


def with_twins(name: str, keep_raw: bool = False):
    """The golden case with a twin after each pending pod: the same pod but
    for its name and uid (as a controller's replicas are)."""
    from kschedx.sources.fixtures import read_objects

    def workload():
        objs = []
        for obj, origin in read_objects([str(GOLDEN / "cases" / f"{name}.yaml")]):
            objs.append((obj, origin))
            if obj.get("kind") == "Pod" and not (obj.get("spec") or {}).get("nodeName"):
                twin = copy.deepcopy(obj)
                meta = twin["metadata"]
                meta["name"] = meta["name"] + "-twin"
                if meta.get("uid"):
                    meta["uid"] = meta["uid"] + "-twin"
                objs.append((twin, origin))
        return load_workload((), cluster_objects=objs, keep_raw=keep_raw)

    return workload


@pytest.mark.parametrize("tie_break,seed", [("name", None), ("random", 7)])
@pytest.mark.parametrize("name", case_names())
def test_golden_documents_are_the_same_with_and_without_reuse(name, tie_break, seed, hits):
    def workload():
        return load_workload([str(GOLDEN / "cases" / f"{name}.yaml")])

    without = explain_text(workload, tie_break=tie_break, seed=seed, reuse=False)
    assert not hits
    assert explain_text(workload, tie_break=tie_break, seed=seed, reuse=True) == without
    # Every pending pod with a twin: the twin's result, taken from its pod's,
    # is the one its own cycle gives.
    twins = with_twins(name)
    without = explain_text(twins, tie_break=tie_break, seed=seed, reuse=False)
    assert explain_text(twins, tie_break=tie_break, seed=seed, reuse=True) == without


@pytest.mark.parametrize("name", case_names())
def test_golden_fixes_sampling_and_node_choices_are_the_same_with_reuse(name):
    # --fix runs more cycles per unschedulable pod; --sampling upstream
    # starts each explained pod at node 0; --nodes top=N and failing keep the
    # selected node, drawn at random among ties.
    from kschedx.result.node_choice import parse_node_choice

    twins = with_twins(name, keep_raw=True)
    for kwargs in (dict(fix=True), dict(sampling="upstream"), dict(nodes=parse_node_choice("top=1")),
                   dict(nodes=parse_node_choice("failing"), fix=True)):
        without = explain_text(twins, tie_break="random", seed=3, reuse=False, **kwargs)
        assert explain_text(twins, tie_break="random", seed=3, **kwargs) == without
        assert explain_text(twins, tie_break="random", seed=3, jobs=2, **kwargs) == without


def test_golden_twins_do_share_cycles(hits):
    # The equality above is not vacuous: most twins take their pod's result.
    pods = 0
    for name in case_names():
        w = with_twins(name)()
        pods += len(w.pods) // 2
        explain(w, tie_break="name")
    assert len(hits) > pods // 2, (len(hits), pods)


# -- a generated cluster: groups of identical pending pods ----------------------------
def groups_cluster(groups: int = 6, replicas: int = 4, nodes: int = 9, interleaved: bool = False) -> list[dict]:
    """Groups of identical pending pods; a group's replicas come together in
    queue order (created in the same second, as a controller makes them),
    or `interleaved` (replica r of every group created at second r)."""
    objs = []
    for i in range(nodes):
        name = f"node-{i}"
        objs.append(make_node(name, cpu="4", memory="8Gi", pods="110", labels={HOST: name, ZONE: f"z{i % 3}"}))
        objs.append(make_pod(f"run-{i}", node=name, labels={"app": f"g{i % 3}"},
                             containers=[{"name": "c", "image": "x",
                                          "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}]))
    for g in range(groups):
        kind = g % 3
        extra: dict = {}
        if kind == 1:
            extra["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": f"g{g % 3}"}},
                                                   "topologyKey": HOST}}]}}
        elif kind == 2:
            extra["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": ZONE,
                                                   "whenUnsatisfiable": "DoNotSchedule",
                                                   "labelSelector": {"matchLabels": {"app": f"g{g % 3}"}}}]
        for r in range(replicas):
            # Identical but for name, uid and creation time.
            objs.append(make_pod(f"grp{g}-{r}", labels={"app": f"g{g % 3}", "grp": str(g)},
                                 created=f"2025-01-01T00:00:{r if interleaved else g:02d}Z",
                                 containers=[{"name": "c", "image": "x",
                                              "resources": {"requests": {"cpu": f"{100 * (g + 1)}m"}}}],
                                 **extra))
    return objs


def load(objs) -> Workload:
    origin = Origin("generated")
    return load_workload((), cluster_objects=[(copy.deepcopy(o), origin) for o in objs])


@pytest.mark.parametrize("tie_break,seed", [("name", None), ("random", 1), ("random", 2)])
def test_identical_groups_share_and_agree(tie_break, seed, hits):
    objs = groups_cluster()
    without = explain_text(lambda: load(objs), tie_break=tie_break, seed=seed, reuse=False)
    assert explain_text(lambda: load(objs), tie_break=tie_break, seed=seed) == without
    assert len(hits) == 6 * 3  # every pod but the first of each group


def test_interleaved_groups_agree_too(hits):
    # More groups between two identical pods than results are kept: fewer
    # pods share, and the document is the same.
    objs = groups_cluster(groups=7, replicas=3, interleaved=True)
    without = explain_text(lambda: load(objs), tie_break="random", seed=5, reuse=False)
    assert explain_text(lambda: load(objs), tie_break="random", seed=5) == without


def test_a_shared_result_keeps_its_own_name_uid_and_draw():
    objs = groups_cluster(groups=1, replicas=6)
    doc = explain(load(objs), tie_break="random", seed=3)
    pods = doc["pods"]
    assert [p["pod"] for p in pods] == [f"default/grp0-{r}" for r in range(6)]
    assert len({p["uid"] for p in pods}) == 6
    # Equal top scores: each pod draws its own node among the same top nodes.
    assert len(pods[0]["topNodes"]) > 1
    assert {p["selectedNode"] for p in pods} <= set(pods[0]["topNodes"])
    assert len({p["selectedNode"] for p in pods}) > 1
    assert all(p["nodes"] == pods[0]["nodes"] for p in pods)


def test_cli_no_reuse_gives_the_same_document(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": groups_cluster()}))
    runs = [CliRunner().invoke(main, ["explain", "--snapshot", str(path), "-o", "json", "--seed", "4", *extra],
                               catch_exceptions=False) for extra in ([], ["--no-reuse"])]
    assert runs[0].exit_code == runs[1].exit_code == 0
    assert runs[0].stdout == runs[1].stdout


# -- the scheduling key ---------------------------------------------------------------------
def admitted(pod: dict) -> PodInfo:
    """The pod as the snapshot holds it (admission: defaults, priority)."""
    w = load([make_node("n"), pod])
    return next(pi for pi in w.pods if pi.name == pod["metadata"]["name"])


BASE = dict(labels={"app": "web"}, containers=[{"name": "c", "image": "web:1",
                                                 "resources": {"requests": {"cpu": "100m"}}}])


def key_of(name="a", **overrides) -> str | None:
    kwargs = dict(BASE, **overrides)
    return scheduling_key(admitted(make_pod(name, **kwargs)))


def test_name_uid_and_creation_time_are_not_part_of_the_key():
    a = admitted(make_pod("a", created="2025-01-01T00:00:00Z", **BASE))
    b = admitted(make_pod("b", created="2025-02-01T00:00:00Z", **BASE))
    assert a.uid != b.uid
    assert scheduling_key(a) == scheduling_key(b) is not None


@pytest.mark.parametrize("overrides", [
    dict(labels={"app": "db"}),
    dict(namespace="other"),
    dict(priority=5),
    dict(node_selector={"disk": "ssd"}),
    dict(tolerations=[{"key": "k", "operator": "Exists"}]),
    dict(containers=[{"name": "c", "image": "web:2", "resources": {"requests": {"cpu": "100m"}}}]),
    dict(containers=[{"name": "c", "image": "web:1", "resources": {"requests": {"cpu": "200m"}}}]),
    dict(volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": "data-a"}}]),
    dict(hostname="a", subdomain="s"),
    dict(schedulerName="other"),
    dict(scheduling_gates=["g"]),
    dict(status={"nominatedNodeName": "n"}),
    dict(topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                                     "labelSelector": {"matchLabels": {"app": "web"}}}]),
])
def test_anything_a_plugin_reads_makes_another_key(overrides):
    assert key_of("a", **overrides) != key_of("b")


def test_annotations_and_owners_are_part_of_the_key():
    plain = make_pod("a", **BASE)
    annotated = copy.deepcopy(plain)
    annotated["metadata"]["annotations"] = {"x": "y"}
    owned = copy.deepcopy(plain)
    owned["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                                             "uid": "rs-uid", "controller": True}]
    keys = {scheduling_key(admitted(p)) for p in (plain, annotated, owned)}
    assert len(keys) == 3


def test_pods_with_per_pod_objects_are_never_shared():
    assert key_of(volumes=[{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}]) is None
    assert key_of(resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "gpu"}]) is None


def test_a_nominated_pod_is_never_shared():
    objs = [make_node("n", cpu="4", memory="8Gi", pods="110"),
            make_pod("a", status={"nominatedNodeName": "n"}, **BASE),
            make_pod("b", status={"nominatedNodeName": "n"}, **BASE)]
    w = load(objs)
    scheds = new_schedulers(w.cluster, tie_break="name", seed=None)
    reuse = ResultReuse(scheds, w)
    assert [reuse.key(pi) for pi in w.pods] == [None, None]


def _twins_and_first_result():
    """Two identical pods: (their ResultReuse, the first pod, its key, its document)."""
    w = load(groups_cluster(groups=1, replicas=2))
    reuse = ResultReuse(new_schedulers(w.cluster, tie_break="name", seed=None), w)
    first = w.pods[0]
    return reuse, w, first, reuse.key(first), explain(w, tie_break="name")["pods"][0]


def test_a_result_that_names_its_pod_is_not_kept():
    reuse, w, first, key, doc = _twins_and_first_result()
    doc = dict(doc, notes=[f"about {first.name}"])
    reuse.remember(key, first, False, doc, 0)
    assert reuse.document(key, w.pods[1]) is None
    reuse.remember(key, first, False, dict(doc, notes=[]), 0)
    assert reuse.document(key, w.pods[1]) is not None


def test_a_result_whose_encoded_nodes_name_its_pod_is_not_kept():
    # explain --jobs workers encode `nodes` for -o json: the text is searched.
    from kschedx.render.machine import encode_nodes

    reuse, w, first, key, doc = _twins_and_first_result()
    named = [dict(n, notes=[f"{first.uid} was here"]) for n in doc["nodes"]]
    reuse.remember(key, first, False, dict(doc, nodes=encode_nodes(named)), 0)
    assert reuse.document(key, w.pods[1]) is None
    reuse.remember(key, first, False, dict(doc, nodes=encode_nodes(doc["nodes"])), 0)
    assert reuse.document(key, w.pods[1]) is not None


def test_preemption_drawing_at_random_is_not_shared(monkeypatch):
    # Two identical preemptors: with --tie-break random preemption draws its
    # candidates' offset, so each pod runs its own cycle (same document as
    # without reuse).
    objs = [preemption_node("n1", ONE_POD), preemption_node("n2", ONE_POD),
            preemption_pod("low1", priority=LOW, node="n1"), preemption_pod("low2", priority=LOW, node="n2"),
            preemption_pod("urgent1", priority=HIGH), preemption_pod("urgent2", priority=HIGH)]
    for o in objs:
        o["metadata"]["uid"] = "uid-" + o["metadata"]["name"]
    calls = []
    schedule = Framework.schedule

    def counted(self, pi):
        calls.append(pi.key)
        return schedule(self, pi)

    monkeypatch.setattr(Framework, "schedule", counted)
    for seed in range(4):
        calls.clear()
        with_reuse = explain_text(lambda: load(objs), tie_break="random", seed=seed)
        assert calls == ["default/urgent1", "default/urgent2"]
        assert with_reuse == explain_text(lambda: load(objs), tie_break="random", seed=seed, reuse=False)
    calls.clear()
    explain_text(lambda: load(objs), tie_break="name")
    assert calls == ["default/urgent1"]  # nothing drawn: shared


@pytest.mark.parametrize("replicas,interleaved", [(1, False), (3, False), (3, True)])
def test_only_a_result_a_later_pod_can_take_is_kept_and_searched_for_its_name(monkeypatch, replicas, interleaved):
    # A pod no later pod shares its key with: its document is neither kept
    # nor searched for its own name (names_own_pod); the document is the same.
    import kschedx.commands.reuse as reuse

    objs = groups_cluster(groups=4, replicas=replicas, interleaved=interleaved)
    without = explain_text(lambda: load(objs), tie_break="name", reuse=False)
    searched = []
    names_own_pod = reuse.names_own_pod

    def counted(doc, pi, records=None):
        searched.append(pi.key)
        return names_own_pod(doc, pi, records)

    monkeypatch.setattr(reuse, "names_own_pod", counted)
    assert explain_text(lambda: load(objs), tie_break="name") == without
    if replicas == 1:
        assert searched == []
    elif not interleaved:
        assert sorted(searched) == [f"default/grp{g}-0" for g in range(4)]  # each group's first pod
    else:
        # Replica r of every group, then r+1: the last round is no later pod's.
        assert searched and all(not k.endswith(f"-{replicas - 1}") for k in searched)
