"""PodDisruptionBudgets as the API server and the disruption controller
compute them (kschedx/api/disruption.py), and kubectl drain's filters
(kschedx/whatif/drain.py): facts from upstream's own tests, ported.

- apimachinery pkg/util/intstr (GetScaledValueFromIntOrPercent)
- k8s pkg/controller/disruption/disruption_test.go (v1.37.2)
- k8s pkg/registry/core/pod/storage/eviction_test.go TestEviction (v1.37.2)
- kubectl pkg/cmd/drain/drain_test.go TestDrain (v0.37.2)
"""

from __future__ import annotations

import pytest

from kschedx.api import disruption
from kschedx.whatif.drain import DrainOptions, error_texts, filter_pods, warnings_text


# -- intstr ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value, total, up, want", [
    (0, 0, True, 0),
    ("0%", 0, True, 0),
    (5, 10, True, 5),
    ("50%", 10, True, 5),
    ("5%", 10, True, 1),  # 0.5 rounded up
    ("5%", 10, False, 0),
    ("1%", 1, True, 1),
    ("34%", 3, True, 2),  # TestReplicationController: "34% should round up to 2"
    ("28%", 11, True, 4),  # TestTwoControllers: minimumOne
    ("28%", 22, True, 7),  # TestTwoControllers: minimumTwo
    ("30%", 7, True, 3),  # TestPercentageMaxUnavailableWithScaling: 7 - ceil(2.1) = 4 desired
    ("20%", 10, True, 2),  # TestReplicaSet
])
def test_scaled_value(value, total, up, want):
    assert disruption.scaled_value(value, total, up) == want


@pytest.mark.parametrize("value, error", [
    ("5", "invalid value for IntOrString: invalid type: string is not a percentage"),
    ("%", 'invalid value for IntOrString: invalid value "%": strconv.Atoi: parsing "": invalid syntax'),
    ("x%", 'invalid value for IntOrString: invalid value "x%": strconv.Atoi: parsing "x": invalid syntax'),
    (None, "nil value for IntOrString"),
])
def test_scaled_value_errors(value, error):
    with pytest.raises(ValueError) as e:
        disruption.scaled_value(value, 10)
    assert str(e.value) == error


# -- the disruption controller (disruption_test.go) ----------------------------------------------------
FOO_BAR = {"foo": "bar"}


def pod(name, labels=None, ready=True, owner=None, terminating=False):
    p = {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}",
                      "labels": dict(FOO_BAR if labels is None else labels)},
         "spec": {}, "status": {"conditions": [{"type": "Ready", "status": "True"}] if ready else []}}
    if owner is not None:
        p["metadata"]["ownerReferences"] = [dict(owner, controller=True)]
    if terminating:
        p["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return p


def pdb(min_available=None, max_unavailable=None, selector=None, status=None):
    spec = {"selector": {"matchLabels": FOO_BAR} if selector is None else selector}
    if min_available is not None:
        spec["minAvailable"] = min_available
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    return {"metadata": {"name": "foo", "namespace": "default", "generation": 1}, "spec": spec,
            "status": status or {}}


def scales(**controllers):
    """scale_of for controllers by uid: (uid, replicas)."""
    def scale_of(ref, namespace):
        found = controllers.get(ref["uid"])
        if isinstance(found, Exception):
            raise found
        return (ref["uid"], found) if found is not None else None
    return scale_of


def status(budget, pods, scale_of=scales()):
    s = disruption.controller_status(budget, [p for p in pods if disruption.selects(budget, p)], scale_of,
                                     ready=disruption.is_pod_ready)
    return (s["disruptionsAllowed"], s["currentHealthy"], s["desiredHealthy"], s["expectedPods"])


def test_no_selector_matches_every_pod_of_the_namespace():
    # TestNoSelector: an empty selector selects every pod.
    budget = pdb(min_available=3, selector={})
    assert status(budget, []) == (0, 0, 3, 0)
    assert status(budget, [pod("yo-yo-yo", labels={})]) == (0, 1, 3, 1)


def test_unavailable():
    # TestUnavailable: counts go up as pods come, currentHealthy down when one is not Ready.
    budget = pdb(min_available=3)
    pods = []
    for i in range(4):
        assert status(budget, pods) == (0, i, 3, i)
        pods.append(pod(f"yo-yo-yo {i}"))
    assert status(budget, pods) == (1, 4, 3, 4)
    pods[0]["status"]["conditions"] = []
    assert status(budget, pods) == (0, 3, 3, 4)


def test_integer_max_unavailable_allows_nothing_for_pods_without_controller():
    # TestIntegerMaxUnavailable
    budget = pdb(max_unavailable=1)
    assert status(budget, [])[0] == 0
    assert status(budget, [pod("naked")])[0] == 0


@pytest.mark.parametrize("max_unavailable, replicas, desired", [(2, 7, 5), (2, 5, 3), ("30%", 7, 4), ("30%", 3, 2)])
def test_max_unavailable_follows_the_controllers_scale(max_unavailable, replicas, desired):
    # TestIntegerMaxUnavailableWithScaling, TestPercentageMaxUnavailableWithScaling
    budget = pdb(max_unavailable=max_unavailable)
    p = pod("pod", owner={"kind": "ReplicaSet", "name": "rs", "uid": "rs-uid"})
    assert status(budget, [p], scales(**{"rs-uid": replicas})) == (0, 1, desired, replicas)


def test_percentage_over_a_naked_pod_allows_nothing():
    # TestNakedPod: the unmanaged pod is left out of the expected count.
    budget = pdb(min_available="28%")
    assert status(budget, [pod("naked")])[0] == 0


def test_percentage_over_an_unsupported_controller_fails_sync():
    # TestUnsupportedControllerPod: failSafe, condition SyncFailed.
    budget = pdb(min_available="28%")
    p = pod("naked", owner={"apiVersion": "apps.test.io/v1", "kind": "TestWorkload", "name": "fake-controller",
                            "uid": "b7329742"})
    s = disruption.controller_status(budget, [p], scales(), ready=disruption.is_pod_ready)
    assert s["disruptionsAllowed"] == 0
    [c] = [c for c in s["conditions"] if c["type"] == "DisruptionAllowed"]
    assert (c["status"], c["reason"], c["message"]) == ("False", "SyncFailed", 'found no controllers for pod "naked"')


def test_replica_set_scale_counts_even_without_deployment():
    # TestReplicaSet
    budget = pdb(min_available="20%")
    p = pod("pod", owner={"kind": "ReplicaSet", "name": "rs", "uid": "rs-uid"})
    assert status(budget, [p], scales(**{"rs-uid": 10})) == (0, 1, 2, 10)


@pytest.mark.parametrize("kind", ["ReplicationController", "StatefulSet"])
def test_controller_scale_with_percentage(kind):
    # TestReplicationController, TestStatefulSetController: 34% of 3 rounds up to 2.
    labels = {"foo": "bar", "baz": "quux"}
    budget = pdb(min_available="34%")
    assert status(budget, []) == (0, 0, 0, 0)
    pods = []
    for i in range(3):
        pods.append(pod(f"foobar {i}", labels=labels, owner={"kind": kind, "name": "c", "uid": "c-uid"}))
        want = (0, i + 1, 2, 3) if i < 2 else (1, 3, 2, 3)
        assert status(budget, pods, scales(**{"c-uid": 3})) == want


def test_two_controllers():
    # TestTwoControllers: 28% of one controller of 11 (4), then of two (7).
    rc_labels = {"foo": "bar", "baz": "quux"}
    rs_labels = {"foo": "bar", "baz": "quuux"}
    budget = pdb(min_available="28%")
    scale_of = scales(**{"rc": 11, "rs": 11})
    pods = []
    unavailable = 11 - 4 - 1
    for i in range(1, 12):
        p = pod(f"quux {i}", labels=rc_labels, ready=i > unavailable, owner={"kind": "ReplicationController",
                                                                             "name": "rc", "uid": "rc"})
        pods.append(p)
        s = status(budget, pods, scale_of)
        if i <= unavailable:
            assert s == (0, 0, 4, 11)
        elif i - unavailable <= 4:
            assert s == (0, i - unavailable, 4, 11)
        else:
            assert s == (1, i - unavailable, 4, 11)
    unavailable = 2 * 11 - (7 + 2) - unavailable
    for i in range(1, 12):
        pods.append(pod(f"quuux {i}", labels=rs_labels, ready=i > unavailable,
                        owner={"kind": "ReplicaSet", "name": "rs", "uid": "rs"}))
    assert status(budget, pods, scale_of) == (2, 9, 7, 22)
    pods[10]["status"]["conditions"] = []
    assert status(budget, pods, scale_of) == (1, 8, 7, 22)
    pods[9]["status"]["conditions"] = []
    assert status(budget, pods, scale_of) == (0, 7, 7, 22)
    pods[10]["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    assert status(budget, pods, scale_of) == (1, 8, 7, 22)


def test_disrupted_pods_kept_only_for_pods_not_yet_terminating():
    # TestUpdateDisruptedPods, without its clock: p1 is terminating and
    # "notthere" gone (both dropped), p3 kept and not counted healthy. (Its
    # entry p2, three minutes old, expires upstream; a run has no clock.)
    budget = pdb(min_available=1, status={"disruptedPods": {"p1": "t", "p3": "t", "notthere": "t"}})
    pods = [pod("p1", terminating=True), pod("p2"), pod("p3")]
    s = disruption.controller_status(budget, pods, scales(), ready=disruption.is_pod_ready)
    assert (s["disruptionsAllowed"], s["currentHealthy"], s["desiredHealthy"], s["expectedPods"]) == (0, 1, 1, 3)
    assert s["disruptedPods"] == {"p3": "t"}


def test_invalid_selector_selects_nothing():
    # TestInvalidSelectors
    budget = pdb(min_available=3, selector={"matchExpressions": [{"key": "k", "operator": "Bogus"}]})
    assert not disruption.selects(budget, pod("p"))


def test_job_has_no_scale_subresource():
    budget = pdb(max_unavailable=1)
    p = pod("p", owner={"kind": "Job", "name": "j", "uid": "j"})
    err = disruption.SyncError("jobs.batch does not implement the scale subresource")
    s = disruption.controller_status(budget, [p], scales(j=err), ready=disruption.is_pod_ready)
    assert s["conditions"][-1]["message"] == "jobs.batch does not implement the scale subresource"


# -- the Eviction subresource (eviction_test.go TestEviction) ----------------------------------------------
def evicted(phase="Running", ready=None, terminating=False, pdb_status=None, selector=None, policy=None,
            generation=None):
    p = {"metadata": {"name": "t", "namespace": "default", "labels": {"a": "true"}}, "spec": {"nodeName": "foo"},
         "status": {"phase": phase}}
    if terminating:
        p["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    budget = {"metadata": {"name": "foo", "namespace": "default"},
              "spec": {"selector": {"matchLabels": {"a": "true"}} if selector is None else selector},
              "status": dict(pdb_status or {})}
    if policy:
        budget["spec"]["unhealthyPodEvictionPolicy"] = policy
    if generation is not None:
        budget["metadata"]["generation"] = generation
    return disruption.evict(p, [("default/foo", budget)], ready=bool(ready))


POLICIES = [None, "IfHealthyBudget", "AlwaysAllow"]


@pytest.mark.parametrize("policy", POLICIES)
def test_pending_pod_is_deleted_whatever_the_budget(policy):
    # "pdbs No disruptions allowed, pod pending ... pod deleted successfully"
    assert evicted(phase="Pending", pdb_status={"disruptionsAllowed": 0}, policy=policy).outcome == "Deleted"


@pytest.mark.parametrize("policy", POLICIES)
def test_terminating_pod_is_deleted_whatever_the_budget(policy):
    # "matching pdbs with no disruptions allowed, pod terminating"
    assert evicted(terminating=True, pdb_status={"disruptionsAllowed": 0}, policy=policy).outcome == "Deleted"


@pytest.mark.parametrize("policy", POLICIES)
def test_healthy_pod_refused_when_the_budget_is_at_its_minimum(policy):
    # "... pod running, pod healthy, unhealthy pod not ours"
    e = evicted(ready=True, policy=policy, pdb_status={"disruptionsAllowed": 0, "currentHealthy": 2,
                                                       "desiredHealthy": 2})
    assert (e.code, e.message, e.cause) == (429, "Cannot evict pod as it would violate the pod's disruption budget.",
                                            "The disruption budget foo needs 2 healthy pods and has 2 currently")


@pytest.mark.parametrize("policy", POLICIES)
def test_healthy_pod_evicted_by_honoring_the_budget(policy):
    # "... disruptions allowed, pod running, pod healthy, healthy pod ours"
    e = evicted(ready=True, policy=policy, pdb_status={"disruptionsAllowed": 1, "currentHealthy": 3,
                                                       "desiredHealthy": 3})
    assert e.outcome == "Evicted"
    assert e.status["disruptionsAllowed"] == 0 and "t" in e.status["disruptedPods"]
    [c] = e.status["conditions"]
    assert (c["type"], c["status"], c["reason"]) == ("DisruptionAllowed", "False", "InsufficientPods")


@pytest.mark.parametrize("policy", POLICIES)
def test_unhealthy_pod_deleted_when_the_budget_is_healthy(policy):
    # "... pod running, pod unhealthy, unhealthy pod ours": currentHealthy >=
    # desiredHealthy > 0 (or AlwaysAllow) deletes it without the budget.
    e = evicted(ready=False, policy=policy, pdb_status={"disruptionsAllowed": 0, "currentHealthy": 2,
                                                        "desiredHealthy": 2})
    assert e.outcome == "Deleted"


@pytest.mark.parametrize("policy, outcome", [("AlwaysAllow", "Deleted"), (None, "Refused"),
                                             ("IfHealthyBudget", "Refused")])
def test_unhealthy_pod_with_an_empty_budget(policy, outcome):
    # "... pod unhealthy, unhealthy pod ours, skips the PDB check and deletes"
    # (AlwaysAllow); the others go on to the budget, which allows nothing.
    e = evicted(ready=False, policy=policy, pdb_status={"disruptionsAllowed": 0})
    assert e.outcome == outcome
    if outcome == "Refused":
        assert e.cause == "The disruption budget foo needs 0 healthy pods and has 0 currently"


def test_empty_selector_guards_every_pod():
    # "... empty selector, pod not deleted by honoring the PDB" (unlike preemption's rule)
    e = evicted(ready=True, selector={}, pdb_status={"disruptionsAllowed": 0, "currentHealthy": 3,
                                                    "desiredHealthy": 3})
    assert e.cause == "The disruption budget foo needs 3 healthy pods and has 3 currently"


def test_sync_failure_is_named():
    # "the error is about sync failure when the condition reason is SyncFailedReason"
    e = evicted(ready=True, selector={}, pdb_status={"disruptionsAllowed": 0, "conditions": [
        {"type": "DisruptionAllowed", "status": "False", "reason": "SyncFailed", "message": "hoge"}]})
    assert e.cause == "The disruption budget foo does not allow evicting pods currently because it failed sync: hoge"


def test_false_condition_reason_is_named():
    # "the error includes the reason when the condition.Status is False"
    e = evicted(ready=True, selector={}, pdb_status={"disruptionsAllowed": 0, "currentHealthy": 4,
                                                    "desiredHealthy": 3, "conditions": [
        {"type": "DisruptionAllowed", "status": "False", "reason": "bar-reason", "message": "hoge"}]})
    assert e.cause == "The disruption budget foo does not allow evicting pods currently (bar-reason): hoge"


def test_negative_disruptions_allowed_is_forbidden():
    # "matching pdbs with negative disruptions allowed, pod running"
    e = evicted(ready=True, pdb_status={"disruptionsAllowed": -1})
    assert (e.code, e.message, e.cause) == (
        403, 'poddisruptionbudget.policy "foo" is forbidden: pdb disruptions allowed is negative',
        "The disruption budget foo does not allow evicting pods currently: pdb disruptions allowed is negative")


def test_too_many_disrupted_pods_is_forbidden():
    # "matching pdbs with too many disrupted pods, pod running"
    many = {f"p{i}": "t" for i in range(disruption.MAX_DISRUPTED_POD_SIZE + 1)}
    e = evicted(ready=True, pdb_status={"disruptionsAllowed": 1, "disruptedPods": many})
    assert e.code == 403 and e.message == ('poddisruptionbudget.policy "foo" is forbidden: DisruptedPods map too big '
                                           "- too many evictions not confirmed by PDB controller")


def test_budget_not_yet_observed_is_still_being_processed():
    e = evicted(ready=True, generation=2, pdb_status={"disruptionsAllowed": 1, "observedGeneration": 1})
    assert (e.code, e.cause) == (429, "The disruption budget foo is still being processed by the server.")


def test_two_budgets_are_refused_with_500():
    p = {"metadata": {"name": "t", "namespace": "default", "labels": {"a": "true"}}, "spec": {},
         "status": {"phase": "Running"}}
    budgets = [(f"default/{n}", {"metadata": {"name": n, "namespace": "default"},
                                 "spec": {"selector": {"matchLabels": {"a": "true"}}},
                                 "status": {"disruptionsAllowed": 5}}) for n in ("a", "b")]
    e = disruption.evict(p, budgets, ready=True)
    assert (e.code, e.message) == (500, "This pod has more than one PodDisruptionBudget, which the eviction "
                                        "subresource does not support.")


def test_no_budget_deletes():
    p = {"metadata": {"name": "t", "namespace": "default", "labels": {"a": "true"}}, "spec": {},
         "status": {"phase": "Running"}}
    assert disruption.evict(p, [], ready=True).outcome == "Deleted"


# -- kubectl drain's filters (pkg/cmd/drain/drain_test.go TestDrain) -----------------------------------------
def drained(pod_, *, force=False, delete_emptydir_data=False, daemon_set_exists=True):
    listed = filter_pods([pod_], DrainOptions(["node"], force=force, delete_emptydir_data=delete_emptydir_data),
                         lambda ns, name: None if daemon_set_exists else f'daemonsets.apps "{name}" not found')
    return [x.key for x in listed if x.delete], error_texts(listed), warnings_text(listed)


def bar(kind=None, phase=None, empty_dir=False):
    p = {"metadata": {"name": "bar", "namespace": "default"}, "spec": {"nodeName": "node"}, "status": {}}
    if kind:
        p["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1" if kind in ("DaemonSet", "ReplicaSet")
                                             else "batch/v1" if kind == "Job" else "v1",
                                             "kind": kind, "name": kind.lower(), "controller": True}]
    if phase:
        p["status"]["phase"] = phase
    if empty_dir:
        p["spec"]["volumes"] = [{"name": "scratch", "emptyDir": {}}]
    return p


@pytest.mark.parametrize("case, flags, deleted, error, warning", [
    ("RC-managed pod", {}, True, "", ""),
    ("DS-managed pod with --ignore-daemonsets", {}, False, "", "ignoring DaemonSet-managed Pods: default/bar"),
    ("DS-managed terminated pod", {}, True, "", ""),
    ("DS-managed pod with emptyDir with --ignore-daemonsets", {}, False, "",
     "ignoring DaemonSet-managed Pods: default/bar"),
    ("Job-managed pod with local storage", {"force": True, "delete_emptydir_data": True}, True, "", ""),
    ("Job-managed terminated pod", {}, True, "", ""),
    ("RS-managed pod", {}, True, "", ""),
    ("naked pod", {}, False, "cannot delete Pods that declare no controller (use --force to override): default/bar",
     ""),
    ("naked pod with --force", {"force": True}, True, "", "deleting Pods that declare no controller: default/bar"),
    ("pod with EmptyDir", {"force": True}, False,
     "cannot delete Pods with local storage (use --delete-emptydir-data to override): default/bar", ""),
    ("terminated pod with emptyDir", {}, True, "", ""),
    ("pod with EmptyDir and --delete-emptydir-data", {"force": True, "delete_emptydir_data": True}, True, "",
     "deleting Pods that declare no controller: default/bar"),
])
def test_kubectl_drain_filters(case, flags, deleted, error, warning):
    pods = {
        "RC-managed pod": bar("ReplicationController"),
        "DS-managed pod with --ignore-daemonsets": bar("DaemonSet"),
        "DS-managed terminated pod": bar("DaemonSet", phase="Succeeded"),
        "DS-managed pod with emptyDir with --ignore-daemonsets": bar("DaemonSet", empty_dir=True),
        "Job-managed pod with local storage": bar("Job", empty_dir=True),
        "Job-managed terminated pod": bar("Job", phase="Succeeded", empty_dir=True),
        "RS-managed pod": bar("ReplicaSet"),
        "naked pod": bar(),
        "naked pod with --force": bar(),
        "pod with EmptyDir": bar(empty_dir=True),
        "terminated pod with emptyDir": bar("ReplicationController", phase="Failed", empty_dir=True),
        "pod with EmptyDir and --delete-emptydir-data": bar(empty_dir=True),
    }
    got_deleted, errors, warnings = drained(pods[case], **flags)
    assert (bool(got_deleted), errors, warnings) == (deleted, [error] if error else [], warning)


def test_orphaned_daemon_set_pod():
    # kubectl's daemonSetFilter: a DaemonSet that does not exist is an error,
    # a deletion with --force, whose warning (the API's NotFound text) the
    # later filters' Okay overwrites, as kubectl's own TODO says.
    assert drained(bar("DaemonSet"), daemon_set_exists=False)[1] == [
        'cannot delete daemonsets.apps "daemonset" not found: default/bar']
    assert drained(bar("DaemonSet"), force=True, daemon_set_exists=False) == (["default/bar"], [], "")


def test_mirror_pod_is_skipped_silently():
    p = bar()
    p["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "x"}
    assert drained(p) == ([], [], "")
