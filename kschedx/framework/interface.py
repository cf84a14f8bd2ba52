"""The plugin interface: the extension points of the scheduling framework.

A plugin implements an extension point by defining its method; the profile
finds them by name. Plugins receive PodInfo / NodeInfo (already-parsed views)
rather than raw objects, and return a Status, or None for Success, as
upstream returns a nil *Status.

Batch fast paths (optional): a plugin whose Filter or Score is cheap per node
can also define `filter_all(state, pod_info, nodes)` -> one Status-or-None per
node, or None when every node passes without details, and
`score_all(state, pod_info, nodes)` -> one score per node, and, for a
NormalizeScore that cannot fail, `normalize_all(state, pod_info, nodes,
scores)` -> the normalized scores as a new list. The runner calls them for a
cycle's recording pass (one Python call instead of one per node); they must
give exactly what `filter` / `score` / `normalize_score` give, which stay the
reference (preemption and nominated pods call the per-node methods).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..features import Features, default_features
from ..state.snapshot import Snapshot
from ..state.types import NodeInfo
from .status import Code, Status

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0

EXTENSION_POINTS = (
    "pre_enqueue",
    "less",
    "pre_filter",
    "filter",
    "post_filter",
    "pre_score",
    "score",
    "normalize_score",
    "reserve",
    "bind",
)


class PluginError(Exception):
    """A plugin failed (Error status): the cycle stops, like upstream."""


class PreFilterResult:
    """Nodes a PreFilter plugin already knows are the only candidates."""

    __slots__ = ("node_names",)

    def __init__(self, node_names=None):
        self.node_names = None if node_names is None else set(node_names)

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: "PreFilterResult | None") -> "PreFilterResult":
        if other is None or other.all_nodes():
            return self
        if self.all_nodes():
            return PreFilterResult(other.node_names)
        return PreFilterResult(self.node_names & other.node_names)


@dataclass(frozen=True)
class EventReach:
    """How far beyond the node it filters or scores a plugin's verdict for
    one pod reaches, as its cycle left it (Plugin.event_reach): what
    `explain --watch` reads to leave alone the pods an event cannot move.

    pods(pod dict): whether another pod's arriving, leaving or relabelling,
    on any node, can change the verdict (pods on the node itself are the
    node's own matter); label_keys: node label keys read on any node;
    node_set: whether a node added or removed changes the verdict on other
    nodes; node_count: whether it changes only scores on other nodes (the
    watch then scores the feasible nodes again rather than run a new
    cycle); taints: whether nodes' taints are read beyond the node filtered;
    images: image names whose coming or going on any node matters."""

    pods: object = None  # callable(pod dict) -> bool, or None: no other pod
    label_keys: frozenset = frozenset()
    node_set: bool = False
    node_count: bool = False
    taints: bool = False
    images: frozenset = frozenset()


@dataclass
class NodeScore:
    name: str
    score: int


@dataclass
class PostFilterResult:
    nominated_node: str | None = None
    # kschedx's explanation of the preemption (victims, candidates...).
    details: dict = field(default_factory=dict)


class NodeToStatus:
    """What PostFilter plugins read: each node's status, absent ones sharing one.

    NodesForStatusCode lists nodes in `order`: the framework gives the node-tree
    order (SamplingState.order), which is upstream's own when PreFilter
    rejected every node (the snapshot's list); otherwise upstream ranges
    over a Go map (random order each cycle) and kschedx keeps node-tree
    order. Without `order`, the snapshot's list."""

    def __init__(self, explicit: dict[str, Status], absent: Status | None, snapshot: Snapshot, order=None):
        self.explicit = explicit
        self.absent = absent
        self.snapshot = snapshot
        self.order = order

    def get(self, name: str) -> Status | None:
        st = self.explicit.get(name)
        if st is None:
            return self.absent
        return st

    def nodes_for_status_code(self, code: Code) -> list[NodeInfo]:
        out = []
        for ni in self.order if self.order is not None else self.snapshot.node_infos:
            st = self.get(ni.name)
            if st is not None and st.code == code:
                out.append(ni)
        return out


def features_of(handle) -> Features:
    """The Features a plugin reads: `handle.features`, the Framework's (one
    per run: the version and its feature gates). A plugin made without a
    framework (handle None, as unit tests make them) reads the newest
    version's defaults. Plugins read it in their constructor and keep what
    they need, as upstream's constructors keep their feature.Features."""
    features = getattr(handle, "features", None)
    return features if features is not None else default_features()


class Plugin:
    """Base class: a name, a handle to the cycle's snapshot, and arguments."""

    name = ""

    def __init__(self, handle, args: dict | None = None):
        self.handle = handle
        self.args = args or {}

    def pre_filter_extensions(self):
        """Return an object with add_pod / remove_pod, or None."""
        return None

    def implements(self, point: str) -> bool:
        if point == "normalize_score":
            return type(self).normalize_score is not Plugin.normalize_score
        return callable(getattr(self, point, None))

    # Declared so `implements` can tell an override from the default.
    def normalize_score(self, state, pod_info, scores: list[NodeScore]) -> Status | None:  # pragma: no cover
        return None

    def score_details(self, state, pod_info, node_info):
        """kschedx's explanation of a score (optional)."""
        return None

    def score_details_all(self, state, pod_info, nodes) -> list:
        """score_details of each of `nodes`, in order. A plugin whose
        explanation depends on little of the node may answer nodes alike
        with one shared (read-only) object, which writers encode once."""
        details = self.score_details
        return [details(state, pod_info, ni) for ni in nodes]

    def event_reach(self, state, pod_info) -> EventReach | None:
        """What beyond the node it looks at this plugin read for the pod in
        the cycle that left `state` (EventReach), for a plugin whose
        declaration is not node-local; None: anything may matter."""
        return None

    def cluster_objects_changed(self, kinds: frozenset):
        """Objects of these kinds were added, deleted, or had their status
        changed in the ClusterState for the time of one cycle (`explain
        --fix` checking a change): a plugin caching what it derived from
        them starts afresh. Returns a callable that puts the caches back
        once the objects are, or None (nothing cached)."""
        return None
