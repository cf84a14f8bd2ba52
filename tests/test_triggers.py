"""explain --watch's triggers (commands/triggers.py): a pure function of the
plugins' declarations and an event, tested on its own; and, through a real
live state and WatchRun, every event each plugin declares (its
EventsToRegister, at each version) explains again a pod that plugin rejected.
"""

from __future__ import annotations

import pytest

from builders import api_node, api_pod, csi_driver, csi_node, csi_storage_capacity, pv, pvc, storage_class, taint
from fixhelp import device_class, resource_claim, resource_slice
from kschedx.commands.triggers import Event, PodView, Triggers, events_of, explains_again
from kschedx.commands.watch import Verdict, WatchRun
from kschedx.config import names
from kschedx.features import default_features
from kschedx.framework.declaration import Declaration, reads, traits_of
from kschedx.framework.events import NODE, POD, ActionType as A, Register, node_actions, pod_actions
from kschedx.plugins.registry import declarations
from kschedx.state.live import Change
from test_live_state import Model, start
from watching import Recorder

VERSIONS = ("1.35", "1.36")

# ---- the pure function ------------------------------------------------------------------------

FILTER = Declaration(name="Filtering", factory=None, points=frozenset({"filter"}),
                     events=(Register(NODE, A.Add | A.UpdateNodeLabel), Register(POD, A.Delete)))
VOLUMES = Declaration(name="Volumes", factory=None, points=frozenset({"filter"}),
                      reads=(reads("PersistentVolumeClaim", pods=("volumes",), same_namespace=True),
                             reads("PodDisruptionBudget", pods=("preempting",))),
                      events=(Register("PersistentVolumeClaim", A.Add),))
TOLERATING = Declaration(name="Tolerating", factory=None, points=frozenset({"filter"}),
                         events=(Register(POD, A.UpdatePodToleration),))
LABELS = Declaration(name="Labels", factory=None, points=frozenset({"filter"}),
                     events=(Register(POD, A.UpdatePodLabel),))
DECLS = {d.name: d for d in (FILTER, VOLUMES, TOLERATING, LABELS)}
F = default_features("1.36")


def view(status="Unschedulable", plugins=("Filtering",), *, node=None, top=(), preempting=False, traits=("all",),
         namespace="default", priority=0):
    return PodView(namespace, priority, frozenset(traits), status, node, tuple(top), frozenset(plugins), preempting)


@pytest.mark.parametrize("event, pod, expected", [
    # A rejected pod: the events its rejecting plugins register, and only those.
    (Event(NODE, A.UpdateNodeLabel, "n1"), view(), True),
    (Event(NODE, A.UpdateNodeTaint, "n1"), view(), False),
    (Event(NODE, A.UpdateNodeLabel | A.UpdateNodeTaint, "n1"), view(), True),
    (Event(POD, A.Delete, "n1"), view(), True),
    (Event(POD, A.Add, "n1"), view(), False),
    # ... of another pod's updates, those plugins register for other pods (labels, a scale-down).
    (Event(POD, A.Update, "n1"), view(plugins=("Tolerating",)), False),
    (Event(POD, A.UpdatePodLabel, "n1"), view(plugins=("Labels",)), True),
    (Event(POD, A.Update, "n1"), view(plugins=("Labels",)), True),
    (Event("PersistentVolumeClaim", A.Add, namespace="x"), view(plugins=("Volumes",)), True),
    (Event("PersistentVolumeClaim", A.Update, namespace="x"), view(plugins=("Volumes",)), False),
    # ... a plugin declaring nothing (another distribution's), or none named: every event.
    (Event(NODE, A.UpdateNodeTaint, "n1"), view(plugins=("Elsewhere",)), True),
    (Event("StorageClass", A.Update), view(plugins=()), True),
    # Not explained yet, or gated: nothing.
    (Event(NODE, A.Add, "n1"), view(status=None), False),
    (Event(NODE, A.Add, "n1"), view(status="Gated", plugins=("SchedulingGates",)), False),
    # A prediction: any node event; a pod leaving or shrinking anywhere; arriving where it goes.
    (Event(NODE, A(0), "n9"), view(status="Scheduled", plugins=()), True),
    (Event(POD, A.Delete, "n9"), view(status="Scheduled", plugins=(), node="n1"), True),
    (Event(POD, A.UpdatePodScaleDown, "n9"), view(status="Scheduled", plugins=(), node="n1"), True),
    (Event(POD, A.Add, "n9"), view(status="Scheduled", plugins=(), node="n1"), False),
    (Event(POD, A.Add, "n1"), view(status="Scheduled", plugins=(), node="n1"), True),
    (Event(POD, A.UpdatePodLabel, "n2"), view(status="Scheduled", plugins=(), node="n1", top=("n1", "n2")), True),
    (Event("StorageClass", A.Update), view(status="Scheduled", plugins=()), False),
    # Preempting: every pod event, and the kinds read for preempting pods.
    (Event(POD, A(0), "n9"), view(preempting=True, plugins=("Filtering",)), True),
    (Event("PodDisruptionBudget", A.Update, namespace="x"), view(preempting=True), True),
    (Event("PodDisruptionBudget", A.Update, namespace="x"), view(), False),
    # Reads: pods with the trait, in the object's namespace where the read says so.
    (Event("PersistentVolumeClaim", A.Delete, namespace="default"),
     view(status="Scheduled", plugins=(), traits=("all", "volumes")), True),
    (Event("PersistentVolumeClaim", A.Delete, namespace="other"),
     view(status="Scheduled", plugins=(), traits=("all", "volumes")), False),
    (Event("PersistentVolumeClaim", A.Delete, namespace="default"), view(status="Scheduled", plugins=()), False),
    # A nomination counts for pods of at most the nominee's priority.
    (Event(POD, A.Delete, "n1", priority=10), view(priority=10), True),
    (Event(POD, A.Delete, "n1", priority=10), view(priority=11), False),
])
def test_explains_again(event, pod, expected):
    assert explains_again(event, pod, DECLS, F) is expected


def test_gated_events_follow_the_gate():
    gated = Declaration(name="Gated", factory=None, points=frozenset({"filter"}), gates=frozenset({"DRAExtendedResource"}),
                        events=(Register("DeviceClass", A.Add, gate="DRAExtendedResource"),))
    pod = view(plugins=("Gated",))
    event = Event("DeviceClass", A.Add)
    assert explains_again(event, pod, {"Gated": gated}, default_features("1.36"))  # beta, on
    assert not explains_again(event, pod, {"Gated": gated}, default_features("1.35"))  # alpha, off


def test_node_and_pod_actions_are_upstreams():
    node = api_node("n1", labels={"zone": "a"})
    assert node_actions(node, node) == A(0)
    relabelled = {**node, "metadata": {**node["metadata"], "labels": {"zone": "b"}}}
    assert node_actions(node, relabelled) == A.UpdateNodeLabel
    cordoned = {**node, "spec": {"unschedulable": True}}
    assert node_actions(node, cordoned) == A.UpdateNodeTaint
    tainted = {**node, "spec": {"taints": [taint("k", "v", "NoSchedule")]}}
    assert node_actions(node, tainted) == A.UpdateNodeTaint
    bigger = {**node, "status": {**node["status"], "allocatable": {"cpu": "8"}}}
    assert node_actions(node, bigger) == A.UpdateNodeAllocatable
    heartbeat = {**node, "status": {**node["status"], "conditions": [{"type": "Ready", "status": "True",
                                                                      "lastHeartbeatTime": "2026-01-01T00:00:00Z"}]}}
    later = {**node, "status": {**node["status"], "conditions": [{"type": "Ready", "status": "True",
                                                                  "lastHeartbeatTime": "2026-01-01T00:01:00Z"}]}}
    assert node_actions(heartbeat, later) == A(0)
    pod = api_pod("p")
    assert pod_actions(pod, pod) == A.Update
    gated = {**pod, "spec": {**pod["spec"], "schedulingGates": [{"name": "g"}]}}
    assert pod_actions(gated, pod) == A.UpdatePodSchedulingGatesEliminated
    tolerating = {**pod, "spec": {**pod["spec"], "tolerations": [{"key": "k", "operator": "Exists"}]}}
    assert pod_actions(pod, tolerating) == A.UpdatePodToleration
    assert pod_actions(pod, pod, scaled_down=True) == A.UpdatePodScaleDown


def test_changes_become_events():
    node = api_node("n1")
    relabelled = {**node, "metadata": {**node["metadata"], "labels": {"x": "y"}}}
    # With what a Reach reads (commands/reach.py): the label keys changed
    # (the hostname label went with the others), image names, the pods.
    assert events_of(Change("Node", "node-changed", node="n1", detail="labels", old=node, obj=relabelled)) == [
        Event(NODE, A.UpdateNodeLabel, "n1", change="node-changed",
              label_keys=frozenset({"x", "kubernetes.io/hostname"}))]
    imaged = {**node, "status": {**node["status"], "images": [{"names": ["a:1"], "sizeBytes": 5}]}}
    assert events_of(Change("Node", "node-images", node="n1", old=node, obj=imaged)) == [
        Event(NODE, A(0), "n1", change="node-images", images=frozenset({"a:1"}))]
    pod = api_pod("p", node_name="n1")
    assert events_of(Change("Pod", "left", node="n1", pod=pod)) == [
        Event(POD, A.Delete, "n1", change="pod", pods=(pod,))]
    assert events_of(Change("Pod", "bound", node="n1", pod=pod)) == [
        Event(POD, A.Add, "n1", change="pod", pods=(pod,))]
    assert events_of(Change("Pod", "pod-changed", node="n1", pod=pod, old=pod, detail="status")) == [
        Event(POD, A(0), "n1")]
    assert events_of(Change("Node", "node-removed", node="n1", extra={"pods": [pod]})) == [
        Event(NODE, A.Delete, "n1", change="node-removed", pods=(pod,))]
    pending = {**api_pod("q"), "spec": {**api_pod("q")["spec"], "priority": 5}}
    nominated = {**pending, "status": {"nominatedNodeName": "n2"}}
    moved = {**pending, "status": {"nominatedNodeName": "n3"}}
    assert events_of(Change("Pod", "nomination", node="n3", pod=moved, old=nominated)) == [
        Event(POD, A.Add, "n3", priority=5), Event(POD, A.Delete, "n2", priority=5)]
    assert events_of(Change("PersistentVolumeClaim", "object", detail="ns/c",
                            extra={"namespace": "ns", "type": "DELETED"})) == [
        Event("PersistentVolumeClaim", A.Delete, namespace="ns")]


def test_traits_of_a_pod():
    assert traits_of(api_pod("p")) == {"all", "default-spread"}
    pod = api_pod("p")
    pod["spec"]["topologySpreadConstraints"] = [{"maxSkew": 1}]
    pod["spec"]["volumes"] = [{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}]
    pod["spec"]["resourceClaims"] = [{"name": "gpu"}]
    assert traits_of(pod) == {"all", "spread", "volumes", "claims"}


# ---- every declared event, through a live state and the watch ---------------------------------


def _cluster(model: Model) -> None:
    for name in ("n1", "n2"):
        model.put(api_node(name, labels={"topology.kubernetes.io/zone": "a"}))
    model.put(api_pod("a-1", node_name="n1", cpu="1"))
    web = api_pod("web")
    web["spec"]["schedulingGates"] = [{"name": "g"}]
    model.put(web)
    model.put(storage_class("fast"))
    model.put(pv("pv1", "fast"))
    model.put(pvc("c1", sc="fast"))
    model.put(csi_node("n1", {"d.example.com": 4}))
    model.put(csi_driver("d.example.com"))
    model.put(csi_storage_capacity("cap1", "fast"))
    model.put(_volume_attachment("va1"))
    model.put(device_class("gpu.example.com"))
    model.put(resource_slice("n1"))
    model.put(resource_claim("rc1"))


def _volume_attachment(name):
    return {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": name},
            "spec": {"attacher": "d.example.com", "nodeName": "n1", "source": {"persistentVolumeName": "pv1"}}}


def _relabel(obj):
    obj["metadata"].setdefault("labels", {})["changed"] = "yes"


def _node_change(fn):
    return lambda m: m.change("Node", "n1", fn)


def _own_change(fn):
    return lambda m: m.change("Pod", "default/web", fn)


def _scale_down(pod):
    pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "500m"


# (resource, action) -> the write that makes that event. The pod's own updates
# (a toleration added, its gates gone, its claims generated...) are the
# tracked pending pod's; other pod events are a bound pod's.
_NODE_WRITES = {
    A.Add: lambda m: m.put(api_node("n3")),
    A.Delete: lambda m: m.delete("Node", "n2"),
    A.UpdateNodeLabel: _node_change(_relabel),
    A.UpdateNodeTaint: _node_change(lambda n: n["spec"].update(taints=[taint("k", "v", "NoSchedule")])),
    A.UpdateNodeAllocatable: _node_change(lambda n: n["status"]["allocatable"].update(cpu="8")),
    A.UpdateNodeDeclaredFeature: _node_change(lambda n: n["status"].update(declaredFeatures=["Feature"])),
}
_POD_WRITES = {
    A.Add: lambda m: m.put(api_pod("a-2", node_name="n1")),
    A.Delete: lambda m: m.delete("Pod", "default/a-1"),
    A.UpdatePodLabel: lambda m: m.change("Pod", "default/a-1", _relabel),
    A.UpdatePodScaleDown: lambda m: m.change("Pod", "default/a-1", _scale_down),
    A.UpdatePodToleration: _own_change(lambda p: p["spec"].update(tolerations=[{"key": "k", "operator": "Exists"}])),
    A.UpdatePodSchedulingGatesEliminated: _own_change(lambda p: p["spec"].pop("schedulingGates")),
    A.UpdatePodGeneratedResourceClaim: _own_change(
        lambda p: p["status"].update(resourceClaimStatuses=[{"name": "gpu", "resourceClaimName": "web-gpu"}])),
}
_OBJECTS = {  # kind -> (key of the existing object, a new one)
    "PersistentVolume": ("pv1", lambda: pv("pv2", "fast")),
    "PersistentVolumeClaim": ("default/c1", lambda: pvc("c2", sc="fast")),
    "StorageClass": ("fast", lambda: storage_class("slow")),
    "CSINode": ("n1", lambda: csi_node("n2", {"d.example.com": 4})),
    "CSIDriver": ("d.example.com", lambda: csi_driver("e.example.com")),
    "CSIStorageCapacity": ("default/cap1", lambda: csi_storage_capacity("cap2", "fast")),
    "VolumeAttachment": ("va1", lambda: _volume_attachment("va2")),
    "DeviceClass": ("gpu.example.com", lambda: device_class("tpu.example.com")),
    "ResourceSlice": ("n1-gpu.example.com", lambda: resource_slice("n2")),
    "ResourceClaim": ("default/rc1", lambda: resource_claim("rc2")),
}


def _writes(resource: str, actions: A):
    """Each single action of `actions` a write of `resource` can make, with the write."""
    if resource == NODE:
        table = _NODE_WRITES
    elif resource == POD:
        table = dict(_POD_WRITES)
        if actions == A.Update:  # any update of the pod itself (NodeDeclaredFeatures)
            return [("own update", _own_change(_relabel))]
    else:
        key, new = _OBJECTS[resource]
        table = {A.Add: lambda m: m.put(new()), A.Delete: lambda m: m.delete(resource, key),
                 A.Update: lambda m: m.change(resource, key, _relabel)}
        return [(a.name, table[a]) for a in (A.Add, A.Delete, A.Update) if actions & a]
    return [(a.name, table[a]) for a in table if actions & a]


def _declared_events():
    for version in VERSIONS:
        features = default_features(version)
        for name, d in declarations(features).items():
            if d.factory is None:
                continue  # not implemented: it never rejects a pod
            for e in d.events_for(features):
                for action, write in _writes(e.resource, e.actions):
                    yield pytest.param(version, name, write, id=f"{version}-{name}-{e.resource}-{action}")


def _watch(version: str):
    model = Model()
    _cluster(model)
    live = start(model)
    features = default_features(version)
    run = WatchRun(Recorder(), None, live, None, selected=lambda pod: True, named=None, tie_break="name", seed=None,
                   features=features)
    return model, run


@pytest.mark.parametrize("version, plugin, write", list(_declared_events()))
def test_the_watch_explains_again_on_each_event_a_plugin_declares(version, plugin, write):
    model, run = _watch(version)
    t = run._track(model.objects["Pod"]["default/web"], 0.0)
    t.last = Verdict("Unschedulable", None, (), frozenset({plugin}), (), False, "", 0)
    t.view = None
    run._event(write(model))
    assert t.due is not None, f"{plugin} was not asked again"


@pytest.mark.parametrize("version", VERSIONS)
def test_an_event_no_rejecting_plugin_declares_explains_nothing(version):
    model, run = _watch(version)
    t = run._track(model.objects["Pod"]["default/web"], 0.0)
    t.last = Verdict("Unschedulable", None, (), frozenset({names.NodeName}), (), False, "", 0)
    t.view = None
    for write in (_NODE_WRITES[A.UpdateNodeLabel], _POD_WRITES[A.Delete], lambda m: m.put(pv("pv9", "fast"))):
        run._event(write(model))
        assert t.due is None
    run._event(_NODE_WRITES[A.Add](model))
    assert t.due is not None


def test_every_in_tree_plugin_that_filters_declares_events():
    """A Filter or PreFilter plugin without events would never see its
    rejections explained again."""
    for version in VERSIONS:
        features = default_features(version)
        for name, d in declarations(features).items():
            if d.factory is not None and d.points & {"filter", "preFilter"}:
                assert d.events, (version, name)


def test_triggers_compile_each_kind_of_event_once():
    triggers = Triggers(DECLS, F)
    for _ in range(3):
        triggers.wants(Event(NODE, A.UpdateNodeLabel, "n1"), view())
    assert len(triggers._by_kind) == 1
