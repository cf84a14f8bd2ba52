"""`explain --watch`'s triggers: which pending pods a change in the cluster
explains again. A pure function of the plugins' declarations (their
EventsToRegister and what they read) and the event: nothing here knows a
plugin by name.

A pod is explained again when, after its last explanation:

- it was rejected, and a plugin that rejected it registers the event (the
  scheduling queue's rule; of another pod's updates, its labels and a
  scale-down: the other Pod updates registered are the rejected pod's own);
  a rejection no in-tree plugin declares for (a plugin of another
  distribution, or none named) takes every event;
- it was predicted Scheduled (or failed), and the event can change the pick:
  any node event, a pod leaving or shrinking anywhere, a pod arriving or
  changing on the chosen node or one tied with it;
- it preempts, and any pod event happens (victims go, nominations move);
- a plugin reads the event's kind for pods like it (its Reads: the pod's
  spec traits, or "preempting"), in its namespace where the read is.

A nomination counts only for pods of at most the nominated pod's priority,
as kube-scheduler counts nominated pods.

A pod whose last cycle left a Reach (commands/reach.py: predicted Scheduled
or rejected everywhere, no preemption about) is narrower: an event on one
node (a pod arriving, leaving or changing there, the node changed, added or
removed, its images) explains it again only when it can change its verdict
through that node or through what the other plugins read (their
EventReach). The Reach decides; these rules decide for every other pod and
every other event.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..framework.events import NODE, POD, ActionType, ClusterEvent, node_actions, pod_actions

# Pods whose verdict comes from their own spec alone: only their own updates matter.
SELF_ONLY = frozenset({"Gated", "NoProfile"})
_ADD_OR_UPDATE = ActionType.Add | ActionType.Update
_FREES_ROOM = ActionType.Delete | ActionType.UpdatePodScaleDown
# What another pod's change can be to a plugin that rejected a pod: added,
# deleted, relabelled, scaled down. The other Pod updates plugins register
# (a toleration added, gates removed, claims generated, any update) are the
# rejected pod's own (their QueueingHints check it is the same pod): the
# watch explains a pending pod again whatever of it changed.
_OTHER_POD = ActionType.Add | ActionType.Delete | ActionType.UpdatePodLabel | ActionType.UpdatePodScaleDown


@dataclass(frozen=True, slots=True)
class Event:
    """A cluster event as the watch saw it: the resource (kind) and action,
    and where: the node (pods, nodes), the namespace (namespaced objects),
    the priority of a nominated pod (nominations)."""

    resource: str
    action: ActionType
    node: str | None = None
    namespace: str | None = None
    priority: int | None = None
    # What a Reach reads (commands/reach.py): the kind of change on the node
    # ("pod", "node-changed", "node-images", "node-added", "node-removed";
    # "" for the others), the pods concerned (a pod's objects before and
    # after; the pods of a node removed), node label keys changed, whether
    # taints or unschedulable changed, image names changed.
    change: str = ""
    pods: tuple = ()
    label_keys: frozenset = frozenset()
    taints_changed: bool = False
    images: frozenset = frozenset()


@dataclass(frozen=True, slots=True)
class PodView:
    """What the watch knows of a pending pod: its namespace, priority and
    spec traits (framework/declaration.py traits_of), and its last
    explanation (status None: not explained yet)."""

    namespace: str
    priority: int
    traits: frozenset
    status: str | None = None
    node: str | None = None
    top: tuple = ()
    plugins: frozenset = frozenset()
    preempting: bool = False
    reach: object = None  # commands/reach.Reach of its last cycle, when it has one


def events_of(change) -> list[Event]:
    """The cluster events of one change of the live state (state/live.py
    Change). Changes of a pending pod itself, and its coming and going, are
    not events for other pods: the watch handles them."""
    what = change.what
    if change.kind == POD:
        if what in ("arrived", "bound"):  # bound: a pending pod given a node, there now
            return [Event(POD, ActionType.Add, change.node, change="pod", pods=(change.pod,))]
        if what == "left":
            return [Event(POD, ActionType.Delete, change.node, change="pod", pods=(change.pod,))]
        if what == "pod-changed":
            moved_from = (change.extra or {}).get("from")
            if moved_from and moved_from != change.node:
                return [Event(POD, ActionType.Delete, moved_from, change="pod", pods=(change.old,)),
                        Event(POD, ActionType.Add, change.node, change="pod", pods=(change.pod,))]
            if change.detail == "status":
                # Nothing a plugin counts changed (its phase, conditions...).
                return [Event(POD, ActionType(0), change.node)]
            return [Event(POD, pod_actions(change.old, change.pod, _requests_changed(change.old, change.pod)),
                          change.node, change="pod", pods=(change.old, change.pod))]
        if what == "nomination":
            priority = change.pod["spec"].get("priority") or 0
            out = [Event(POD, ActionType.Add, change.node, priority=priority)]
            before = ((change.old or {}).get("status") or {}).get("nominatedNodeName")
            if before and before != change.node:
                out.append(Event(POD, ActionType.Delete, before, priority=priority))
            return out
        return []
    if change.kind == NODE:
        if what == "node-added":
            return [Event(NODE, ActionType.Add, change.node, change=what)]
        if what == "node-removed":
            return [Event(NODE, ActionType.Delete, change.node, change=what,
                          pods=tuple((change.extra or {}).get("pods") or ()))]
        if what == "node-changed":
            old, new = change.old, change.obj
            return [Event(NODE, node_actions(old, new), change.node, change=what, label_keys=_label_keys(old, new),
                          taints_changed=_taints_changed(old, new), images=_images_changed(old, new))]
        if what == "node-images":
            # No plugin registers it (ImageLocality only scores): predictions only.
            return [Event(NODE, ActionType(0), change.node, change=what, images=_images_changed(change.old, change.obj))]
        return []
    if what == "object":
        extra = change.extra or {}
        return [Event(change.kind, _OBJECT_ACTIONS[extra.get("type", "MODIFIED")], namespace=extra.get("namespace"))]
    return []


_OBJECT_ACTIONS = {"ADDED": ActionType.Add, "MODIFIED": ActionType.Update, "DELETED": ActionType.Delete}


def _label_keys(old: dict | None, new: dict | None) -> frozenset:
    """Node label keys added, removed or given another value."""
    a = ((old or {}).get("metadata") or {}).get("labels") or {}
    b = ((new or {}).get("metadata") or {}).get("labels") or {}
    return frozenset(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))


def _taints_changed(old: dict | None, new: dict | None) -> bool:
    a, b = (old or {}).get("spec") or {}, (new or {}).get("spec") or {}
    return (a.get("taints") or []) != (b.get("taints") or []) or bool(a.get("unschedulable")) != bool(
        b.get("unschedulable"))


def _images_changed(old: dict | None, new: dict | None) -> frozenset:
    """Image names a node gained, lost, or holds at another size."""
    def sizes(node):
        out = {}
        for image in ((node or {}).get("status") or {}).get("images") or ():
            for name in image.get("names") or ():
                out[name] = image.get("sizeBytes") or 0
        return out

    if old is None or new is None:
        return frozenset({"*"})  # not known: every image
    a, b = sizes(old), sizes(new)
    return frozenset(n for n in a.keys() | b.keys() if a.get(n) != b.get(n))


def _requests_changed(old: dict, new: dict) -> bool:
    """Whether some container's resources changed (an in-place resize; a
    smaller request frees room, and kschedx does not tell which way)."""
    def requests(pod):
        spec = pod.get("spec") or {}
        return [c.get("resources") for c in (*(spec.get("initContainers") or ()), *(spec.get("containers") or ()))], \
            spec.get("resources"), (pod.get("status") or {}).get("containerStatuses")

    return requests(old) != requests(new)


class Trigger:
    """One event, compiled against the declarations: `wants(pod)` decides
    for each pending pod (the watch asks it of hundreds of pods per event,
    so all that depends on the event alone is worked out here once)."""

    __slots__ = ("registered", "known", "reads", "node", "namespace", "priority", "node_event", "pod_event",
                 "frees_room", "add_or_update", "change", "pods", "label_keys", "taints_changed", "images",
                 "checker")

    def __init__(self, event: Event, registered: frozenset, known, reads: tuple, checker=None):
        self.registered = registered
        self.known = known
        self.reads = reads
        self.change = event.change
        self.pods = event.pods
        self.label_keys = event.label_keys
        self.taints_changed = event.taints_changed
        self.images = event.images
        # What a Reach filters and scores a node with (commands/reach.Checker);
        # None: no Reach is asked.
        self.checker = checker
        self.node = event.node
        self.namespace = event.namespace
        self.priority = event.priority
        action = int(event.action)
        self.node_event = event.resource == NODE
        self.pod_event = event.resource == POD
        self.frees_room = self.pod_event and bool(action & _FREES_ROOM)
        self.add_or_update = self.pod_event and bool(action & _ADD_OR_UPDATE)

    def wants(self, pod: PodView) -> bool:
        """Whether the event explains the pod again (see the module's rules)."""
        status = pod.status
        if status is None or status in SELF_ONLY:
            return False
        if self.priority is not None and pod.priority > self.priority:
            return False
        if pod.reach is not None and self.checker is not None and self.change and self.priority is None:
            return pod.reach.wants(self, self.checker)
        if status == "Unschedulable":
            plugins = pod.plugins
            if plugins & self.registered or not plugins or not plugins <= self.known:
                return True
        elif self.node_event or self.frees_room or (
                self.add_or_update and (self.node == pod.node or self.node in pod.top)):
            return True
        if pod.preempting and self.pod_event:
            return True
        if self.reads:
            traits = pod.traits | {"preempting"} if pod.preempting else pod.traits
            for pods, same_namespace in self.reads:
                if traits & pods and (not same_namespace or pod.namespace == self.namespace):
                    return True
        return False


class Triggers:
    """The declarations of a run's plugins (name -> Declaration, at its
    features): each event compiled into a Trigger, what depends on its
    resource and action alone worked out once per run."""

    def __init__(self, declarations: dict, features):
        self.declarations = declarations
        self.features = features
        self._by_kind: dict[tuple[str, int], tuple[frozenset, tuple]] = {}

    def trigger(self, event: Event, checker=None) -> Trigger:
        key = (event.resource, int(event.action))
        found = self._by_kind.get(key)
        if found is None:
            action = event.action & _OTHER_POD if event.resource == POD else event.action
            cluster_event = ClusterEvent(event.resource, action)
            registered = frozenset(name for name, d in self.declarations.items()
                                   if d.registers(cluster_event, self.features))
            reads = tuple((r.pods, r.same_namespace) for d in self.declarations.values()
                          for r in d.reads_for(self.features)
                          if event.resource in r.kinds and r.actions & event.action)
            found = self._by_kind[key] = (registered, reads)
        return Trigger(event, found[0], self.declarations.keys(), found[1], checker)

    def wants(self, event: Event, pod: PodView) -> bool:
        return self.trigger(event).wants(pod)


def explains_again(event: Event, pod: PodView, declarations: dict, features) -> bool:
    """Whether `event` explains `pod` again, given the run's plugins'
    declarations at its features."""
    return Triggers(declarations, features).wants(event, pod)
