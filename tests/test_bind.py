"""kschedx bind against the local HTTPS test API server: the happy path, every
conflict, preemption, and the promise that nothing is ever bound twice."""

from __future__ import annotations

import json
import re

import pytest

from builders import api_pdb, api_pod
from cluster_scenarios import no_ambient_config, run, small_cluster  # noqa: F401 (fixture)
from kschedx.commands.explain import explain
from kschedx.commands.load import Workload
from kschedx.commands import bind
from kschedx.cli import bind as cli_bind
from kschedx.state.cluster import ClusterState
from kschedx.util.errors import ClusterError
from kschedx.sources.cluster import connect

BINDING = r"/api/v1/namespaces/[^/]+/pods/[^/]+/binding"
EVICTION = r"/api/v1/namespaces/[^/]+/pods/[^/]+/eviction"
STATUS = r"/api/v1/namespaces/[^/]+/pods/[^/]+/status"


def _preemption_evaluated() -> bool:
    doc = explain(Workload(ClusterState(), []))
    return "DefaultPreemption" not in doc["notEvaluated"]


needs_preemption = pytest.mark.skipif(
    not _preemption_evaluated(),
    reason="DefaultPreemption is not evaluated in this build (listed in notEvaluated): "
           "no preemption plan to carry out")


def bindings(api) -> list:
    return [r for r in api.requests if r.method == "POST" and r.path.endswith("/binding")]


def node_of(api, ns, name):
    return (api.get("Pod", ns, name)["spec"]).get("nodeName")


def conn_for(api):
    return connect(str(api.kubeconfig), request_timeout=5)


# ---- the happy path ----------------------------------------------------------------------------


def test_bind_to_the_node_kube_scheduler_would_choose(kube_api):
    small_cluster(kube_api)
    uid = kube_api.get("Pod", "default", "web")["metadata"]["uid"]
    r = run("bind", "default/web", "--yes", "--tie-break", "name", "--kubeconfig", kube_api.kubeconfig)
    assert r.exit_code == 0, r.stderr
    assert node_of(kube_api, "default", "web") == "n3"  # n1 is half full: n3 scores higher
    assert "decision: bind default/web to node n3" in r.stdout
    assert "bound default/web to node n3" in r.stdout
    [post] = bindings(kube_api)
    assert json.loads(post.body) == {
        "kind": "Binding", "apiVersion": "v1",
        "metadata": {"name": "web", "namespace": "default", "uid": uid},
        "target": {"kind": "Node", "name": "n3"}}
    assert post.status == 201
    # the race with a running kube-scheduler is pointed out
    assert "schedulerName default-scheduler" in r.stdout
    # the pod and the node were read again right before the binding
    reads = [r.path for r in kube_api.requests]
    i = reads.index(post.path)
    assert reads[i - 2:i] == ["/api/v1/namespaces/default/pods/web", "/api/v1/nodes/n3"]


def test_bind_json_output_adds_a_bind_section(kube_api):
    small_cluster(kube_api)
    r = run("bind", "default/web", "--yes", "-o", "json", "--tie-break", "name",
            "--kubeconfig", kube_api.kubeconfig)
    assert r.exit_code == 0
    doc = json.loads(r.stdout)  # nothing else on stdout
    assert doc["kind"] == "SchedulingResult" and [p["pod"] for p in doc["pods"]] == ["default/web"]
    assert doc["bind"] == {"pod": "default/web", "node": "n3", "bindable": True, "reason": None,
                           "victims": [], "evicted": [], "dryRun": False, "bound": True,
                           "notes": doc["bind"]["notes"]}
    assert "bound default/web to node n3" in r.stderr


def test_dry_run_writes_nothing(kube_api):
    small_cluster(kube_api)
    r = run("bind", "default/web", "--dry-run", "--tie-break", "name", "-o", "json",
            "--kubeconfig", kube_api.kubeconfig)
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert doc["bind"]["bindable"] and not doc["bind"]["bound"] and doc["bind"]["dryRun"]
    assert "dry run: nothing was changed" in r.stderr
    assert not [x for x in kube_api.requests if x.method != "GET"]
    assert node_of(kube_api, "default", "web") is None


def test_confirmation_on_a_terminal(kube_api, monkeypatch):
    small_cluster(kube_api)
    monkeypatch.setattr(cli_bind, "_interactive", lambda: True)
    kc = kube_api.kubeconfig
    r = run("bind", "default/web", "--tie-break", "name", "--kubeconfig", kc, input="n\n")
    assert r.exit_code == 1 and "Bind default/web to node n3?" in r.stderr and "not bound" in r.stdout
    assert not bindings(kube_api)
    r = run("bind", "default/web", "--tie-break", "name", "--kubeconfig", kc, input="y\n")
    assert r.exit_code == 0 and node_of(kube_api, "default", "web") == "n3"


def test_chosen_node_must_pass_every_filter(kube_api):
    small_cluster(kube_api)
    kc = kube_api.kubeconfig
    r = run("bind", "default/web", "--node", "n2", "--yes", "--kubeconfig", kc)
    assert r.exit_code == 1
    assert "not bindable: node n2 does not pass every Filter: TaintToleration: " \
           "node(s) had untolerated taint(s)" in r.stdout
    r = run("bind", "default/web", "--node", "n9", "--yes", "--kubeconfig", kc)
    assert r.exit_code == 2 and "no node named 'n9'" in r.stderr
    assert not bindings(kube_api)

    r = run("bind", "default/web", "--node", "n1", "--yes", "--tie-break", "name", "--kubeconfig", kc)
    assert r.exit_code == 0, r.stdout + r.stderr
    assert "kube-scheduler would choose node n3; binding to n1 as asked" in r.stdout
    assert node_of(kube_api, "default", "web") == "n1"


def test_unschedulable_pod_is_not_bound(kube_api):
    small_cluster(kube_api)
    r = run("bind", "default/big", "--yes", "--kubeconfig", kube_api.kubeconfig)
    assert r.exit_code == 1
    assert "not bindable:" in r.stdout and "0/3 nodes are available" in r.stdout
    assert not bindings(kube_api)


def test_gated_pod_is_not_bound(kube_api):
    small_cluster(kube_api)
    gated = api_pod("gated")
    gated["spec"]["schedulingGates"] = [{"name": "example.com/wait"}]
    kube_api.add(gated)
    r = run("bind", "default/gated", "--yes", "--kubeconfig", kube_api.kubeconfig)
    assert r.exit_code == 1 and "scheduling gates" in r.stdout
    assert not bindings(kube_api)


# ---- conflicts: exit 4, never bound twice ------------------------------------------------------


@pytest.mark.parametrize("pod, message", [
    ("default/busy-1", "pod default/busy-1 is already bound to node n1"),
    ("default/nope", "pod default/nope not found"),
])
def test_pod_not_pending_before_anything_is_read(kube_api, pod, message):
    small_cluster(kube_api)
    r = run("bind", pod, "--yes", "--kubeconfig", kube_api.kubeconfig)
    assert r.exit_code == 4 and message in r.stderr
    assert kube_api.request_count("/api/v1/pods") == 0  # no full read for a wrong name
    assert not bindings(kube_api)


def test_server_409_aborts_with_its_message(kube_api):
    small_cluster(kube_api)
    message = 'Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "n1"'
    kube_api.inject(BINDING, 409, message=message)
    r = run("bind", "default/web", "--yes", "--kubeconfig", kube_api.kubeconfig)
    assert r.exit_code == 4
    assert message in r.stderr and "default/web not bound" in r.stderr
    assert kube_api.request_count(BINDING) == 1  # sent once, never retried


# ---- a write without a clear answer: the pod is read again, the write never sent again -----------


@pytest.mark.parametrize("fault, cause", [
    (dict(delay=3), "timed out: no answer within 1s"),
    (dict(reset=True), "connection lost"),
    (dict(status=500), "500 InternalError"),
], ids=["timeout", "connection-lost", "5xx"])
def test_binding_that_took_effect_without_an_answer_is_reported_bound(kube_api, fault, cause):
    """The server stored the binding and then its answer never came (or was a
    5xx): kschedx must not claim "not bound"; the pod read again is."""
    small_cluster(kube_api)
    kube_api.inject(BINDING, after=True, **fault)
    r = run("bind", "default/web", "--yes", "--tie-break", "name", "--request-timeout", "1s",
            "--kubeconfig", kube_api.kubeconfig)
    assert node_of(kube_api, "default", "web") == "n3"
    assert r.exit_code == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if "no clear answer" in x)
    assert cause in line and line.endswith("but default/web, read again, is bound to node n3")
    assert "bound default/web to node n3" in r.stdout and "not bound" not in r.stdout + r.stderr
    assert kube_api.request_count(BINDING) == 1  # never sent twice
    reads = [x.path for x in kube_api.requests]
    assert reads[-1] == "/api/v1/namespaces/default/pods/web"  # the one read that settles it


def test_binding_timed_out_before_it_took_effect_says_it_may_still(kube_api):
    """The probe's case: the server is slow and binds after kschedx gave up.
    When read again the pod is not bound yet; kschedx says so without
    claiming it never will be, and never sends the binding again."""
    small_cluster(kube_api)
    kube_api.inject(BINDING, delay=3)
    r = run("bind", "default/web", "--yes", "--tie-break", "name", "--request-timeout", "1s",
            "--kubeconfig", kube_api.kubeconfig)
    assert r.exit_code == 4
    [line] = r.stderr.strip().splitlines()
    assert "binding pod default/web to node n3: timed out: no answer within 1s" in line
    assert ("read again, default/web is not bound (a request still in the server may yet bind it: check "
            "with kubectl get pod web -n default -o jsonpath='{.spec.nodeName}'); nothing was evicted") in line
    assert "; default/web not bound" not in line
    assert kube_api.request_count(BINDING) == 1


def test_binding_without_an_answer_and_a_failed_read_says_it_may_be_bound(kube_api, monkeypatch):
    small_cluster(kube_api)
    conn = connect(str(kube_api.kubeconfig), request_timeout=1)
    p = bind.plan(conn, "default/web", tie_break="name")
    real_bind = conn.bind_pod

    def bind_then_reads_hang(pod, node):
        # From the binding on, reading the pod times out too.
        kube_api.inject(r"/api/v1/namespaces/default/pods/web", method="GET", delay=3)
        real_bind(pod, node)

    monkeypatch.setattr(conn, "bind_pod", bind_then_reads_hang)
    kube_api.inject(BINDING, delay=3, after=True)
    with pytest.raises(ClusterError) as exc:
        bind.execute(conn, p)
    msg = str(exc.value)
    assert "binding pod default/web to node n3: timed out" in msg
    assert "reading the pod again failed too (reading pod default/web: timed out" in msg
    assert msg.endswith("nothing was evicted; default/web may or may not be bound to node n3: check with "
                        "kubectl get pod web -n default -o jsonpath='{.spec.nodeName}'")
    assert "\n" not in msg and kube_api.request_count(BINDING) == 1


def test_binding_refused_with_4xx_is_definite_and_not_read_again(kube_api):
    small_cluster(kube_api)
    kube_api.inject(BINDING, 403)
    r = run("bind", "default/web", "--yes", "--kubeconfig", kube_api.kubeconfig)
    assert r.exit_code == 4 and r.stderr.rstrip().endswith("nothing was evicted; default/web not bound")
    assert "read again" not in r.stderr
    assert kube_api.requests[-1].path.endswith("/binding")  # nothing read after the refusal


def test_bound_by_someone_else_after_the_plan(kube_api):
    """A running kube-scheduler wins the race: the re-read sees it, no binding is sent."""
    small_cluster(kube_api)
    conn = conn_for(kube_api)
    p = bind.plan(conn, "default/web", tie_break="name")
    assert p.bindable and p.node == "n3"
    kube_api.store.update("Pod", "default", "web",
                          lambda pod: {**pod, "spec": {**pod["spec"], "nodeName": "n1"}})
    with pytest.raises(ClusterError, match="pod default/web is already bound to node n1") as exc:
        bind.execute(conn, p)
    assert exc.value.exit_code == 4
    assert not bindings(kube_api)
    assert node_of(kube_api, "default", "web") == "n1"


def test_pod_changed_after_the_plan(kube_api):
    small_cluster(kube_api)
    conn = conn_for(kube_api)
    p = bind.plan(conn, "default/web")
    kube_api.store.update("Pod", "default", "web", lambda pod: pod)  # any write: a new resourceVersion
    with pytest.raises(ClusterError, match=r"pod default/web changed since it was read \(resourceVersion"):
        bind.execute(conn, p)
    assert not bindings(kube_api)


def test_pod_deleted_or_recreated_after_the_plan(kube_api):
    small_cluster(kube_api)
    conn = conn_for(kube_api)
    p = bind.plan(conn, "default/web")
    kube_api.delete("Pod", "default", "web")
    with pytest.raises(ClusterError, match="pod default/web not found"):
        bind.execute(conn, p)
    kube_api.add(api_pod("web", cpu="500m"))  # same name, new UID
    with pytest.raises(ClusterError, match="deleted and re-created"):
        bind.execute(conn, p)
    assert not bindings(kube_api)


def test_node_gone_after_the_plan(kube_api):
    small_cluster(kube_api)
    conn = conn_for(kube_api)
    p = bind.plan(conn, "default/web", tie_break="name")
    kube_api.delete("Node", None, p.node)
    with pytest.raises(ClusterError, match=f"node {p.node} no longer exists"):
        bind.execute(conn, p)
    assert not bindings(kube_api)  # the API server would have accepted it: kschedx checks


def test_stale_uid_is_refused_by_the_server_too(kube_api):
    """Belt and braces: even past kschedx's own checks, the UID in the Binding
    makes the API server refuse a re-created pod."""
    small_cluster(kube_api)
    conn = conn_for(kube_api)
    pod = conn.get_pod("default", "web")
    kube_api.delete("Pod", "default", "web")
    kube_api.add(api_pod("web", cpu="500m"))
    with pytest.raises(ClusterError, match="Precondition failed: UID in precondition"):
        conn.bind_pod(pod, "n3")


# ---- preemption --------------------------------------------------------------------------------


def preemption_cluster(api, *, protected_second_victim: bool = False):
    """default/big (priority 1000, 3.8 CPUs) fits nowhere; on n3 evicting the
    priority-0 pods frees room. With `protected_second_victim`, n3 holds two such
    pods, both must go, and a PodDisruptionBudget forbids evicting the second."""
    small_cluster(api)
    api.store.update("Pod", "default", "big",
                     lambda p: {**p, "spec": {**p["spec"], "priority": 1000}})
    api.store.update("Pod", "team", "busy-2", lambda p: {
        **p, "status": {**p["status"], "startTime": "2025-01-01T00:00:00Z"}})
    if protected_second_victim:
        api.add(api_pod("busy-3", node_name="n3", cpu="500m", namespace="team", labels={"app": "db"}),
                api_pdb("db", namespace="team", match_labels={"app": "db"}, disruptions_allowed=0,
                        desired_healthy=1, current_healthy=1))


@needs_preemption
def test_preempt_then_bind(kube_api):
    preemption_cluster(kube_api)
    kube_api.removal_delay = 0.5
    kc = kube_api.kubeconfig
    r = run("bind", "default/big", "--yes", "--kubeconfig", kc)
    assert r.exit_code == 1 and "pass --preempt" in r.stdout and not bindings(kube_api)

    r = run("bind", "default/big", "--yes", "--preempt", "--timeout", "10s", "--kubeconfig", kc)
    assert r.exit_code == 0, r.stdout + r.stderr
    assert "evict team/busy-2" in r.stdout and "bound default/big to node n3" in r.stdout
    assert kube_api.get("Pod", "team", "busy-2") is None
    assert node_of(kube_api, "default", "big") == "n3"
    assert kube_api.get("Pod", "default", "big")["status"]["nominatedNodeName"] == "n3"
    writes = [(x.method, x.path) for x in kube_api.requests if x.method != "GET"]
    assert writes == [("POST", "/api/v1/namespaces/team/pods/busy-2/eviction"),
                      ("PATCH", "/api/v1/namespaces/default/pods/big/status"),
                      ("POST", "/api/v1/namespaces/default/pods/big/binding")]


@needs_preemption
def test_pdb_refusal_stops_the_whole_bind(kube_api):
    preemption_cluster(kube_api, protected_second_victim=True)
    r = run("bind", "default/big", "--yes", "--preempt", "--kubeconfig", kube_api.kubeconfig)
    assert r.exit_code == 4
    assert "evicting team/busy-3 was refused by a PodDisruptionBudget" in r.stderr
    assert "The disruption budget db needs 1 healthy pods and has 1 currently" in r.stderr
    assert "already evicted: team/busy-2" in r.stderr and "default/big not bound" in r.stderr
    assert kube_api.request_count(EVICTION) == 2
    assert not bindings(kube_api) and kube_api.request_count(STATUS) == 0


def _plan_with_victims(conn, api, victims):
    """A preemption plan as DefaultPreemption would make it (this lets the
    execution be tested whatever the build evaluates)."""
    p = bind.plan(conn, "default/big")
    read = {f"{o['metadata']['namespace']}/{o['metadata']['name']}": o
            for o in conn.read_objects().objects if o["kind"] == "Pod"}
    p.refusal, p.node, p.victims = None, "n3", [read[v] for v in victims]
    return p


def test_execute_evicts_nominates_waits_rechecks_and_binds(kube_api):
    preemption_cluster(kube_api)
    kube_api.removal_delay = 0.4
    conn = conn_for(kube_api)
    p = _plan_with_victims(conn, kube_api, ["team/busy-2"])
    events, waits = [], []
    outcome = bind.execute(conn, p, timeout=10, events=events.append,
                           wait_progress=lambda gone, total: waits.append((gone, total)))
    assert outcome.node == "n3" and outcome.evicted == ["team/busy-2"]
    assert events[:2] == ["evicted team/busy-2", "nominated node n3 for default/big"]
    assert waits[0] == (0, 1) and waits[-1] == (1, 1)
    assert node_of(kube_api, "default", "big") == "n3"
    writes = [(x.method, x.path) for x in kube_api.requests if x.method != "GET"]
    assert writes == [("POST", "/api/v1/namespaces/team/pods/busy-2/eviction"),
                      ("PATCH", "/api/v1/namespaces/default/pods/big/status"),
                      ("POST", "/api/v1/namespaces/default/pods/big/binding")]


def test_execute_stops_at_the_first_pdb_refusal(kube_api):
    preemption_cluster(kube_api, protected_second_victim=True)
    conn = conn_for(kube_api)
    p = _plan_with_victims(conn, kube_api, ["team/busy-2", "team/busy-3", "team/tolerant"])
    with pytest.raises(ClusterError) as exc:
        bind.execute(conn, p)
    msg = str(exc.value)
    assert "evicting team/busy-3 was refused by a PodDisruptionBudget" in msg
    assert "already evicted: team/busy-2" in msg
    assert kube_api.request_count(EVICTION) == 2  # the third victim is left alone
    assert kube_api.get("Pod", "team", "tolerant") is not None
    assert not bindings(kube_api) and kube_api.request_count(STATUS) == 0


def test_execute_gives_up_when_victims_do_not_go(kube_api):
    preemption_cluster(kube_api)
    kube_api.removal_delay = 30  # the kubelet takes its time
    conn = conn_for(kube_api)
    p = _plan_with_victims(conn, kube_api, ["team/busy-2"])
    with pytest.raises(ClusterError, match=r"still terminating after 0.5s .*stays nominated to node n3"):
        bind.execute(conn, p, timeout=0.5)
    assert not bindings(kube_api)
    assert kube_api.get("Pod", "default", "big")["status"]["nominatedNodeName"] == "n3"


def test_execute_rechecks_the_fit_after_the_victims_left(kube_api):
    preemption_cluster(kube_api)
    kube_api.removal_delay = 0.2
    conn = conn_for(kube_api)
    p = _plan_with_victims(conn, kube_api, ["team/busy-2"])
    # While the victim terminates, something else lands on n3.
    kube_api.add(api_pod("sneaky", node_name="n3", cpu="1"))
    with pytest.raises(ClusterError, match="after the preemption node n3 does not fit default/big: "
                                           "NodeResourcesFit: Insufficient cpu"):
        bind.execute(conn, p, timeout=10)
    assert not bindings(kube_api)


def test_eviction_that_took_effect_without_an_answer_counts_as_evicted(kube_api):
    preemption_cluster(kube_api)
    kube_api.removal_delay = 0.4
    kube_api.inject(EVICTION, delay=3, after=True)
    conn = connect(str(kube_api.kubeconfig), request_timeout=1)
    p = _plan_with_victims(conn, kube_api, ["team/busy-2"])
    events = []
    outcome = bind.execute(conn, p, timeout=10, events=events.append)
    assert outcome.evicted == ["team/busy-2"]
    assert events[0].startswith("evicting team/busy-2 got no clear answer (evicting pod team/busy-2: timed out")
    assert re.search(r"\), but read again it is (being deleted|gone): evicted$", events[0])
    assert node_of(kube_api, "default", "big") == "n3"
    assert kube_api.request_count(EVICTION) == 1


def test_eviction_without_an_answer_that_did_not_take_effect_stops(kube_api):
    preemption_cluster(kube_api)
    kube_api.inject(EVICTION, delay=3)
    conn = connect(str(kube_api.kubeconfig), request_timeout=1)
    p = _plan_with_victims(conn, kube_api, ["team/busy-2", "team/tolerant"])
    with pytest.raises(ClusterError) as exc:
        bind.execute(conn, p, timeout=10)
    msg = str(exc.value)
    assert "evicting pod team/busy-2: timed out" in msg
    assert msg.endswith("read again, team/busy-2 is still there, not being deleted (a request still in the "
                        "server may yet evict it); no other pod was evicted; default/big not bound")
    assert "nothing was evicted" not in msg
    assert kube_api.request_count(EVICTION) == 1  # neither sent again nor the next victim's
    assert not bindings(kube_api) and kube_api.request_count(STATUS) == 0


def test_shell_completion_offers_pending_pods(kube_api):
    from click.shell_completion import get_completion_class

    from kschedx.cli.main import main

    small_cluster(kube_api)
    comp = get_completion_class("bash")(main, {}, "kschedx", "_KSCHEDX_COMPLETE")
    args = ["bind", "--kubeconfig", str(kube_api.kubeconfig)]
    assert [c.value for c in comp.get_completions(args, "")] == ["default/big", "default/web", "team/tolerant"]
    assert [c.value for c in comp.get_completions(args, "team/")] == ["team/tolerant"]
    assert comp.get_completions(["bind", "--kubeconfig", "/nonexistent"], "") == []
