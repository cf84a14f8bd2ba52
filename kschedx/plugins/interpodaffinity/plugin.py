"""The InterPodAffinity plugin (interpodaffinity/plugin.go): wiring, args and
namespace handling; the work is in filtering.py and scoring.py."""

from __future__ import annotations

from ...config import names
from ...config.pluginargs import checked_plugin_args
from ...framework.declaration import Declaration, reads
from ...framework.events import ActionType as A, NODE, POD, Register
from ...framework.interface import Plugin, PluginError, features_of
from ...framework.status import Code, Status
from ...state.pod_index import index_of
from ...state.podaffinity import affinity_terms
from ...state.podaffinity import WeightedAffinityTerm
from . import filtering, scoring



def namespace_labels(cluster, namespace: str) -> dict:
    """GetNamespaceLabelsSnapshot: a namespace that the lister does not have
    has no labels (upstream logs and goes on with an empty set)."""
    ns = cluster.namespaces.get(namespace)
    if ns is None:
        return {}
    return dict(ns["metadata"].get("labels") or {})


class _Extensions:
    def __init__(self, plugin):
        self.plugin = plugin

    def add_pod(self, state, pod_info, pod_info_to_add, node_info):
        s = _read(state, filtering.PRE_FILTER_STATE_KEY)
        s.update_with_pod(pod_info_to_add, node_info, 1)
        return None

    def remove_pod(self, state, pod_info, pod_info_to_remove, node_info):
        s = _read(state, filtering.PRE_FILTER_STATE_KEY)
        s.update_with_pod(pod_info_to_remove, node_info, -1)
        return None


# A PreFilter or PreScore that skips keeps Filter or Score from running, so a
# state is missing only when the configuration disables PreFilter (PreScore)
# but not Filter (Score): kube-scheduler fails the cycle with an Error then,
# worded differently for each state.
_NOT_FOUND = {
    filtering.PRE_FILTER_STATE_KEY: f'error reading "{filtering.PRE_FILTER_STATE_KEY}" from cycleState: not found',
    scoring.PRE_SCORE_STATE_KEY: f'failed to read "{scoring.PRE_SCORE_STATE_KEY}" from cycleState: not found',
}


def _read(state, key):
    s = state.read(key)
    if s is None:
        raise PluginError(_NOT_FOUND[key])
    return s


class InterPodAffinity(Plugin):
    name = names.InterPodAffinity

    def __init__(self, handle, args=None):
        super().__init__(handle, checked_plugin_args(self.name, args, features_of(handle)))
        self.hard_pod_affinity_weight = self.args["hardPodAffinityWeight"]
        self.ignore_preferred_terms_of_existing_pods = bool(self.args["ignorePreferredTermsOfExistingPods"])
        self.replace_selector = features_of(handle).inter_pod_affinity_namespace_selector_replaced
        self._extensions = _Extensions(self)

    # -- PreFilter / Filter ----------------------------------------------------------
    def pre_filter(self, state, pod_info, nodes):
        snapshot = self.handle.snapshot
        terms = affinity_terms(pod_info)
        err = terms.error_message()
        if err is not None:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"parsing pod: {err}")
        cluster = snapshot.cluster
        required = [t.with_namespaces_merged(cluster, self.replace_selector) for t in terms.required_affinity]
        required_anti = [t.with_namespaces_merged(cluster, self.replace_selector)
                         for t in terms.required_anti_affinity]
        s = filtering.PreFilterState(pod_info, required, required_anti, namespace_labels(cluster, pod_info.namespace))
        index = index_of(snapshot)
        # With the index, it finds the nodes to walk among all.
        filtering.existing_anti_affinity_counts(
            s, snapshot.node_infos if index is not None else snapshot.have_pods_with_required_anti_affinity(), index)
        filtering.incoming_affinity_counts(s, nodes, index)
        if not s.existing_anti_affinity_counts and not required and not required_anti:
            return None, Status(Code.SKIP)
        state.write(filtering.PRE_FILTER_STATE_KEY, s)
        return None, None

    def pre_filter_extensions(self):
        return self._extensions

    def filter(self, state, pod_info, node_info):
        s = state.read(filtering.PRE_FILTER_STATE_KEY)
        if s is None:
            # An Error Status, which the framework names with this plugin.
            return Status.as_error(_NOT_FOUND[filtering.PRE_FILTER_STATE_KEY])
        return filtering.filter_node(s, node_info)

    def filter_all(self, state, pod_info, nodes):
        s = state.read(filtering.PRE_FILTER_STATE_KEY)
        if s is None:
            return [Status.as_error(_NOT_FOUND[filtering.PRE_FILTER_STATE_KEY]) for _ in nodes]
        return filtering.filter_nodes(s, nodes)

    # -- PreScore / Score ---------------------------------------------------------------
    def pre_score(self, state, pod_info, nodes):
        affinity = pod_info.spec.get("affinity") or {}
        has_constraints = bool(
            ((affinity.get("podAffinity") or {}).get("preferredDuringSchedulingIgnoredDuringExecution"))
            or ((affinity.get("podAntiAffinity") or {}).get("preferredDuringSchedulingIgnoredDuringExecution"))
        )
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status(Code.SKIP)
        snapshot = self.handle.snapshot
        # Unless the pod has preferred terms, only nodes holding pods with
        # affinity can contribute. Either way every node of the cluster is
        # looked at, not only the feasible ones.
        index = index_of(snapshot)
        all_nodes = snapshot.node_infos if has_constraints or index is not None else snapshot.have_pods_with_affinity()
        terms = affinity_terms(pod_info)
        if terms.error_message() is not None:
            return Status.as_error(f"failed to parse pod: {terms.error_message()}")
        cluster = snapshot.cluster
        preferred = [WeightedAffinityTerm(wt.term.with_namespaces_merged(cluster, self.replace_selector), wt.weight)
                     for wt in terms.preferred_affinity]
        preferred_anti = [WeightedAffinityTerm(wt.term.with_namespaces_merged(cluster, self.replace_selector),
                                               wt.weight)
                          for wt in terms.preferred_anti_affinity]
        s = scoring.PreScoreState(pod_info, namespace_labels(cluster, pod_info.namespace))
        if not scoring.compute_pre_score(self, s, pod_info, preferred, preferred_anti, all_nodes, has_constraints,
                                         index):
            return Status(Code.SKIP)
        state.write(scoring.PRE_SCORE_STATE_KEY, s)
        return None

    def score(self, state, pod_info, node_info) -> int:
        return scoring.score_node(_read(state, scoring.PRE_SCORE_STATE_KEY), node_info)

    def score_all(self, state, pod_info, nodes) -> list[int]:
        return scoring.score_nodes(_read(state, scoring.PRE_SCORE_STATE_KEY), nodes)

    def normalize_score(self, state, pod_info, scores):
        scoring.normalize(_read(state, scoring.PRE_SCORE_STATE_KEY), scores)
        return None

    def normalize_all(self, state, pod_info, nodes, scores) -> list[int]:
        return scoring.normalize_all(_read(state, scoring.PRE_SCORE_STATE_KEY), scores)

    def score_details(self, state, pod_info, node_info):
        s = state.read(scoring.PRE_SCORE_STATE_KEY)
        if s is None:
            return None
        return scoring.score_details(s, node_info)

    def score_details_all(self, state, pod_info, nodes) -> list:
        s = state.read(scoring.PRE_SCORE_STATE_KEY)
        if s is None:
            return [None] * len(nodes)
        return scoring.score_details_all(s, nodes)


DECLARATION = Declaration(
    name=names.InterPodAffinity,
    factory=InterPodAffinity,
    points=frozenset({"preFilter", "filter", "preScore", "score"}),
    # Namespace selectors of affinity terms read namespaces' labels.
    reads=(reads("Namespace", pods=("podAffinity",)),
           reads(POD, pods=("podAffinity",), actions=A.Add | A.Update)),
    events=(Register(POD, A.Add | A.UpdatePodLabel | A.Delete), Register(NODE, A.Add | A.UpdateNodeLabel)),
    details="pod-affinity",
)
