"""What an in-tree plugin declares about itself, next to its code: what
upstream's plugins say through `Name()`, the `var _ fwk.XPlugin = &P{}`
assertions, `EventsToRegister` and the feature.Features their `New()` reads,
plus what kschedx needs besides: the kinds of objects it reads and the form
of the explanations it attaches.

Everything else is derived from the declarations (plugins/registry.py
gathers them): the registry and its extension points, the plugins listed in
notEvaluated when a kind could not be read and the warning that says so,
which pods `explain --watch` explains again after an event, the gates the
scheduler reads, and how renderers word a plugin's details.
"""

from __future__ import annotations

from dataclasses import dataclass

from .events import POD, ActionType, ClusterEvent

# Extension points (upstream's names) kschedx never runs offline: declared
# so that configurations are checked as NewFramework checks them.
NOT_RUN_OFFLINE = frozenset({"permit", "preBind", "postBind", "placementGenerate", "placementScore",
                             "podGroupPostFilter"})

# Which pods a kind read can concern (Reads.pods), told from the pod's spec
# (traits_of) or from its last explanation ("preempting").
POD_TRAITS = {
    "all": "every pod",
    "volumes": "pods with a PersistentVolumeClaim or ephemeral volume",
    "claims": "pods with resource claims",
    "extended": "pods requesting an extended resource (a DeviceClass may back it)",
    "spread": "pods with topology spread constraints",
    "default-spread": "pods without topology spread constraints (the system's default constraints apply)",
    "podAffinity": "pods with pod affinity or anti-affinity",
    "preempting": "pods whose last explanation preempts",
}


class DeclarationError(Exception):
    """A declaration that does not match its plugin, or names what does not exist."""


@dataclass(frozen=True)
class Reads:
    """Objects of `kinds` a plugin reads, and the pods whose verdict (or
    score) a change of one can move: those with one of the traits in `pods`
    (POD_TRAITS), in the object's own namespace only when `same_namespace`,
    for changes among `actions`. `gate`: read only while the gate is on."""

    kinds: frozenset
    pods: frozenset = frozenset({"all"})
    same_namespace: bool = False
    actions: ActionType = ActionType.All
    gate: str | None = None


def reads(*kinds: str, pods=("all",), same_namespace: bool = False, actions: ActionType = ActionType.All,
          gate: str | None = None) -> Reads:
    return Reads(frozenset(kinds), frozenset(pods), same_namespace, actions, gate)


@dataclass(frozen=True)
class Declaration:
    """One plugin, as it declares itself.

    name: its names.X constant. factory: the plugin class (None: registered
    as upstream registers it, not implemented by kschedx: reported as not
    evaluated). points: the upstream extension points it implements
    ("preFilter", "filter"...) in every version; points_from: points it
    implements from a minor on, ((minor, points), ...); points_until: points
    it implements before a minor, ((minor, points), ...); registered_from:
    the first minor that registers it (None: every one); not_run: points it declares
    that kschedx does not run for it (say why at the declaration). reads:
    the kinds of objects it reads besides pods and nodes (Reads). events:
    its EventsToRegister. gates: every feature gate it reads, its events'
    and reads' gates included. details: the form of the explanations it
    attaches to its verdicts (render/details.py words each form).
    node_local: its PreFilter and PreScore state are functions of the pod
    alone, and its Filter verdict and raw Score on a node functions of that
    state and the node's own NodeInfo (and of the kinds in `reads`, for the
    pods those concern; a normalized score also of the other nodes' raw
    scores): a preemption dry run that only such plugins filter can be kept
    from one cycle to the next while the node is unchanged
    (preemption_memo.py), and `explain --watch` asks only the node an event
    is on (commands/reach.py)."""

    name: str
    factory: type | None
    points: frozenset
    points_from: tuple = ()  # (("1.37", frozenset of points), ...)
    points_until: tuple = ()  # (("1.36", frozenset of points), ...)
    registered_from: str | None = None  # "1.36"
    not_run: frozenset = frozenset()
    reads: tuple = ()
    events: tuple = ()
    gates: frozenset = frozenset()
    details: str | None = None
    node_local: bool = False

    def __post_init__(self):
        for what in (*self.events, *self.reads):
            if what.gate is not None and what.gate not in self.gates:
                raise DeclarationError(f"plugin {self.name}: gate {what.gate} of an event or read is not among "
                                       "its gates")
        for r in self.reads:
            unknown = set(r.pods) - set(POD_TRAITS)
            if unknown:
                raise DeclarationError(f"plugin {self.name}: reads for pods {sorted(unknown)}, which is no pod "
                                       f"trait ({', '.join(POD_TRAITS)})")
        if self.factory is not None and getattr(self.factory, "name", None) != self.name:
            raise DeclarationError(f"plugin {self.name}: its class {self.factory.__name__} is named "
                                   f"{getattr(self.factory, 'name', None)!r}")

    def registered(self, features) -> bool:
        return self.registered_from is None or features.at_least(self.registered_from)

    def points_for(self, features) -> frozenset:
        out = self.points
        for since, more in self.points_from:
            if features.at_least(since):
                out = out | more
        for until, more in self.points_until:
            if not features.at_least(until):
                out = out | more
        return out

    def points_ever(self) -> frozenset:
        """The points it implements in some minor."""
        return self.points.union(*(more for _, more in self.points_from + self.points_until))

    def events_for(self, features) -> tuple:
        """EventsToRegister at the features' gates."""
        return tuple(e for e in self.events if e.gate is None or features.enabled(e.gate))

    def reads_for(self, features=None) -> tuple:
        """The Reads at the features' gates (None: those no gate holds)."""
        return tuple(r for r in self.reads
                     if r.gate is None or (features is not None and features.enabled(r.gate)))

    def kinds_read(self, features=None) -> frozenset:
        """The kinds it reads besides pods and nodes (see reads_for)."""
        return frozenset(k for r in self.reads_for(features) for k in r.kinds if k != POD)

    def registers(self, event: ClusterEvent, features) -> bool:
        return any(e.matches(event) for e in self.events_for(features))

    def check(self, point_methods: dict, features) -> None:
        """The `var _ fwk.XPlugin = &P{}` assertions, done when the registry
        is built: every point declared is implemented (but those kschedx
        does not run) and every point implemented is declared. Raises
        DeclarationError."""
        if self.factory is None:
            return
        declared = self.points_for(features)
        implemented = {p for p, m in point_methods.items() if callable(getattr(self.factory, m, None))}
        missing = declared - implemented - NOT_RUN_OFFLINE - self.not_run
        # A point of another minor is implemented all the same (its method
        # is not called where the minor does not declare it).
        extra = implemented - self.points_ever()
        unknown = (declared | self.not_run) - set(point_methods)
        if missing or extra or unknown:
            raise DeclarationError(
                f"plugin {self.name} ({self.factory.__module__}.{self.factory.__name__}) does not match its "
                "declaration:" + (f" declares {sorted(missing)} but does not implement them;" if missing else "")
                + (f" implements {sorted(extra)} but does not declare them;" if extra else "")
                + (f" names {sorted(unknown)}, which are no extension points;" if unknown else ""))


def traits_of(pod: dict) -> frozenset:
    """The POD_TRAITS a pod's spec has ("all" included; "preempting" is not
    the spec's to say)."""
    spec = pod["spec"]
    out = {"all"}
    affinity = spec.get("affinity") or {}
    if affinity.get("podAffinity") or affinity.get("podAntiAffinity"):
        out.add("podAffinity")
    out.add("spread" if spec.get("topologySpreadConstraints") else "default-spread")
    for v in spec.get("volumes") or ():
        if isinstance(v, dict) and (v.get("persistentVolumeClaim") or v.get("ephemeral")):
            out.add("volumes")
    if spec.get("resourceClaims"):
        out.add("claims")
    for c in list(spec.get("containers") or ()) + list(spec.get("initContainers") or ()):
        for name in ((c.get("resources") or {}).get("requests") or {}):
            if "/" in name and not name.startswith(("hugepages-", "kubernetes.io/")):
                out.add("extended")
    return frozenset(out)
