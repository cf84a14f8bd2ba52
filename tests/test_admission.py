"""Defaulting and admission applied to fixture objects (fixture-format.md,
core/v1 defaults.go, the Priority, DefaultTolerationSeconds and RuntimeClass
admission plugins), and the InputErrors for invalid objects."""

import hashlib
import uuid

import pytest
import yaml
from builders import (admitted, fixture_node, match_labels, node_selector_term, required_node_affinity,
                      spread_constraint)
from builders import fixture_pod as pod
from builders import priority_class as pc
from builders import runtime_class as rc

from kschedx.state.cluster import build_cluster
from kschedx.util.errors import InputError
from kschedx.sources.admission import stable_uid
from kschedx.sources.fixtures import Origin

NOT_READY = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
UNREACHABLE = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
               "tolerationSeconds": 300}


def the_pod(cluster, name="p"):
    return next(p for p in cluster.pods if p["metadata"]["name"] == name)


def input_error(*objects, path="test.yaml"):
    with pytest.raises(InputError) as ei:
        admitted(*objects, path=path)
    msg = str(ei.value)
    assert "\n" not in msg
    assert ei.value.exit_code == 3
    return ei.value, msg


# --- metadata -------------------------------------------------------------------


def test_pod_uid_is_sha1_of_namespace_and_name_as_a_uuid():
    p = the_pod(admitted(pod("web", "shop")), "web")
    h = hashlib.sha1(b"shop/web").hexdigest()
    assert p["metadata"]["uid"] == f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"
    uuid.UUID(p["metadata"]["uid"])  # well formed


def test_uid_is_stable_and_kind_specific():
    assert stable_uid("Pod", "a", "b") == stable_uid("Pod", "a", "b")
    assert stable_uid("Pod", "ns", "x") != stable_uid("PersistentVolumeClaim", "ns", "x")
    h = hashlib.sha1(b"PersistentVolumeClaim/ns/x").hexdigest()
    assert stable_uid("PersistentVolumeClaim", "ns", "x").replace("-", "") == h[:32]


def test_given_uid_is_kept():
    p = pod()
    p["metadata"]["uid"] = "given"
    assert the_pod(admitted(p))["metadata"]["uid"] == "given"


def test_namespace_defaults_to_default_for_namespaced_kinds_only():
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"}, "spec": {}}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}
    c = admitted(pod(), pvc, node)
    assert the_pod(c)["metadata"]["namespace"] == "default"
    assert "default/c" in c.persistent_volume_claims
    assert "namespace" not in c.nodes[0]["metadata"]


def test_namespace_gets_its_name_label():
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a", "labels": {"tier": "1"}}}
    c = admitted(ns)
    assert c.namespaces["team-a"]["metadata"]["labels"] == {"tier": "1", "kubernetes.io/metadata.name": "team-a"}
    assert c.namespace_labels("team-a") == {"tier": "1", "kubernetes.io/metadata.name": "team-a"}


def test_implicit_namespace_has_only_its_name_label():
    c = admitted(pod("p", "ghost"))
    # Synthesized like the API server would have it, so a namespaceSelector
    # on kubernetes.io/metadata.name selects it (golden case hand-misc).
    assert c.namespaces["ghost"]["metadata"]["labels"] == {"kubernetes.io/metadata.name": "ghost"}
    assert c.namespace_labels("ghost") == {"kubernetes.io/metadata.name": "ghost"}
    assert c.namespace_labels("never-used") == {}


# --- pod defaults ---------------------------------------------------------------


def test_scheduler_name_defaults():
    assert the_pod(admitted(pod()))["spec"]["schedulerName"] == "default-scheduler"
    assert the_pod(admitted(pod(schedulerName="other")))["spec"]["schedulerName"] == "other"


def test_requests_default_to_limits_in_containers_and_init_containers():
    c = {"name": "c", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "500m"}}}
    i = {"name": "i", "resources": {"limits": {"memory": "64Mi", "example.com/gpu": "1"}}}
    p = the_pod(admitted(pod(containers=[c], initContainers=[i])))
    assert p["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "500m", "memory": "1Gi"}
    assert p["spec"]["initContainers"][0]["resources"]["requests"] == {"memory": "64Mi", "example.com/gpu": "1"}


def test_no_limits_no_requests_added():
    p = the_pod(admitted(pod()))
    assert "resources" not in p["spec"]["containers"][0]


def test_port_protocol_defaults_to_tcp():
    c = {"name": "c", "ports": [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}]}
    p = the_pod(admitted(pod(containers=[c])))
    assert [x["protocol"] for x in p["spec"]["containers"][0]["ports"]] == ["TCP", "UDP"]
    assert all("hostPort" not in x for x in p["spec"]["containers"][0]["ports"])


def test_host_network_ports_become_host_ports():
    c = {"name": "c", "ports": [{"containerPort": 80}, {"containerPort": 81, "hostPort": 9081}]}
    i = {"name": "i", "restartPolicy": "Always", "ports": [{"containerPort": 82}]}
    p = the_pod(admitted(pod(containers=[c], initContainers=[i], hostNetwork=True)))
    assert [x["hostPort"] for x in p["spec"]["containers"][0]["ports"]] == [80, 9081]
    assert p["spec"]["initContainers"][0]["ports"][0]["hostPort"] == 82


def test_pod_level_requests_default_from_containers_and_pod_limits():
    c = {"name": "c", "resources": {"requests": {"cpu": "200m"}}}
    p = the_pod(admitted(pod(containers=[c], resources={"limits": {"cpu": "1", "memory": "1Gi"}})))
    assert p["spec"]["resources"]["requests"] == {"cpu": "200m", "memory": "1Gi"}


def test_pod_level_requests_untouched_without_pod_level_limits():
    p = the_pod(admitted(pod(resources={"requests": {"cpu": "1"}})))
    assert p["spec"]["resources"] == {"requests": {"cpu": "1"}}


# --- priority -------------------------------------------------------------------


def test_priority_from_priority_class_wherever_it_appears():
    c = admitted(pod(priorityClassName="high"), pc("high", 1000, policy="Never"))
    p = the_pod(c)
    assert p["spec"]["priority"] == 1000
    assert p["spec"]["preemptionPolicy"] == "Never"


def test_priority_from_global_default_class():
    c = admitted(pc("low", 5), pc("default", 100, global_default=True), pod())
    p = the_pod(c)
    assert (p["spec"]["priority"], p["spec"]["priorityClassName"]) == (100, "default")
    assert p["spec"]["preemptionPolicy"] == "PreemptLowerPriority"


def test_lowest_of_several_global_defaults_wins():
    c = admitted(pc("a", 100, global_default=True), pc("b", 50, global_default=True), pod())
    assert the_pod(c)["spec"]["priority"] == 50


def test_priority_zero_without_any_class():
    p = the_pod(admitted(pod()))
    assert p["spec"]["priority"] == 0
    assert p["spec"]["preemptionPolicy"] == "PreemptLowerPriority"
    assert "priorityClassName" not in p["spec"]


@pytest.mark.parametrize("name, value", [("system-cluster-critical", 2000000000), ("system-node-critical", 2000001000)])
def test_system_priority_classes_always_exist(name, value):
    p = the_pod(admitted(pod(priorityClassName=name)))
    assert p["spec"]["priority"] == value
    assert p["spec"]["preemptionPolicy"] == "PreemptLowerPriority"


def test_given_priority_and_policy_are_kept():
    p = the_pod(admitted(pod(priority=7, preemptionPolicy="Never"), pc("d", 100, global_default=True)))
    assert (p["spec"]["priority"], p["spec"]["preemptionPolicy"]) == (7, "Never")


def test_class_without_policy_gives_preempt_lower_priority():
    p = the_pod(admitted(pod(priorityClassName="x"), pc("x", 3)))
    assert p["spec"]["preemptionPolicy"] == "PreemptLowerPriority"


def test_missing_priority_class_is_an_input_error():
    err, msg = input_error(pod("web", "shop", priorityClassName="nope"), path="cluster.yaml")
    assert msg.startswith("cluster.yaml: Pod/shop/web: field spec.priorityClassName: ")
    assert "no PriorityClass with name nope was found" in msg
    assert (err.obj, err.field) == ("Pod/shop/web", "spec.priorityClassName")


# --- DefaultTolerationSeconds ---------------------------------------------------


def test_default_tolerations_added():
    p = the_pod(admitted(pod(tolerations=[{"key": "x", "operator": "Exists"}])))
    assert p["spec"]["tolerations"] == [{"key": "x", "operator": "Exists"}, NOT_READY, UNREACHABLE]


@pytest.mark.parametrize(
    "tolerations, added",
    [
        ([{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}],
         [UNREACHABLE]),
        ([{"key": "node.kubernetes.io/unreachable", "operator": "Exists"}], [NOT_READY]),
        ([{"operator": "Exists"}], []),  # tolerates everything
        ([{"operator": "Exists", "effect": "NoExecute"}], []),
        ([{"operator": "Exists", "effect": "NoSchedule"}], [NOT_READY, UNREACHABLE]),
        ([{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"}],
         [NOT_READY, UNREACHABLE]),
    ],
)
def test_default_tolerations_not_added_when_already_tolerated(tolerations, added):
    p = the_pod(admitted(pod(tolerations=[dict(t) for t in tolerations])))
    assert p["spec"]["tolerations"] == tolerations + added


# --- nodes ----------------------------------------------------------------------


def test_node_allocatable_from_capacity():
    n = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"capacity": {"cpu": "4", "pods": "110"}}}
    c = admitted(n)
    assert c.nodes[0]["status"]["allocatable"] == {"cpu": "4", "pods": "110"}


def test_node_allocatable_kept_when_given():
    n = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
         "status": {"capacity": {"cpu": "4"}, "allocatable": {"cpu": "3500m"}}}
    assert admitted(n).nodes[0]["status"]["allocatable"] == {"cpu": "3500m"}


def test_node_without_status():
    c = admitted({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}})
    assert c.nodes[0]["status"] == {}


# --- RuntimeClass ---------------------------------------------------------------


def test_runtime_class_overhead_and_scheduling():
    c = admitted(pod(runtimeClassName="kata", nodeSelector={"zone": "a"}),
                 rc("kata", {"cpu": "250m", "memory": "120Mi"}, {"sandbox": "true"},
                    [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}]))
    p = the_pod(c)
    assert p["spec"]["overhead"] == {"cpu": "250m", "memory": "120Mi"}
    assert p["spec"]["nodeSelector"] == {"sandbox": "true", "zone": "a"}
    assert {"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"} in p["spec"]["tolerations"]


def test_pod_overhead_is_kept():
    p = the_pod(admitted(pod(runtimeClassName="kata", overhead={"cpu": "1"}), rc("kata", {"cpu": "250m"})))
    assert p["spec"]["overhead"] == {"cpu": "1"}


def test_missing_runtime_class_leaves_the_pod_alone():
    p = the_pod(admitted(pod(runtimeClassName="gone")))
    assert "overhead" not in p["spec"]


# --- cluster assembly -----------------------------------------------------------


def test_terminal_pods_are_ignored_and_other_kinds_noted():
    done = pod("done", nodeName="n")
    done["status"] = {"phase": "Succeeded"}
    failed = pod("failed")
    failed["status"] = {"phase": "Failed"}
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
    c = admitted(done, failed, pod("live"), cm, dict(cm, metadata={"name": "y"}))
    assert [p["metadata"]["name"] for p in c.pods] == ["live"]
    assert c.notes == ["ignored 2 ConfigMap object(s): the scheduler does not read them"]


def test_bound_and_pending_pods():
    c = admitted(pod("a", nodeName="n1"), pod("b"))
    assert [p["metadata"]["name"] for p in c.bound_pods()] == ["a"]
    assert [p["metadata"]["name"] for p in c.pending_pods()] == ["b"]


# --- invalid objects ------------------------------------------------------------


@pytest.mark.parametrize(
    "obj, field",
    [
        (pod(containers=[{"name": "c", "resources": {"requests": {"cpu": "1x"}}}]), "spec.containers[0].resources.requests.cpu"),
        (pod(containers=[{"name": "c", "resources": {"limits": {"memory": "lots"}}}]), "spec.containers[0].resources.limits.memory"),
        (pod(initContainers=[{"name": "i", "resources": {"requests": {"cpu": "--1"}}}]),
         "spec.initContainers[0].resources.requests.cpu"),
        (pod(overhead={"cpu": "x"}), "spec.overhead.cpu"),
        (pod(resources={"requests": {"memory": "1.5.5"}}), "spec.resources.requests.memory"),
        ({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"capacity": {"cpu": "abc"}}},
         "status.capacity.cpu"),
        ({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"pods": True}}},
         "status.allocatable.pods"),
        ({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
          "spec": {"resources": {"requests": {"storage": "10 Gi"}}}}, "spec.resources.requests.storage"),
    ],
)
def test_invalid_quantity_names_file_object_and_field(obj, field):
    err, msg = input_error(obj, path="f.yaml")
    assert err.field == field
    assert f"field {field}: invalid quantity" in msg
    assert msg.startswith("f.yaml: ")


def test_invalid_quantity_message():
    _, msg = input_error(pod("web", "shop", containers=[{"name": "c", "resources": {"requests": {"cpu": "1x"}}}]))
    assert msg.startswith("test.yaml: Pod/shop/web: field spec.containers[0].resources.requests.cpu: invalid quantity '1x'")


def test_duplicate_objects():
    objs = [(pod("a", "ns"), Origin("one.yaml", 1)), (pod("a", "ns"), Origin("two.yaml", 3))]
    with pytest.raises(InputError) as ei:
        build_cluster(objs)
    assert str(ei.value) == ("two.yaml (document 3): Pod/ns/a: duplicate object: Pod/ns/a is also defined in one.yaml")


def test_an_objects_metadata_error_comes_before_an_earlier_pods_spec_error():
    """Pods are admitted as their metadata is checked (one pass), yet the
    error reported is the one of a metadata-first order: every object's
    metadata and duplicates, then the pods' specs, first pod first."""
    bad_spec = pod("web", "shop", containers=[{"name": "c", "resources": {"requests": {"cpu": "1x"}}}])
    other_bad_spec = pod("api", "shop", containers=[{"name": "c", "resources": {"requests": {"cpu": "2y"}}}])
    _, msg = input_error(bad_spec, other_bad_spec, pod("web", "shop"))
    assert "duplicate object: Pod/shop/web" in msg
    _, msg = input_error(bad_spec, other_bad_spec, {"apiVersion": "v1", "kind": "Node", "metadata": {}})
    assert "object has no metadata.name" in msg
    _, msg = input_error(bad_spec, other_bad_spec, pod("ok", "shop"))
    assert "Pod/shop/web" in msg and "'1x'" in msg


def test_same_name_in_different_namespaces_is_not_a_duplicate():
    c = admitted(pod("a", "ns1"), pod("a", "ns2"))
    assert len(c.pods) == 2


def test_duplicate_priority_class():
    err, msg = input_error(pc("x", 1), pc("x", 2))
    assert "duplicate object: PriorityClass/x is also defined in test.yaml" in msg


@pytest.mark.parametrize(
    "obj, fragment",
    [
        ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}, "field spec: pod has no spec"),
        (pod(containers=[]), "field spec.containers: pod has no containers"),
        ({"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": {}}, "field metadata.name: object has no metadata.name"),
        (pc("x", "high"), "PriorityClass/x: field value: must be an integer"),
        (pod(priority="high"), "field spec.priority: must be an integer"),
        (pod(containers=["c"]), "field spec.containers[0]: must be a mapping, not str 'c'"),
        ({"apiVersion": "v1", "kind": "Node", "metadata": "n"}, "field metadata: metadata must be a mapping"),
    ],
)
def test_invalid_objects(obj, fragment):
    _, msg = input_error(obj)
    assert fragment in msg


@pytest.mark.parametrize(
    "obj, expected",
    [
        (pod(tolerations=["x"]), "Pod/default/p: field spec.tolerations[0]: must be a mapping, not str 'x'"),
        (pod(containers={"name": "c", "image": "i"}), "Pod/default/p: field spec.containers: must be a list, not a mapping"),
        (pod(priorityClassName=["a"]), "Pod/default/p: field spec.priorityClassName: must be a string, not a list"),
        ({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": "Ready"},
         "Node/n: field status: must be a mapping, not str 'Ready'"),
        ({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n", "labels": ["a"]}},
         "Namespace/n: field metadata.labels: must be a mapping, not a list"),
    ],
)
def test_fields_of_the_wrong_shape_are_input_errors(obj, expected):
    _, msg = input_error(obj)
    assert msg == f"test.yaml: {expected}"


# --- what the API server's validation refuses ------------------------------------


@pytest.mark.parametrize("resources, field", [
    ({"requests": {"cpu": "-1"}}, "spec.containers[0].resources.requests.cpu"),
    ({"limits": {"memory": "-1Gi"}}, "spec.containers[0].resources.limits.memory"),
])
def test_negative_quantities_are_refused(resources, field):
    p = pod(containers=[{"name": "c", "image": "i", "resources": resources}])
    err, msg = input_error(p)
    assert err.field == field
    assert msg.endswith("must be greater than or equal to 0")


def test_negative_node_capacity_is_refused():
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
            "status": {"capacity": {"cpu": "-4"}}}
    err, msg = input_error(node)
    assert err.field == "status.capacity.cpu" and "greater than or equal to 0" in msg


def test_requests_above_limits_are_refused():
    p = pod(containers=[{"name": "c", "image": "i",
                         "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1500m"}}}])
    err, msg = input_error(p)
    assert err.field == "spec.containers[0].resources.requests.cpu"
    assert msg.endswith("'2' must be less than or equal to cpu limit of 1500m")


def test_requests_equal_to_limits_are_fine():
    p = pod(containers=[{"name": "c", "image": "i",
                         "resources": {"requests": {"cpu": "1000m"}, "limits": {"cpu": "1"}}}])
    assert the_pod(admitted(p))["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "1000m"


def _spread(**c):
    base = spread_constraint(1, "zone", "DoNotSchedule", match_labels(app="web"))
    base.update(c)
    return pod(topologySpreadConstraints=[base])


_VALUE_RULE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
               "and must start and end with an alphanumeric character, at most 63 characters")
_NAME_RULE = ("must be a qualified name: an optional DNS subdomain prefix and '/', then at most 63 alphanumeric "
              "characters, '-', '_' or '.', starting and ending with an alphanumeric one")


_NODE_REQ = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"


def _node_affinity(*exprs):
    return pod(affinity={"nodeAffinity": required_node_affinity(node_selector_term(*exprs))})


@pytest.mark.parametrize("obj, field, message", [
    (_node_affinity({"key": "a", "operator": "Foo", "values": ["x"]}), f"{_NODE_REQ}.matchExpressions[0].operator",
     "unsupported value 'Foo': supported values: In, NotIn, Exists, DoesNotExist, Gt, Lt"),
    (_node_affinity({"key": "a", "operator": "In"}), f"{_NODE_REQ}.matchExpressions[0].values",
     "must be specified when `operator` is 'In' or 'NotIn'"),
    (_node_affinity({"key": "a", "operator": "Gt", "values": ["ten"]}), f"{_NODE_REQ}.matchExpressions[0].values[0]",
     "'ten': must be an integer for 'Lt' or 'Gt'"),
    (pod(affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"a": "b"}}}]}}),
     "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey", "can not be empty"),
    (pod(affinity={"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 0, "podAffinityTerm": {"topologyKey": "zone"}}]}}),
     "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight", "0: must be in the range 1-100"),
    (pod(affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "zone", "labelSelector": {"matchExpressions": [{"key": "a", "operator": "Equals"}]}}]}}),
     "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0]"
     ".operator", "'Equals' is not a valid label selector operator (supported: In, NotIn, Exists, DoesNotExist)"),
    (_spread(maxSkew=0), "spec.topologySpreadConstraints[0].maxSkew", "0: must be greater than zero"),
    (_spread(topologyKey=""), "spec.topologySpreadConstraints[0].topologyKey", "can not be empty"),
    (_spread(whenUnsatisfiable="Never"), "spec.topologySpreadConstraints[0].whenUnsatisfiable",
     "unsupported value 'Never': supported values: DoNotSchedule, ScheduleAnyway"),
    (_spread(minDomains=2, whenUnsatisfiable="ScheduleAnyway"), "spec.topologySpreadConstraints[0].minDomains",
     "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"),
    (_spread(nodeAffinityPolicy="Honr"), "spec.topologySpreadConstraints[0].nodeAffinityPolicy",
     "unsupported value 'Honr': supported values: Honor, Ignore"),
    (_spread(nodeTaintsPolicy=""), "spec.topologySpreadConstraints[0].nodeTaintsPolicy",
     "unsupported value '': supported values: Honor, Ignore"),
    (pod(nodeSelector={"zone": "us east"}), "spec.nodeSelector.zone", f"'us east': {_VALUE_RULE}"),
    (pod(nodeSelector={"bad key!": "x"}), "spec.nodeSelector", f"'bad key!': {_NAME_RULE}"),
    (pod(tolerations=[{"key": "a", "operator": "Exists", "value": "x"}]), "spec.tolerations[0].operator",
     "value must be empty when `operator` is 'Exists'"),
    (pod(tolerations=[{"key": "a", "operator": "Equals", "value": "x"}]), "spec.tolerations[0].operator",
     "unsupported value 'Equals': supported values: Equal, Exists"),
    (pod(tolerations=[{"key": "a", "value": "x", "effect": "NoScheduling"}]), "spec.tolerations[0].effect",
     "unsupported value 'NoScheduling': supported values: NoSchedule, PreferNoSchedule, NoExecute"),
])
def test_what_the_api_server_refuses_is_an_input_error(obj, field, message):
    err, msg = input_error(obj)
    assert err.field == field
    assert msg == f"test.yaml: Pod/default/p: field {field}: {message}"


def _tainted(*taints):
    node = fixture_node("n1")
    node["spec"] = {"taints": list(taints)}
    return node


@pytest.mark.parametrize("node, field, message", [
    # A misspelled effect is one no plugin reads: the node would take every pod.
    (_tainted({"key": "dedicated", "value": "infra", "effect": "NoSchedul"}), "spec.taints[0].effect",
     "unsupported value 'NoSchedul': supported values: NoSchedule, PreferNoSchedule, NoExecute"),
    (_tainted({"key": "dedicated", "value": "infra"}), "spec.taints[0].effect",
     "required value: supported values: NoSchedule, PreferNoSchedule, NoExecute"),
    (_tainted({"key": "tier", "value": "-3", "effect": "NoSchedule"}), "spec.taints[0].value",
     f"'-3': {_VALUE_RULE}"),
    (_tainted({"key": "tier", "value": "x" * 64, "effect": "NoSchedule"}), "spec.taints[0].value",
     f"'{'x' * 64}': {_VALUE_RULE}"),
    (_tainted({"value": "x", "effect": "NoSchedule"}), "spec.taints[0].key", f"'': {_NAME_RULE}"),
    (_tainted({"key": "bad key", "effect": "NoSchedule"}), "spec.taints[0].key", f"'bad key': {_NAME_RULE}"),
    (_tainted({"key": "a", "value": "1", "effect": "NoSchedule"}, {"key": "b", "effect": "NoSchedule"},
              {"key": "a", "value": "2", "effect": "NoSchedule"}), "spec.taints[2]",
     "duplicate taint a:NoSchedule: taints must be unique by key and effect pair"),
])
def test_a_node_taint_the_api_server_refuses_is_an_input_error(node, field, message):
    err, msg = input_error(node)
    assert err.field == field
    assert msg == f"test.yaml: Node/n1: field {field}: {message}"


def test_valid_node_taints_pass_validation():
    node = _tainted({"key": "example.com/gpu", "effect": "NoSchedule"},
                    {"key": "example.com/gpu", "value": "a-1_b.c", "effect": "PreferNoSchedule"},
                    {"key": "tier", "value": "9223372036854775808", "effect": "NoExecute"})
    cluster = admitted(node)
    assert [t["effect"] for t in cluster.nodes[0]["spec"]["taints"]] == ["NoSchedule", "PreferNoSchedule",
                                                                         "NoExecute"]


@pytest.mark.parametrize("toleration, field, message", [
    ({"key": "tier", "operator": "Equal", "value": "-3"}, "spec.tolerations[0].operator", f"'-3': {_VALUE_RULE}"),
    ({"key": "tier", "value": "a b"}, "spec.tolerations[0].operator", f"'a b': {_VALUE_RULE}"),
    ({"key": "bad/key/x", "operator": "Exists"}, "spec.tolerations[0].key", f"'bad/key/x': {_NAME_RULE}"),
])
def test_a_toleration_key_or_value_the_api_server_refuses(toleration, field, message):
    err, msg = input_error(pod(tolerations=[toleration]))
    assert err.field == field
    assert msg == f"test.yaml: Pod/default/p: field {field}: {message}"


@pytest.mark.parametrize("resources, field, message", [
    # A misspelled cpu asked for nothing any plugin checks: the pod went anywhere.
    ({"requests": {"cpus": "200"}}, "spec.containers[0].resources.requests.cpus",
     "invalid resource name 'cpus': must be a standard resource for containers (cpu, memory, ephemeral-storage, "
     "hugepages-<size>) or fully qualified (example.com/gpu)"),
    ({"limits": {"pods": "2"}}, "spec.containers[0].resources.limits.pods",
     "invalid resource name 'pods': must be a standard resource for containers (cpu, memory, ephemeral-storage, "
     "hugepages-<size>) or fully qualified (example.com/gpu)"),
    ({"requests": {"requests.example.com/gpu": "1"}}, "spec.containers[0].resources.requests.requests.example.com/gpu",
     "invalid resource name 'requests.example.com/gpu': doesn't follow extended resource name standard"),
    ({"requests": {"example.com/g pu": "1"}}, "spec.containers[0].resources.requests.example.com/g pu",
     "invalid resource name 'example.com/g pu': must be a qualified name (an optional DNS subdomain prefix and '/', "
     "then a name)"),
])
def test_a_container_resource_name_the_api_server_refuses(resources, field, message):
    p = pod()
    p["spec"]["containers"][0]["resources"] = resources
    err, msg = input_error(p)
    assert err.field == field
    assert msg == f"test.yaml: Pod/default/p: field {field}: {message}"


def test_pod_level_resources_take_cpu_memory_and_hugepages_only():
    p = pod()
    p["spec"]["resources"] = {"requests": {"ephemeral-storage": "1Gi"}}
    err, msg = input_error(p)
    assert err.field == "spec.resources.requests.ephemeral-storage"
    assert msg.endswith('unsupported value: supported values: "cpu", "hugepages-", "memory"')
    ok = pod()
    ok["spec"]["resources"] = {"requests": {"cpu": "1", "memory": "1Gi", "hugepages-2Mi": "2Mi"}}
    ok["spec"]["containers"][0]["resources"] = {"requests": {
        "cpu": "1", "ephemeral-storage": "1Gi", "hugepages-1Gi": "1Gi", "example.com/gpu": "1",
        "kubernetes.io/anything": "1"}, "limits": {"hugepages-1Gi": "1Gi", "example.com/gpu": "1"}}
    assert the_pod(admitted(ok))


def test_valid_scheduling_fields_pass_validation():
    ok = pod(nodeSelector={"topology.kubernetes.io/zone": "us-east-1a", "disk": ""}, tolerations=[{"operator": "Exists"}, {"key": "a", "operator": "Equal", "value": "b",
                                                   "effect": "NoExecute", "tolerationSeconds": 5}],
             affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                 {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["3"]},
                                       {"key": "b", "operator": "Exists"}]}]}},
                       "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                           {"topologyKey": "kubernetes.io/hostname",
                            "labelSelector": {"matchExpressions": [{"key": "a", "operator": "In", "values": ["x"]}]}}]}},
             topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                         "minDomains": 3, "nodeAffinityPolicy": "Ignore",
                                         "nodeTaintsPolicy": "Honor"}])
    assert the_pod(admitted(ok))


def _with_container(**fields):
    p = pod()
    p["spec"]["containers"][0].update(fields)
    return p


def _with_init(**fields):
    p = pod()
    p["spec"]["initContainers"] = [{"name": "init", "image": "i", **fields}]
    return p


def _labelled(labels):
    p = pod()
    p["metadata"]["labels"] = labels
    return p


_ANTI = "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"


def _anti(**term):
    term = {"topologyKey": "zone", "labelSelector": {"matchLabels": {"app": "web"}}, **term}
    return pod(affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}})


def _fields(*reqs):
    return pod(affinity={"nodeAffinity": required_node_affinity({"matchFields": list(reqs)})})


_C0 = "spec.containers[0]"


@pytest.mark.parametrize("obj, field, message", [
    # A misspelled protocol is a host port no other pod's conflicts with: NodePorts passed every node.
    (_with_container(ports=[{"containerPort": 80, "hostPort": 8080, "protocol": "TPC"}]), f"{_C0}.ports[0].protocol",
     'unsupported value \'TPC\': supported values: "SCTP", "TCP", "UDP"'),
    (_with_container(ports=[{"containerPort": 80, "hostPort": 70000}]), f"{_C0}.ports[0].hostPort",
     "70000: must be between 1 and 65535, inclusive"),
    (_with_container(ports=[{"hostPort": 8080}]), f"{_C0}.ports[0].containerPort", "required value"),
    # Never misspelled: the pod would preempt.
    (pod(preemptionPolicy="Nevr"), "spec.preemptionPolicy",
     'unsupported value \'Nevr\': supported values: "Never", "PreemptLowerPriority"'),
    (pod(schedulingGates=[{"name": "example.com/a"}, {"name": "example.com/a"}]), "spec.schedulingGates[1].name",
     "duplicate value 'example.com/a'"),
    (pod(schedulingGates=[{"name": "wait for it"}]), "spec.schedulingGates[0].name", f"'wait for it': {_NAME_RULE}"),
    # Always misspelled: a sidecar's requests would add up as a plain init container's.
    (_with_init(restartPolicy="Allways"), "spec.initContainers[0].restartPolicy",
     'unsupported value \'Allways\': supported values: "Always", "Never", "OnFailure"'),
    (pod(restartPolicy="Allways"), "spec.restartPolicy",
     'unsupported value \'Allways\': supported values: "Always", "Never", "OnFailure"'),
    (_with_container(resources={"requests": {"example.com/gpu": "1"}}), f"{_C0}.resources.limits",
     "limit must be set for example.com/gpu: it cannot be overcommitted, its request needs an equal limit"),
    (_with_container(resources={"requests": {"example.com/gpu": "1"}, "limits": {"example.com/gpu": "2"}}),
     f"{_C0}.resources.requests.example.com/gpu", "'1' must be equal to example.com/gpu limit of 2"),
    (_with_container(resources={"limits": {"example.com/gpu": "500m"}}), f"{_C0}.resources.limits.example.com/gpu",
     "'500m': must be an integer"),
    (_with_container(resources={"requests": {"cpu": "1", "hugepages-2Mi": "2Mi"}}), f"{_C0}.resources.limits",
     "limit must be set for hugepages-2Mi: it cannot be overcommitted, its request needs an equal limit"),
    (_with_container(resources={"limits": {"hugepages-2Mi": "2Mi"}}), f"{_C0}.resources",
     "HugePages require cpu or memory"),
    (_anti(topologyKey="zone name"), f"{_ANTI}.topologyKey", f"'zone name': {_NAME_RULE}"),
    (_anti(matchLabelKeys=["pod template hash"]), f"{_ANTI}.matchLabelKeys[0]", f"'pod template hash': {_NAME_RULE}"),
    (_anti(labelSelector=None, mismatchLabelKeys=["tenant"]), f"{_ANTI}.mismatchLabelKeys",
     "must not be specified when labelSelector is not set"),
    (_anti(labelSelector={"matchLabels": {"app": "web server"}}), f"{_ANTI}.labelSelector.matchLabels.app",
     f"'web server': {_VALUE_RULE}"),
    (_anti(labelSelector={"matchExpressions": [{"key": "a b", "operator": "Exists"}]}),
     f"{_ANTI}.labelSelector.matchExpressions[0].key", f"'a b': {_NAME_RULE}"),
    (_node_affinity({"key": "a b", "operator": "Exists"}), f"{_NODE_REQ}.matchExpressions[0].key",
     f"'a b': {_NAME_RULE}"),
    (_fields({"key": "metadata.nam", "operator": "In", "values": ["n1"]}), f"{_NODE_REQ}.matchFields[0].key",
     "'metadata.nam': not a valid field selector key (supported: metadata.name)"),
    (_fields({"key": "metadata.name", "operator": "In", "values": ["n1", "n2"]}),
     f"{_NODE_REQ}.matchFields[0].values",
     "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"),
    (_fields({"key": "metadata.name", "operator": "Exists"}), f"{_NODE_REQ}.matchFields[0].operator",
     "unsupported value 'Exists': supported values: In, NotIn"),
    (_fields({"key": "metadata.name", "operator": "In", "values": ["Node_1"]}),
     f"{_NODE_REQ}.matchFields[0].values[0]", "'Node_1': not a valid node name (a lowercase RFC 1123 subdomain)"),
    (pod(topologySpreadConstraints=[spread_constraint(1, "zone", "DoNotSchedule", match_labels(app="web")),
                                    spread_constraint(2, "zone", "DoNotSchedule", match_labels(app="db"))]),
     "spec.topologySpreadConstraints[1]",
     "duplicate constraint {zone, DoNotSchedule}: each topologyKey and whenUnsatisfiable pair may appear once"),
    (_spread(labelSelector=None, matchLabelKeys=["app"]), "spec.topologySpreadConstraints[0].matchLabelKeys",
     "must not be specified when labelSelector is not set"),
    (_labelled({"app": "web server"}), "metadata.labels.app", f"'web server': {_VALUE_RULE}"),
    (_labelled({"-app": "web"}), "metadata.labels", f"'-app': {_NAME_RULE}"),
])
def test_more_of_what_the_api_server_refuses(obj, field, message):
    # (Enumerations are the shape's, the rest validation's: one message form each.)
    err, msg = input_error(obj)
    assert err.field == field
    assert msg == f"test.yaml: Pod/default/p: field {field}: {message}"


def test_a_node_label_the_api_server_refuses():
    node = fixture_node("n1")
    node["metadata"]["labels"] = {"zone": "us east"}
    err, msg = input_error(node)
    assert err.field == "metadata.labels.zone"
    assert msg == f"test.yaml: Node/n1: field metadata.labels.zone: 'us east': {_VALUE_RULE}"


def test_a_priority_class_policy_the_api_server_refuses():
    err, msg = input_error(pc("batch", 100, policy="Nevr"), pod(priorityClassName="batch"))
    assert err.field == "preemptionPolicy"
    assert msg == ("test.yaml: PriorityClass/batch: field preemptionPolicy: unsupported value 'Nevr': supported "
                   'values: "Never", "PreemptLowerPriority"')


def _pdb(selector):
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb", "namespace": "default"},
            "spec": {"minAvailable": 1, "selector": selector}}


def _pv(*terms):
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "x",
                     "nodeAffinity": {"required": {"nodeSelectorTerms": list(terms)}}}}


_PV_TERMS = "spec.nodeAffinity.required.nodeSelectorTerms"


@pytest.mark.parametrize("obj, ref, field, message", [
    # A misspelled operator protected nothing: preemption saw no budget to violate.
    (_pdb({"matchExpressions": [{"key": "app", "operator": "Inn", "values": ["web"]}]}), "PodDisruptionBudget/default/pdb",
     "spec.selector.matchExpressions[0].operator",
     "'Inn' is not a valid label selector operator (supported: In, NotIn, Exists, DoesNotExist)"),
    (_pdb({"matchLabels": {"app": "web server"}}), "PodDisruptionBudget/default/pdb", "spec.selector.matchLabels.app",
     f"'web server': {_VALUE_RULE}"),
    (_pv({"matchExpressions": [{"key": "zone", "operator": "Inn", "values": ["a"]}]}), "PersistentVolume/pv1",
     f"{_PV_TERMS}[0].matchExpressions[0].operator",
     "unsupported value 'Inn': supported values: In, NotIn, Exists, DoesNotExist, Gt, Lt"),
    (_pv(), "PersistentVolume/pv1", _PV_TERMS, "must have at least one node selector term"),
    # Above a billion, a user's class would outrank the system's own pods.
    (pc("huge", 2000000000), "PriorityClass/huge", "value",
     "2000000000: maximum allowed value of a user defined priority is 1000000000"),
    (pc("system-special", 5), "PriorityClass/system-special", "metadata.name",
     "priority class names with 'system-' prefix are reserved for system use only. error: system-special is not a "
     "known system priority class"),
    (pc("system-node-critical", 5), "PriorityClass/system-node-critical", "metadata.name",
     "priority class names with 'system-' prefix are reserved for system use only. error: value of "
     "system-node-critical PriorityClass must be 2000001000"),
    ({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team", "labels": {"owner": "a b"}}},
     "Namespace/team", "metadata.labels.owner", f"'a b': {_VALUE_RULE}"),
])
def test_what_the_api_server_refuses_in_other_kinds(obj, ref, field, message):
    err, msg = input_error(obj)
    assert err.field == field
    assert msg == f"test.yaml: {ref}: field {field}: {message}"


def _budget(**spec):
    spec.setdefault("selector", {"matchLabels": {"app": "web"}})
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": "default"}, "spec": spec}


_PERCENT_RULE = ("a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%' or '93%'); "
                 "a number of pods is written without quotes")


@pytest.mark.parametrize("spec, field, message", [
    # ValidatePodDisruptionBudgetSpec: each changed a drain's answer before.
    ({"minAvailable": "50"}, "spec.minAvailable", f"'50': {_PERCENT_RULE}"),
    ({"maxUnavailable": "half"}, "spec.maxUnavailable", f"'half': {_PERCENT_RULE}"),
    ({"minAvailable": "50 %"}, "spec.minAvailable", f"'50 %': {_PERCENT_RULE}"),
    ({"minAvailable": "-5%"}, "spec.minAvailable", f"'-5%': {_PERCENT_RULE}"),
    ({"maxUnavailable": "150%"}, "spec.maxUnavailable", "'150%': must not be greater than 100%"),
    ({"minAvailable": "101%"}, "spec.minAvailable", "'101%': must not be greater than 100%"),
    ({"minAvailable": "1" * 5000 + "%"}, "spec.minAvailable",
     f"'{'1' * 5000}%': must not be greater than 100%"),
    ({"minAvailable": -1}, "spec.minAvailable", "-1: must be greater than or equal to 0"),
    ({"maxUnavailable": -2}, "spec.maxUnavailable", "-2: must be greater than or equal to 0"),
    ({"minAvailable": 1, "maxUnavailable": 1}, "spec", "minAvailable and maxUnavailable cannot be both set"),
    ({"minAvailable": 1, "unhealthyPodEvictionPolicy": "AlwaysAlow"}, "spec.unhealthyPodEvictionPolicy",
     "unsupported value 'AlwaysAlow': supported values: AlwaysAllow, IfHealthyBudget"),
])
def test_a_disruption_budget_the_api_server_refuses(spec, field, message):
    err, msg = input_error(_budget(**spec))
    assert err.field == field
    assert msg == f"test.yaml: PodDisruptionBudget/default/web: field {field}: {message}"


@pytest.mark.parametrize("spec", [
    {"minAvailable": 0}, {"minAvailable": "0%"}, {"minAvailable": "100%"}, {"minAvailable": "007%"},
    {"maxUnavailable": 1000}, {"maxUnavailable": "25%"}, {},
    {"minAvailable": 1, "maxUnavailable": None}, {"maxUnavailable": 1, "unhealthyPodEvictionPolicy": "AlwaysAllow"},
])
def test_a_disruption_budget_the_api_server_stores_is_taken(spec):
    assert list(admitted(_budget(**spec), pod()).pod_disruption_budgets) == ["default/web"]


def test_the_system_priority_classes_and_a_billion_are_taken():
    cluster = admitted(pc("system-node-critical", 2000001000), pc("top", 1000000000),
                       _pdb({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]}),
                       _pv({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}))
    assert set(cluster.priority_classes) == {"system-node-critical", "top"}


def test_what_the_api_server_takes_passes_these_checks_too():
    ok = pod(preemptionPolicy="Never", schedulingGates=[{"name": "example.com/a"}, {"name": "b"}],
             affinity={"nodeAffinity": required_node_affinity(
                 {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["node-1.example"]}]}),
                 "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                     {"topologyKey": "topology.kubernetes.io/zone", "matchLabelKeys": ["pod-template-hash"],
                      "labelSelector": {"matchLabels": {"app": "web", "example.com/tier": ""},
                                        "matchExpressions": [{"key": "example.com/x", "operator": "Exists"}]}}]}},
             topologySpreadConstraints=[spread_constraint(1, "zone", "DoNotSchedule", match_labels(app="web")),
                                        spread_constraint(1, "zone", "ScheduleAnyway", match_labels(app="web"))])
    ok["metadata"]["labels"] = {"app": "web", "example.com/tier": "", "pod-template-hash": "5f6c7d8b9"}
    ok["spec"]["containers"][0].update(
        ports=[{"containerPort": 53, "hostPort": 53, "protocol": "UDP"}, {"containerPort": 80},
               {"containerPort": 9, "hostPort": 65535, "protocol": "SCTP"}],
        resources={"requests": {"cpu": "1", "hugepages-2Mi": "4Mi"},
                   "limits": {"example.com/gpu": "2", "hugepages-2Mi": "4Mi"}})
    ok["spec"]["initContainers"] = [{"name": "proxy", "image": "i", "restartPolicy": "Always"}]
    spec = the_pod(admitted(ok))["spec"]
    assert spec["containers"][0]["ports"][1]["protocol"] == "TCP"
    assert spec["containers"][0]["resources"]["requests"]["example.com/gpu"] == "2"


@pytest.mark.parametrize("kind, meant", [("node", "Node"), ("Nodes", "Node"), ("pods", "Pod"),
                                         ("nodelist", "NodeList"), ("deployment", "Deployment (apps/v1)")])
def test_a_misspelled_kind_is_an_error_not_a_silent_loss(tmp_path, kind, meant):
    # strict validation (sources/strict.py) says it before admission: the one
    # did-you-mean for kinds is the schema's (schema/kinds.py)
    from kschedx.commands.load import load_workload
    from kschedx.util.errors import InvalidObjects

    path = tmp_path / "x.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": kind, "metadata": {"name": "x"}}))
    with pytest.raises(InvalidObjects) as e:
        load_workload([str(path)])
    assert str(e.value).endswith(f'field kind: no matches for kind "{kind}" in version "v1" (did you mean {meant}?)')


def test_kinds_the_scheduler_does_not_read_are_ignored_quietly():
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
    assert admitted(cm).warnings == []
