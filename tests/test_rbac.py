"""deploy/rbac.yaml grants exactly what kschedx uses: proven against the test API
server enforcing those rules like the RBAC authorizer."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from cluster_scenarios import no_ambient_config, run, small_cluster  # noqa: F401 (fixture)
from kschedx.commands import bind
from kschedx.sources.cluster import connect
from kschedx.sources.kinds import KINDS

ROOT = Path(__file__).resolve().parents[1]


def roles() -> dict[str, list[dict]]:
    docs = list(yaml.safe_load_all((ROOT / "deploy" / "rbac.yaml").read_text()))
    return {d["metadata"]["name"]: d["rules"] for d in docs if d["kind"] == "ClusterRole"}


def grants(rules) -> set[tuple[str, str, str]]:
    return {(g, r, v) for rule in rules for g in rule["apiGroups"] for r in rule["resources"]
            for v in rule["verbs"]}


def test_read_role_is_exactly_the_kinds_read():
    from kschedx.sources.kinds import CONTROLLER_KINDS

    read = {(k.api_version.rpartition("/")[0], k.plural, verb) for k in KINDS + CONTROLLER_KINDS
            for verb in ("get", "list", "watch")}
    assert grants(roles()["kschedx-read"]) == read
    assert not [g for g in grants(roles()["kschedx-read"]) if g[1] in ("secrets", "configmaps")]


def test_bind_role_adds_only_what_bind_writes():
    extra = grants(roles()["kschedx-bind"]) - grants(roles()["kschedx-read"])
    assert extra == {("", "pods/binding", "create"), ("", "pods/eviction", "create"),
                     ("", "pods/status", "patch")}
    assert grants(roles()["kschedx-read"]) <= grants(roles()["kschedx-bind"])


def test_read_role_is_enough_for_explain_snapshot_and_a_dry_run(kube_api, tmp_path):
    small_cluster(kube_api)
    kube_api.authorize(roles()["kschedx-read"])
    kc = kube_api.kubeconfig
    r = run("explain", "--all-pending", "--kubeconfig", kc, "-o", "json")
    assert r.exit_code == 1 and r.stderr == ""  # big fits nowhere; no kind was forbidden
    r = run("snapshot", "-o", tmp_path / "s.json", "--kubeconfig", kc)
    assert r.exit_code == 0 and "warning" not in r.stderr
    assert json.loads((tmp_path / "s.json").read_text())["items"][0]["unreadableKinds"] == {}
    assert run("bind", "default/web", "--dry-run", "--kubeconfig", kc).exit_code == 0
    assert all(r.status != 403 for r in kube_api.requests)

    r = run("bind", "default/web", "--yes", "--kubeconfig", kc)
    assert r.exit_code == 4
    assert 'cannot create resource "pods/binding" in API group "" in the namespace "default"' in r.stderr


def test_bind_role_is_enough_to_bind_and_preempt(kube_api):
    small_cluster(kube_api)
    kube_api.authorize(roles()["kschedx-bind"])
    kube_api.removal_delay = 0.2
    r = run("bind", "default/web", "--node", "n1", "--yes", "--kubeconfig", kube_api.kubeconfig)
    assert r.exit_code == 0, r.stderr
    assert kube_api.get("Pod", "default", "web")["spec"]["nodeName"] == "n1"

    # the writes of --preempt: eviction, nominated node, binding
    kube_api.store.update("Pod", "default", "big", lambda p: {**p, "spec": {**p["spec"], "priority": 9}})
    conn = connect(str(kube_api.kubeconfig), request_timeout=5)
    p = bind.plan(conn, "default/big")
    victim = next(o for o in conn.read_objects().objects if o["metadata"]["name"] == "busy-2")
    p.refusal, p.node, p.victims = None, "n3", [victim]
    bind.execute(conn, p, timeout=10)
    assert kube_api.get("Pod", "default", "big")["spec"]["nodeName"] == "n3"
    assert all(r.status != 403 for r in kube_api.requests)


def test_a_role_without_pdbs_still_works(kube_api):
    small_cluster(kube_api)
    kube_api.authorize([r for r in roles()["kschedx-read"] if r["apiGroups"] != ["policy"]])
    r = run("explain", "default/web", "--kubeconfig", kube_api.kubeconfig, "-o", "json")
    assert r.exit_code == 0
    assert "DefaultPreemption" in json.loads(r.stdout)["notEvaluated"]
    assert 'cannot list resource "poddisruptionbudgets" in API group "policy"' in r.stderr


@pytest.mark.parametrize("verb, group, plural, sub, allowed", [
    ("list", "", "pods", "", True),
    ("create", "", "pods", "binding", False),
    ("list", "", "secrets", "", False),
    ("list", "apps", "pods", "", False),
])
def test_test_server_matches_rules_like_rbac(verb, group, plural, sub, allowed):
    from kubeapi import rbac_allows

    assert rbac_allows(roles()["kschedx-read"], verb, group, plural, sub) is allowed
    assert rbac_allows([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}], verb, group, plural, sub)


def test_read_role_is_enough_to_watch(kube_api):
    from watching import Watching

    small_cluster(kube_api)
    kube_api.bookmark_interval = 0.05
    kube_api.authorize(roles()["kschedx-read"])
    w = Watching(kube_api)
    try:
        w.sync()
        assert len(w.sink.explained()) == 3
    finally:
        w.finish()
    assert all(r.status != 403 for r in kube_api.requests)
    assert w.notices == []


def test_a_role_without_watch_cannot_watch_pods(kube_api):
    small_cluster(kube_api)
    kube_api.authorize([{**r, "verbs": ["get", "list"]} for r in roles()["kschedx-read"]])
    r = run("explain", "--watch", "-A", "--kubeconfig", kube_api.kubeconfig, "-o", "jsonl")
    assert r.exit_code == 4
    assert re.search(r"the role needs the `watch` verb on (nodes|pods) \(deploy/rbac.yaml's kschedx-read has it\)",
                     r.stderr)
    assert json.loads(r.stdout.splitlines()[-1])["watch"]["stopReason"] == "error"
