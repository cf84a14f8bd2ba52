"""Extenders (`extenders:` of --config) called over HTTP(S) as kube-scheduler
v1.35.4 calls them, against a small extender server on 127.0.0.1
(tests/extender_server.py): filter, prioritize with weight, nodeCacheCapable,
managedResources, ignorable and non-ignorable failures, timeouts, the preempt
verb, TLS, --skip-extenders. Expected values come from schedule_one.go and
extender.go, not from kschedx's output."""

from __future__ import annotations

import json
import socket

import pytest
import yaml
from click.testing import CliRunner

from extender_server import ExtenderServer, Reply
from kschedx.commands import explain as explaining
from kschedx.commands.load import load_workload
from kschedx.commands.simulate import simulate
from kschedx.cli.main import main
from kschedx.framework.configured import parse_config
from kschedx.util.errors import InputError

NODE = """
apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}}}}}
status:
  allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}
  capacity: {{cpu: "4", memory: 8Gi, pods: "110"}}
"""
BUSY = """
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default, uid: uid-{name}, labels: {{app: filler}}}}
spec:
  nodeName: {node}
  priority: {priority}
  containers:
  - name: c
    image: filler
    resources: {{requests: {{cpu: "{cpu}", memory: 1Gi}}}}
status: {{phase: Running}}
"""
POD = """
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default, uid: uid-{name}}}
spec:
  priority: {priority}
  containers:
  - name: c
    image: web
    resources: {{requests: {{cpu: "{cpu}", memory: 256Mi{extra}}}}}
"""


@pytest.fixture
def extender():
    server = ExtenderServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def extender_tls(tmp_path_factory):
    from kubeapi_tls import make_server_material

    return make_server_material(tmp_path_factory.mktemp("extender-tls"))


def cluster(tmp_path, busy_cpu: str = "3", nodes=("n1", "n2", "n3"), priority: int = 0):
    """Three empty 4-cpu nodes but n3, which runs a pod of `busy_cpu`."""
    docs = [NODE.format(name=n) for n in nodes]
    if busy_cpu:
        docs.append(BUSY.format(name="filler", node=nodes[-1], cpu=busy_cpu, priority=priority))
    path = tmp_path / "cluster.yaml"
    path.write_text("---".join(docs))
    return str(path)


def pod(tmp_path, name: str = "web", cpu: str = "500m", priority: int = 0, extra: str = ""):
    path = tmp_path / f"{name}.yaml"
    path.write_text(POD.format(name=name, cpu=cpu, priority=priority, extra=extra))
    return str(path)


def config(*extenders: dict, extra: str = "") -> str:
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "extenders": list(extenders)}
    return yaml.safe_dump(doc) + extra


def explain(tmp_path, cfg_text: str, pods=None, **kw) -> dict:
    w = load_workload([cluster(tmp_path, **kw)], pods if pods is not None else [pod(tmp_path)])
    return explaining.explain(w, tie_break="name", config=parse_config(cfg_text, "sched.yaml"))


def node(p: dict, name: str) -> dict:
    return next(n for n in p["nodes"] if n["name"] == name)


def ext_filter(n: dict) -> dict | None:
    return next((f for f in n["filters"] if f.get("extender")), None)


def keep_nodes(names, failed=None, unresolvable=None):
    """A filter verb for nodeCacheCapable: false: the Node objects kept."""
    def handle(args):
        items = [n for n in args["Nodes"]["items"] if n["metadata"]["name"] in names]
        return {"Nodes": {"items": items}, "FailedNodes": failed or {},
                "FailedAndUnresolvableNodes": unresolvable or {}}
    return handle


# ---- filter ---------------------------------------------------------------------------------


def test_filter_rejects_nodes_with_its_reasons(tmp_path, extender):
    extender.on("filter", keep_nodes({"n1", "n3"}, failed={"n2": "n2 has no licence"}))
    doc = explain(tmp_path, config({"urlPrefix": extender.url, "filterVerb": "filter"}))
    [p] = doc["pods"]
    # What kube-scheduler sends without nodeCacheCapable: whole Node objects, NodeNames null.
    [(verb, args, headers)] = extender.requests
    assert verb == "filter" and headers["Content-Type"] == "application/json"
    assert args["NodeNames"] is None and args["Pod"]["metadata"]["name"] == "web"
    assert [n["metadata"]["name"] for n in args["Nodes"]["items"]] == ["n1", "n2", "n3"]
    assert p["status"] == "Scheduled" and p["selectedNode"] == "n1"
    n2 = node(p, "n2")
    assert n2["feasible"] is False and n2["firstFailure"] == extender.url
    assert ext_filter(n2) == {"plugin": extender.url, "code": "Unschedulable", "reasons": ["n2 has no licence"],
                              "extender": True}
    assert "scores" not in n2
    assert ext_filter(node(p, "n1")) == {"plugin": extender.url, "code": "Success", "reasons": [], "extender": True}
    assert p["extenders"] == [{"extender": extender.url, "verb": "filter", "url": extender.url + "/filter",
                               "nodes": 3, "passed": 2, "failed": 1}]


def test_every_node_rejected_gives_the_fit_error(tmp_path, extender):
    extender.on("filter", lambda args: {"NodeNames": [], "FailedNodes": {"n1": "busy", "n2": "busy"},
                                        "FailedAndUnresolvableNodes": {"n3": "wrong rack", "n2": "wrong rack"}})
    doc = explain(tmp_path, config({"urlPrefix": extender.url, "filterVerb": "filter", "nodeCacheCapable": True}))
    [p] = doc["pods"]
    assert p["status"] == "Unschedulable"
    # FailedAndUnresolvableNodes wins for n2; the reasons are counted like plugins' ones.
    assert p["message"] == ("0/3 nodes are available: 1 busy, 2 wrong rack. "
                            "preemption: 0/3 nodes are "
                            "available: 1 No preemption victims found for incoming pod, 2 Preemption is not "
                            "helpful for scheduling.")
    assert ext_filter(node(p, "n2"))["code"] == "UnschedulableAndUnresolvable"
    assert node(p, "n1")["status"] == {"code": "Unschedulable", "plugin": extender.url, "reasons": ["busy"]}


def test_node_cache_capable_sends_and_reads_names(tmp_path, extender):
    extender.on("filter", lambda args: {"NodeNames": ["n2"]})
    doc = explain(tmp_path, config({"urlPrefix": extender.url + "/", "filterVerb": "filter",
                                    "nodeCacheCapable": True}))
    [(_, args, _)] = extender.requests
    assert args["Nodes"] is None and args["NodeNames"] == ["n1", "n2", "n3"]
    [p] = doc["pods"]
    assert p["selectedNode"] == "n2"
    # A node left out without a message has no status, as upstream records none.
    n1 = node(p, "n1")
    assert n1["feasible"] is False and "status" not in n1
    assert ext_filter(n1)["details"] == {"leftOut": "not in the extender's reply, and no failure message"}


def test_node_cache_capable_reply_naming_an_unknown_node_is_an_error(tmp_path, extender):
    extender.on("filter", lambda args: {"nodenames": ["n1", "zz"]})  # keys match case-insensitively
    doc = explain(tmp_path, config({"urlPrefix": extender.url, "filterVerb": "filter", "nodeCacheCapable": True}))
    [p] = doc["pods"]
    assert p["status"] == "Error"
    assert p["message"] == (f'extender "{extender.url}" claims a filtered node "zz" which is not found in the '
                            "input node list")


def test_reply_error_field_is_the_pod_error(tmp_path, extender):
    extender.on("filter", lambda args: {"Error": "license server down"})
    doc = explain(tmp_path, config({"urlPrefix": extender.url, "filterVerb": "filter"}))
    [p] = doc["pods"]
    assert p["status"] == "Error" and p["message"] == "license server down"
    assert p["nodes"] == [] and p["selectedNode"] is None


def test_without_node_cache_scores_see_nodes_without_pods(tmp_path, extender):
    """v1.35.4 scores the Node objects of the reply as fresh NodeInfos (no pods):
    the busy n3 then scores like an empty node (kubernetes/kubernetes#141781)."""
    extender.on("filter", keep_nodes({"n1", "n2", "n3"}))
    plain = explain(tmp_path, config())["pods"][0]
    fit = {n["name"]: next(s["raw"] for s in n["scores"] if s["plugin"] == "NodeResourcesFit")
           for n in plain["nodes"]}
    assert fit["n3"] < fit["n1"]
    [p] = explain(tmp_path, config({"urlPrefix": extender.url, "filterVerb": "filter"}))["pods"]
    fit = {n["name"]: next(s["raw"] for s in n["scores"] if s["plugin"] == "NodeResourcesFit") for n in p["nodes"]}
    assert fit["n3"] == fit["n1"]
    assert any("kubernetes/kubernetes#141781" in note for note in p["notes"])
    # nodeCacheCapable keeps the cluster's NodeInfos.
    extender.on("filter", lambda args: {"NodeNames": args["NodeNames"]})
    [p] = explain(tmp_path, config({"urlPrefix": extender.url, "filterVerb": "filter",
                                    "nodeCacheCapable": True}))["pods"]
    fit = {n["name"]: next(s["raw"] for s in n["scores"] if s["plugin"] == "NodeResourcesFit") for n in p["nodes"]}
    assert fit["n3"] < fit["n1"]


@pytest.mark.parametrize("failed", [{"n2": "n2 has no licence"}, {"n1": "no", "n2": ""}])
def test_every_node_choice_counts_the_extenders_verdicts(tmp_path, extender, failed):
    """An extender's rejection is a node's verdict like a plugin's: nodeCounts,
    filterSummary, and the nodes --nodes failing/top=N/NAME keep are what the
    full list says, and a kept record is that list's, extender entries and all."""
    from test_node_choice import _check_choices

    extender.on("filter", keep_nodes({"n1", "n2", "n3"} - set(failed), failed=failed))
    extender.on("prioritize", lambda args: [{"Host": "n3", "Score": 2}, {"Host": "n1", "Score": 7}])
    cfg = parse_config(config({"urlPrefix": extender.url, "filterVerb": "filter", "prioritizeVerb": "prioritize",
                               "weight": 1}), "sched.yaml")
    w = load_workload([cluster(tmp_path, busy_cpu="")], [pod(tmp_path)])
    doc = explaining.explain(w, tie_break="name", config=cfg)
    [p] = doc["pods"]
    assert p["nodeCounts"] == {"nodes": 3, "feasible": 3 - len(failed)}
    assert p["filterSummary"] == {extender.url: {r: 1 for r in failed.values()}}
    _check_choices(doc, lambda choice: explaining.explain(w, tie_break="name", config=cfg, nodes=choice))


# ---- prioritize -----------------------------------------------------------------------------


def test_prioritize_scores_times_weight_times_ten(tmp_path, extender):
    extender.on("prioritize", lambda args: [{"Host": "n3", "Score": 9}, {"host": "n1", "score": 1},
                                            {"Host": "elsewhere", "Score": 10}])
    plain = explain(tmp_path, config())["pods"][0]
    doc = explain(tmp_path, config({"urlPrefix": extender.url, "prioritizeVerb": "prioritize", "weight": 3}))
    [p] = doc["pods"]
    [(verb, args, _)] = extender.requests
    assert verb == "prioritize" and [n["metadata"]["name"] for n in args["Nodes"]["items"]] == ["n1", "n2", "n3"]
    before = {n["name"]: n["totalScore"] for n in plain["nodes"]}
    after = {n["name"]: n["totalScore"] for n in p["nodes"]}
    assert after == {"n1": before["n1"] + 1 * 3 * 10, "n2": before["n2"], "n3": before["n3"] + 9 * 3 * 10}
    assert p["selectedNode"] == "n3" and plain["selectedNode"] != "n3"
    n3 = node(p, "n3")
    assert n3["scores"][-1] == {"plugin": extender.url, "raw": 9, "normalized": 90, "weight": 3, "weighted": 270,
                                "extender": True}
    # No entry for a node the extender did not score.
    assert not any(s.get("extender") for s in node(p, "n2")["scores"])
    assert p["extenders"] == [{"extender": extender.url, "verb": "prioritize", "url": extender.url + "/prioritize",
                               "nodes": 3, "weight": 3, "scored": 2}]


def test_prioritize_errors_are_ignored_even_when_not_ignorable(tmp_path, extender):
    extender.on("prioritize", Reply(503))
    plain = explain(tmp_path, config())["pods"][0]
    [p] = explain(tmp_path, config({"urlPrefix": extender.url, "prioritizeVerb": "prioritize", "weight": 1}))["pods"]
    assert p["status"] == "Scheduled" and p["selectedNode"] == plain["selectedNode"]
    [call] = p["extenders"]
    assert call["error"] == f"failed prioritize with extender at URL {extender.url}/prioritize, code 503"
    assert call["ignored"] is True


def test_one_feasible_node_is_not_prioritized(tmp_path, extender):
    extender.on("filter", lambda args: {"NodeNames": ["n2"]})
    extender.on("prioritize", lambda args: [])
    explain(tmp_path, config({"urlPrefix": extender.url, "filterVerb": "filter", "prioritizeVerb": "prioritize",
                              "weight": 1, "nodeCacheCapable": True}))
    assert extender.verbs() == ["filter"]


# ---- managedResources, ignorable, order -------------------------------------------------------


def test_managed_resources_only_pods_requesting_them(tmp_path, extender):
    extender.on("filter", lambda args: {"NodeNames": ["n1"]})
    cfg = config({"urlPrefix": extender.url, "filterVerb": "filter", "nodeCacheCapable": True,
                  "managedResources": [{"name": "example.com/gpu"}]})
    [p] = explain(tmp_path, cfg)["pods"]
    assert extender.requests == []
    assert p["extenders"] == [{"extender": extender.url, "verb": "filter", "notInterested": True,
                               "managedResources": ["example.com/gpu"]}]
    # A limit alone (in an init container) is enough.
    gpu = tmp_path / "gpu.yaml"
    doc = yaml.safe_load(POD.format(name="gpu", cpu="100m", priority=0, extra=""))
    doc["spec"]["initContainers"] = [{"name": "i", "image": "x", "resources": {"limits": {"example.com/gpu": "1"},
                                                                             "requests": {"example.com/gpu": "1"}}}]
    gpu.write_text(yaml.safe_dump(doc))
    cfg_ignored = config({"urlPrefix": extender.url, "filterVerb": "filter", "nodeCacheCapable": True,
                          "managedResources": [{"name": "example.com/gpu", "ignoredByScheduler": True}]})
    [p] = explain(tmp_path, cfg_ignored, pods=[str(gpu)])["pods"]
    assert extender.verbs() == ["filter"]
    # ignoredByScheduler: NodeResourcesFit does not check the resource (no node has it).
    assert p["status"] == "Scheduled" and p["selectedNode"] == "n1"


def test_ignored_by_scheduler_needs_node_resources_fit_args(tmp_path, extender):
    cfg = config({"urlPrefix": extender.url, "filterVerb": "filter",
                  "managedResources": [{"name": "example.com/gpu", "ignoredByScheduler": True}]},
                 extra="profiles:\n- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n"
                       "      disabled: [{name: NodeResourcesFit}]\n")
    with pytest.raises(InputError, match="can't find NodeResourcesFitArgs in plugin config"):
        parse_config(cfg, "sched.yaml")


def test_ignorable_failure_is_skipped_with_a_note(tmp_path, extender):
    extender.on("filter", Reply(500, b"boom"))
    [p] = explain(tmp_path, config({"urlPrefix": extender.url, "filterVerb": "filter", "ignorable": True}))["pods"]
    assert p["status"] == "Scheduled"
    error = f"failed filter with extender at URL {extender.url}/filter, code 500"
    assert p["extenders"][0]["error"] == error and p["extenders"][0]["ignored"] is True
    assert any(error in note and "ignorable" in note for note in p["notes"])
    assert all(ext_filter(n) is None for n in p["nodes"])


def test_non_ignorable_failure_is_the_pods_error(tmp_path, extender):
    extender.on("filter", Reply(500, b"boom"))
    [p] = explain(tmp_path, config({"urlPrefix": extender.url, "filterVerb": "filter"}))["pods"]
    assert p["status"] == "Error"
    assert p["message"] == f"failed filter with extender at URL {extender.url}/filter, code 500"


def test_ignorable_extenders_are_called_last(tmp_path, extender):
    second = ExtenderServer(prefix="/second").start()
    try:
        order = []
        extender.on("filter", lambda args: order.append("first") or {"NodeNames": args["NodeNames"][:2]})
        second.on("filter", lambda args: order.append("second") or {"NodeNames": args["NodeNames"][:1]})
        cfg = config({"urlPrefix": second.url, "filterVerb": "filter", "nodeCacheCapable": True, "ignorable": True},
                     {"urlPrefix": extender.url, "filterVerb": "filter", "nodeCacheCapable": True})
        [p] = explain(tmp_path, cfg)["pods"]
        assert order == ["first", "second"]
        # Each extender gets what the previous one kept.
        assert second.requests[0][1]["NodeNames"] == ["n1", "n2"]
        assert p["selectedNode"] == "n1"
        assert ext_filter(node(p, "n3"))["plugin"] == extender.url
    finally:
        second.stop()


def test_undecodable_reply(tmp_path, extender):
    extender.on("filter", Reply(200, b"<html>"))
    [p] = explain(tmp_path, config({"urlPrefix": extender.url, "filterVerb": "filter"}))["pods"]
    assert p["status"] == "Error" and p["message"] == "invalid character '<' looking for beginning of value"
    extender.on("filter", lambda args: {"NodeNames": "n1"})
    [p] = explain(tmp_path, config({"urlPrefix": extender.url, "filterVerb": "filter",
                                    "nodeCacheCapable": True}))["pods"]
    assert p["message"] == ("json: cannot unmarshal string into Go struct field ExtenderFilterResult.NodeNames "
                            "of type []string")


# ---- transport --------------------------------------------------------------------------------


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_unreachable_extender(tmp_path):
    port = _closed_port()
    url = f"http://127.0.0.1:{port}/sched"
    [p] = explain(tmp_path, config({"urlPrefix": url, "filterVerb": "filter"}))["pods"]
    assert p["status"] == "Error"
    assert p["message"] == f'Post "{url}/filter": dial tcp 127.0.0.1:{port}: connect: connection refused'


def test_timeout(tmp_path, extender):
    extender.on("filter", lambda args: extender.release.wait(30) and {"NodeNames": []})
    [p] = explain(tmp_path, config({"urlPrefix": extender.url, "filterVerb": "filter",
                                    "httpTimeout": "200ms"}))["pods"]
    assert p["status"] == "Error"
    assert p["message"] == (f'Post "{extender.url}/filter": context deadline exceeded '
                            "(Client.Timeout exceeded while awaiting headers)")


def test_bad_http_timeout_is_an_input_error(tmp_path, extender):
    with pytest.raises(InputError, match=r'extenders\[0\].httpTimeout: couldn\'t create scheduler: time: '
                                         r'invalid duration "soon"'):
        explain(tmp_path, config({"urlPrefix": extender.url, "filterVerb": "filter", "httpTimeout": "soon"}))


# ---- --skip-extenders and the CLI -------------------------------------------------------------


def test_skip_extenders_lists_them_in_not_evaluated(tmp_path, extender):
    extender.on("filter", lambda args: {"Error": "never asked"})
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(config({"urlPrefix": extender.url, "filterVerb": "filter"}))
    r = CliRunner().invoke(main, ["explain", pod(tmp_path), "--snapshot", cluster(tmp_path), "--config", str(cfg),
                                  "--skip-extenders", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["notEvaluated"] == [extender.url]
    assert extender.requests == [] and "extenders" not in doc["pods"][0]
    r = CliRunner().invoke(main, ["explain", pod(tmp_path), "--snapshot", cluster(tmp_path), "--skip-extenders"])
    assert r.exit_code == 2 and "--skip-extenders needs --config" in r.stderr


def test_human_output_shows_the_extender_like_a_plugin(tmp_path, extender):
    extender.on("filter", lambda args: {"NodeNames": ["n1", "n3"], "FailedNodes": {"n2": "n2 has no licence"}})
    extender.on("prioritize", lambda args: [{"Host": "n3", "Score": 10}])
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(config({"urlPrefix": extender.url, "filterVerb": "filter", "prioritizeVerb": "prioritize",
                           "weight": 2, "nodeCacheCapable": True}))
    r = CliRunner().invoke(main, ["explain", pod(tmp_path), "--snapshot", cluster(tmp_path), "--config", str(cfg),
                                  "--tie-break", "name"])
    assert r.exit_code == 0, r.stderr
    assert "n2 has no licence" in r.stdout
    assert f"{extender.url} x2" in r.stdout or f"{extender.url} ×2" in r.stdout
    assert "200" in r.stdout  # 10 * 10 * 2


# ---- preempt ----------------------------------------------------------------------------------


def full_cluster(tmp_path) -> str:
    """Every node runs a 3-cpu pod of priority 0: a 2-cpu pod fits only by preempting."""
    docs = [NODE.format(name=n) for n in ("n1", "n2", "n3")]
    docs += [BUSY.format(name=f"filler-{n}", node=n, cpu="3", priority=0) for n in ("n1", "n2", "n3")]
    path = tmp_path / "full.yaml"
    path.write_text("---".join(docs))
    return str(path)


def preempt(tmp_path, cfg_text: str, mode: str = "explain") -> dict:
    w = load_workload([full_cluster(tmp_path)], [pod(tmp_path, "urgent", cpu="2", priority=100)])
    run = explaining.explain if mode == "explain" else simulate
    return run(w, tie_break="name", config=parse_config(cfg_text, "sched.yaml"))


def test_preempt_verb_chooses_among_the_candidates(tmp_path, extender):
    plain = preempt(tmp_path, config())["pods"][0]
    assert plain["preemption"]["nominatedNode"] == "n1"  # all tied: the smallest name
    assert [a["nominatedNode"] for a in plain["preemption"]["alternatives"]] == ["n1", "n2", "n3"]
    extender.on("preempt", lambda args: {"NodeNameToMetaVictims": {
        "n2": {"Pods": [{"UID": "uid-filler-n2"}], "NumPDBViolations": 0}}})
    [p] = preempt(tmp_path, config({"urlPrefix": extender.url, "preemptVerb": "preempt"}))["pods"]
    [(verb, args, _)] = extender.requests
    assert verb == "preempt" and args["NodeNameToMetaVictims"] is None
    assert args["Pod"]["metadata"]["name"] == "urgent"
    assert sorted(args["NodeNameToVictims"]) == ["n1", "n2", "n3"]
    victims = args["NodeNameToVictims"]["n3"]
    assert victims["NumPDBViolations"] == 0 and [v["metadata"]["uid"] for v in victims["Pods"]] == ["uid-filler-n3"]
    assert p["status"] == "Unschedulable"
    assert p["preemption"]["nominatedNode"] == "n2"
    assert p["preemption"]["victims"] == [{"pod": "default/filler-n2", "priority": 0, "node": "n2"}]
    assert p["preemption"]["extenders"] == [{"extender": extender.url, "verb": "preempt",
                                             "url": extender.url + "/preempt", "nodes": 3, "nodesAfter": 1}]
    # The extender would answer other candidate sets otherwise: the outcome could
    # differ (three equal candidates), but which outcomes is not known.
    assert p["preemption"]["search"] == {"potentialNodes": 3, "candidatesWanted": 3, "nodesWithVictims": 3,
                                         "couldDiffer": True, "outcomes": 3,
                                         "alternativesOmitted": "preemption extenders"}
    assert "alternatives" not in p["preemption"] and all("preemption" not in n for n in p["nodes"])
    # simulate evicts the victim the extender chose and places the pod there.
    extender.requests.clear()
    [p] = preempt(tmp_path, config({"urlPrefix": extender.url, "preemptVerb": "preempt",
                                    "nodeCacheCapable": True}), mode="simulate")["pods"]
    args = extender.requests[0][1]
    assert args["NodeNameToVictims"] is None
    assert args["NodeNameToMetaVictims"]["n1"] == {"Pods": [{"UID": "uid-filler-n1"}], "NumPDBViolations": 0}
    assert p["placedNode"] == "n2"


@pytest.mark.parametrize("reply, ignorable, error", [
    ({"NodeNameToMetaVictims": {"n2": {"Pods": [{"UID": "uid-filler-n1"}]}}}, False,
     "extender: {url} claims to preempt pod (UID: &{{uid-filler-n1}}) on node: n2, but the pod is not found on "
     "that node"),
    ({"NodeNameToMetaVictims": {"n2": {"Pods": []}}}, False, 'expected at least one victim pod on node "n2"'),
    ({"NodeNameToMetaVictims": {"n9": {"Pods": []}}}, False, 'nodeinfo not found for node name "n9"'),
])
def test_preempt_verb_errors(tmp_path, extender, reply, ignorable, error):
    extender.on("preempt", lambda args: reply)
    [p] = preempt(tmp_path, config({"urlPrefix": extender.url, "preemptVerb": "preempt",
                                    "ignorable": ignorable}))["pods"]
    # PostFilter's Error: the pod stays Unschedulable, the error ends its message.
    assert p["status"] == "Unschedulable" and p["preemption"]["nominatedNode"] is None
    assert p["message"].endswith("preemption: " + error.format(url=extender.url))


def test_preempt_verb_ignorable(tmp_path, extender):
    # A node without victims is dropped; a failing call is skipped.
    extender.on("preempt", lambda args: {"NodeNameToMetaVictims": {
        "n1": {"Pods": []}, "n3": {"Pods": [{"UID": "uid-filler-n3"}]}}})
    [p] = preempt(tmp_path, config({"urlPrefix": extender.url, "preemptVerb": "preempt", "ignorable": True}))["pods"]
    assert p["preemption"]["nominatedNode"] == "n3"
    extender.on("preempt", Reply(500))
    [p] = preempt(tmp_path, config({"urlPrefix": extender.url, "preemptVerb": "preempt", "ignorable": True}))["pods"]
    assert p["preemption"]["nominatedNode"] == "n1"
    assert p["preemption"]["extenders"][0]["ignored"] is True


def test_nominated_node_rejected_by_an_extender_filters_every_node(tmp_path, extender):
    path = tmp_path / "nominated.yaml"
    doc = yaml.safe_load(POD.format(name="web", cpu="500m", priority=0, extra=""))
    doc["status"] = {"nominatedNodeName": "n1"}
    path.write_text(yaml.safe_dump(doc))
    extender.on("filter", lambda args: {"NodeNames": [n for n in args["NodeNames"] if n != "n1"],
                                        "FailedNodes": {"n1": "not n1"}})
    [p] = explain(tmp_path, config({"urlPrefix": extender.url, "filterVerb": "filter", "nodeCacheCapable": True}),
                  pods=[str(path)])["pods"]
    # evaluateNominatedNode asks about n1 alone, then every node is filtered and asked about.
    assert [a["NodeNames"] for _, a, _ in extender.requests] == [["n1"], ["n1", "n2", "n3"]]
    assert p["selectedNode"] == "n2" and ext_filter(node(p, "n1"))["reasons"] == ["not n1"]
    # Accepted: the nominated node is the only feasible node.
    extender.requests.clear()
    extender.on("filter", lambda args: {"NodeNames": args["NodeNames"]})
    [p] = explain(tmp_path, config({"urlPrefix": extender.url, "filterVerb": "filter", "nodeCacheCapable": True}),
                  pods=[str(path)])["pods"]
    assert [a["NodeNames"] for _, a, _ in extender.requests] == [["n1"]]
    assert p["selectedNode"] == "n1"


# ---- TLS --------------------------------------------------------------------------------------


@pytest.fixture
def tls_extender(extender_tls):
    server = ExtenderServer(tls=extender_tls).start()
    server.on("filter", lambda args: {"NodeNames": ["n2"]})
    try:
        yield server
    finally:
        server.stop()


def tls_config(server, **fields) -> str:
    return config({"urlPrefix": server.url, "filterVerb": "filter", "nodeCacheCapable": True, **fields})


def test_https_with_the_servers_ca(tmp_path, tls_extender, extender_tls):
    ca_data = extender_tls.ca_data_b64()
    [p] = explain(tmp_path, tls_config(tls_extender, tlsConfig={"caData": ca_data}))["pods"]
    assert p["selectedNode"] == "n2" and tls_extender.verbs() == ["filter"]
    [p] = explain(tmp_path, tls_config(tls_extender, tlsConfig={"caFile": str(extender_tls.ca_cert)}))["pods"]
    assert p["selectedNode"] == "n2"
    # serverName: the certificate names localhost, the URL 127.0.0.1.
    [p] = explain(tmp_path, tls_config(tls_extender, tlsConfig={"caData": ca_data, "serverName": "localhost"}))["pods"]
    assert p["selectedNode"] == "n2"
    [p] = explain(tmp_path, tls_config(tls_extender, tlsConfig={"caData": ca_data,
                                                                "serverName": "other.example"}))["pods"]
    assert p["status"] == "Error" and "tls: failed to verify certificate: x509: certificate is not valid for " \
                                     "other.example" in p["message"]


def test_https_enable_https_without_ca_does_not_verify(tmp_path, tls_extender):
    [p] = explain(tmp_path, tls_config(tls_extender, enableHTTPS=True))["pods"]
    assert p["selectedNode"] == "n2"


def test_https_unknown_authority(tmp_path, tls_extender):
    [p] = explain(tmp_path, tls_config(tls_extender))["pods"]  # system roots only
    assert p["status"] == "Error"
    assert p["message"] == (f'Post "{tls_extender.url}/filter": tls: failed to verify certificate: x509: '
                            "certificate signed by unknown authority")


def test_https_configuration_errors_are_input_errors(tmp_path, tls_extender, extender_tls):
    with pytest.raises(InputError, match="specifying a root certificates file with the insecure flag is not "
                                         "allowed"):
        explain(tmp_path, tls_config(tls_extender, tlsConfig={"caData": extender_tls.ca_data_b64(),
                                                              "insecure": True}))
    with pytest.raises(InputError, match=r"extenders\[0\].tlsConfig.caFile: couldn't create scheduler: open "
                                         r"/nonexistent/ca.crt: no such file or directory"):
        explain(tmp_path, tls_config(tls_extender, tlsConfig={"caFile": "/nonexistent/ca.crt"}))


# ---- bind verb (kschedx bind against the test API server) ---------------------------------------


def _bind_config(tmp_path, server, **fields) -> str:
    path = tmp_path / "bind-sched.yaml"
    path.write_text(config({"urlPrefix": server.url, "bindVerb": "bind", **fields}))
    return str(path)


def _api_bindings(api) -> list:
    return [r for r in api.requests if r.method == "POST" and r.path.endswith("/binding")]


def test_bind_verb_only_with_yes(kube_api, tmp_path, extender, monkeypatch):
    from cluster_scenarios import run, small_cluster
    from kschedx.cli import bind as cli_bind

    small_cluster(kube_api)
    uid = kube_api.get("Pod", "default", "web")["metadata"]["uid"]
    extender.on("bind", lambda args: {"Error": ""})
    cfg = _bind_config(tmp_path, extender)
    kc = str(kube_api.kubeconfig)
    # --dry-run and a confirmation at a terminal never call the bind verb.
    r = run("bind", "default/web", "--dry-run", "--tie-break", "name", "--kubeconfig", kc, "--config", cfg)
    assert r.exit_code == 0, r.stderr
    assert f"binder: extender {extender.url}" in r.stdout
    monkeypatch.setattr(cli_bind, "_interactive", lambda: True)
    r = run("bind", "default/web", "--tie-break", "name", "--kubeconfig", kc, "--config", cfg, input="y\n")
    assert r.exit_code == 1 and "calls its bind verb only with --yes" in r.stdout
    assert extender.requests == [] and _api_bindings(kube_api) == []
    # --yes: the extender binds, not the pods/binding API.
    r = run("bind", "default/web", "--yes", "--tie-break", "name", "--kubeconfig", kc, "--config", cfg, "-o", "json")
    assert r.exit_code == 0, r.stderr
    [(verb, args, _)] = extender.requests
    assert verb == "bind"
    assert args == {"PodName": "web", "PodNamespace": "default", "PodUID": uid, "Node": "n3"}
    assert _api_bindings(kube_api) == []
    doc = json.loads(r.stdout)
    assert doc["bind"]["binder"] == extender.url and doc["bind"]["bound"] is True


def test_bind_verb_failure(kube_api, tmp_path, extender):
    from cluster_scenarios import run, small_cluster

    small_cluster(kube_api)
    kc = str(kube_api.kubeconfig)
    extender.on("bind", lambda args: {"Error": "node is draining"})
    r = run("bind", "default/web", "--yes", "--tie-break", "name", "--kubeconfig", kc,
            "--config", _bind_config(tmp_path, extender))
    assert r.exit_code == 4 and "node is draining" in r.stderr
    assert _api_bindings(kube_api) == []
    # Ignorable: the DefaultBinder binds through the API, as upstream falls back to the Bind plugins.
    r = run("bind", "default/web", "--yes", "--tie-break", "name", "--kubeconfig", kc,
            "--config", _bind_config(tmp_path, extender, ignorable=True))
    assert r.exit_code == 0, r.stderr
    assert len(_api_bindings(kube_api)) == 1 and "node is draining" in r.stdout


def test_bind_skip_extenders_binds_through_the_api(kube_api, tmp_path, extender):
    from cluster_scenarios import run, small_cluster

    small_cluster(kube_api)
    r = run("bind", "default/web", "--yes", "--tie-break", "name", "--kubeconfig", str(kube_api.kubeconfig),
            "--config", _bind_config(tmp_path, extender), "--skip-extenders")
    assert r.exit_code == 0, r.stderr
    assert extender.requests == [] and len(_api_bindings(kube_api)) == 1
    assert "--skip-extenders" in r.stdout


def test_reply_with_a_node_it_was_not_sent(tmp_path, extender):
    def handle(args):
        ghost = json.loads(json.dumps(args["Nodes"]["items"][0]))
        ghost["metadata"]["name"] = "ghost"
        return {"Nodes": {"items": [ghost]}}
    extender.on("filter", handle)
    [p] = explain(tmp_path, config({"urlPrefix": extender.url, "filterVerb": "filter"}))["pods"]
    assert p["status"] == "Error"
    assert p["message"] == (f'extender "{extender.url}" returned a node "ghost" which is not found in the input '
                            "node list")


def test_simulate_asks_the_extender_for_every_pod(tmp_path, extender):
    extender.on("filter", lambda args: {"NodeNames": args["NodeNames"][-1:]})
    pods = [pod(tmp_path, f"p{i}", cpu="1") for i in range(3)]
    w = load_workload([cluster(tmp_path, busy_cpu="")], pods)
    doc = simulate(w, tie_break="name", config=parse_config(
        config({"urlPrefix": extender.url, "filterVerb": "filter", "nodeCacheCapable": True}), "sched.yaml"))
    assert [p["placedNode"] for p in doc["pods"]] == ["n3", "n3", "n3"]
    assert extender.verbs() == ["filter"] * 3


def test_simulate_headline_counts_the_pods_an_extender_errored(tmp_path, extender):
    """A pod whose scheduling cycle stopped with an error is in the headline
    (it is what makes the exit code 1)."""
    import io

    from kschedx.render.simulate import render_simulate

    extender.on("filter", lambda args: {"Error": "license server down"})
    w = load_workload([cluster(tmp_path)], [pod(tmp_path)])
    doc = simulate(w, tie_break="name", config=parse_config(config({"urlPrefix": extender.url,
                                                                    "filterVerb": "filter"}), "sched.yaml"))
    assert doc["summary"]["errors"] == 1
    out = io.StringIO()
    render_simulate(doc, out=out)
    assert ("simulated 1 pod(s): 0 placed (0 by preemption, 0 victim(s)), 0 unschedulable, 0 gated, "
            "1 error(s)\n") in out.getvalue()
