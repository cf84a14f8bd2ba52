"""InterPodAffinity PreFilter/Filter: counts per topology pair, built once.

PreFilter walks the cluster once and keeps three maps of
(topologyKey, value) -> number of pods, exactly as upstream:
- existing pods whose required anti-affinity matches the incoming pod;
- existing pods matching all of the incoming pod's required affinity terms;
- existing pods matching each of its required anti-affinity terms.
Filter then looks up the node's own pairs: O(terms) per node.

Next to the counts, the state keeps which pods made them (the explanation);
those lists are shared between clones and AddPod/RemovePod record their
changes in a small overlay, so cloning stays cheap for preemption dry runs.
"""

from __future__ import annotations

from ...framework.status import Code, DeferredStatus, Status
from ...state.types import generation_mark
from ...state.podaffinity import (
    SignaturePod,
    affinity_terms,
    node_signature_counts,
    pod_matches_all_terms,
    pods_with_signature,
)

PRE_FILTER_STATE_KEY = "PreFilterInterPodAffinity"

ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"

# How many pods an explanation names per topology domain.
MAX_PODS_SHOWN = 10

EXISTING_ANTI = "existingAntiAffinity"
AFFINITY = "affinity"
ANTI = "antiAffinity"


class PreFilterState:
    __slots__ = ("existing_anti_affinity_counts", "affinity_counts", "anti_affinity_counts",
                 "pod_info", "required_affinity", "required_anti_affinity", "namespace_labels",
                 "witnesses", "overlay", "generation")

    def __init__(self, pod_info, required_affinity, required_anti_affinity, namespace_labels):
        self.pod_info = pod_info
        self.required_affinity = required_affinity
        self.required_anti_affinity = required_anti_affinity
        self.namespace_labels = namespace_labels
        self.existing_anti_affinity_counts: dict = {}
        self.affinity_counts: dict = {}
        self.anti_affinity_counts: dict = {}
        # kind -> {pair: [(PodInfo, node name)]}: never mutated after PreFilter.
        self.witnesses = {EXISTING_ANTI: {}, AFFINITY: {}, ANTI: {}}
        # [(kind, pair, PodInfo, node name, +1|-1)] from AddPod / RemovePod.
        self.overlay: list = []
        # Every node changed after PreFilter has a higher generation.
        self.generation = generation_mark()

    def clone(self) -> "PreFilterState":
        c = PreFilterState.__new__(PreFilterState)
        c.pod_info = self.pod_info
        c.required_affinity = self.required_affinity
        c.required_anti_affinity = self.required_anti_affinity
        c.namespace_labels = self.namespace_labels
        c.existing_anti_affinity_counts = dict(self.existing_anti_affinity_counts)
        c.affinity_counts = dict(self.affinity_counts)
        c.anti_affinity_counts = dict(self.anti_affinity_counts)
        c.witnesses = self.witnesses
        c.overlay = list(self.overlay)
        c.generation = self.generation
        return c

    def check_unchanged(self, node_info) -> None:
        """A deferred explanation read after the snapshot changed would name
        the pods of another state: an error, not a wrong answer. (Witness
        nodes are checked in pods_for.)"""
        if node_info.generation > self.generation:
            raise RuntimeError(f"filter details of node {node_info.name} read after the node changed")

    # -- AddPod / RemovePod -------------------------------------------------------
    def update_with_pod(self, pi, node_info, multiplier: int) -> None:
        labels = node_info.labels
        for t in affinity_terms(pi).required_anti_affinity:
            if t.matches(self.pod_info, self.namespace_labels):
                self._update(EXISTING_ANTI, self.existing_anti_affinity_counts, labels, t.topology_key, multiplier,
                             pi, node_info.name)
        if pod_matches_all_terms(self.required_affinity, pi):
            for t in self.required_affinity:
                self._update(AFFINITY, self.affinity_counts, labels, t.topology_key, multiplier, pi, node_info.name)
        for t in self.required_anti_affinity:
            if t.matches(pi, None):
                self._update(ANTI, self.anti_affinity_counts, labels, t.topology_key, multiplier, pi, node_info.name)

    def _update(self, kind, counts, labels, key, value, pi, node_name) -> None:
        tv = labels.get(key)
        if tv is None:
            return
        pair = (key, tv)
        n = counts.get(pair, 0) + value
        # The value can go negative and back; a pair at zero is removed.
        if n == 0:
            counts.pop(pair, None)
        else:
            counts[pair] = n
        self.overlay.append((kind, pair, pi, node_name, value))

    # -- explanation ------------------------------------------------------------------
    def pods_for(self, kind: str, pair, limit: int | None = None) -> list:
        """The (PodInfo, node) pairs behind a count, AddPod/RemovePod applied
        (witnesses are kept per pod, or per label signature and node)."""
        pods = []
        for a, b in self.witnesses[kind].get(pair, ()):
            if isinstance(a, int):
                if b.generation > self.generation:
                    raise RuntimeError(f"pods on node {b.name} read after the node changed")
                pods.extend((p, b.name) for p in pods_with_signature(b, a))
            else:
                pods.append((a, b))
            if limit is not None and len(pods) >= limit + len(self.overlay):
                break
        for k, p, pi, node, delta in self.overlay:
            if k != kind or p != pair:
                continue
            if delta > 0:
                pods.append((pi, node))
            else:
                for i, (q, _) in enumerate(pods):
                    if q.uid == pi.uid:
                        del pods[i]
                        break
        return pods


def _count(counts: dict, witnesses: dict, pair, witness: tuple, n: int = 1) -> None:
    """Adds n to a topology pair's count and remembers what counted there
    (the witnesses the details name)."""
    counts[pair] = counts.get(pair, 0) + n
    lst = witnesses.get(pair)
    if lst is None:
        witnesses[pair] = [witness]
    else:
        lst.append(witness)


def existing_anti_affinity_counts(state: PreFilterState, nodes, index=None) -> None:
    """getExistingAntiAffinityCounts over nodes holding pods with required
    anti-affinity. With the snapshot's PodIndex (`nodes` then the snapshot's
    nodes, which are all in it), only nodes holding pods whose terms match
    the incoming pod are walked (the others add nothing)."""
    incoming = state.pod_info
    ns_labels = state.namespace_labels
    counts = state.existing_anti_affinity_counts
    witnesses = state.witnesses[EXISTING_ANTI]
    memo: dict = {}  # id(term) -> matches the incoming pod

    def matches(t) -> bool:
        m = memo.get(id(t))
        if m is None:
            m = memo[id(t)] = t.matches(incoming, ns_labels)
        return m

    if index is not None:
        hot = index.nodes_with_terms(lambda terms: any([matches(t) for t in terms.required_anti_affinity]))
        if not hot:
            return  # every snapshot node is in the index: none to walk
        nodes = [ni for ni in nodes if ni.name in hot or ni.pod_index is not index]
    for ni in nodes:
        labels = ni.labels
        for ep in ni.pods_with_required_anti_affinity:
            for t in affinity_terms(ep).required_anti_affinity:
                if matches(t):
                    tv = labels.get(t.topology_key)
                    if tv is not None:
                        _count(counts, witnesses, (t.topology_key, tv), (ep, ni.name))


def incoming_affinity_counts(state: PreFilterState, nodes, index=None) -> None:
    """getIncomingAffinityAntiAffinityCounts: existing pods matching all the
    required affinity terms / each required anti-affinity term. Pods are
    taken per label signature (same namespace and labels: same answer);
    with the snapshot's PodIndex (`nodes` then the snapshot's nodes, all in
    it) only nodes holding a matching signature are walked."""
    req = state.required_affinity
    anti = state.required_anti_affinity
    if not req and not anti:
        return
    aff_counts, anti_counts = state.affinity_counts, state.anti_affinity_counts
    aff_w, anti_w = state.witnesses[AFFINITY], state.witnesses[ANTI]
    memo: dict = {}  # label signature -> (matches all affinity terms, matching anti-affinity term indexes)

    def match(sig):
        m = memo.get(sig)
        if m is None:
            p = SignaturePod(sig)
            m = memo[sig] = (
                pod_matches_all_terms(req, p),
                tuple(i for i, t in enumerate(anti) if t.matches(p, None)),
            )
        return m

    if index is not None:
        hot = index.nodes_with_signatures(lambda sig: bool(match(sig)[0] or match(sig)[1]))
        if not hot:
            return  # every snapshot node is in the index: none to walk
        nodes = [ni for ni in nodes if ni.name in hot or ni.pod_index is not index]
    for ni in nodes:
        sig_counts = node_signature_counts(ni)
        if not sig_counts:
            continue
        labels = ni.labels
        aff_pairs = None
        anti_pairs = None
        for sig, n in sig_counts.items():
            m = match(sig)
            if m[0]:
                if aff_pairs is None:
                    aff_pairs = [(t.topology_key, labels.get(t.topology_key)) for t in req]
                for pair in aff_pairs:
                    if pair[1] is not None:
                        _count(aff_counts, aff_w, pair, (sig, ni), n)
            if m[1]:
                if anti_pairs is None:
                    anti_pairs = [(t.topology_key, labels.get(t.topology_key)) for t in anti]
                for i in m[1]:
                    pair = anti_pairs[i]
                    if pair[1] is not None:
                        _count(anti_counts, anti_w, pair, (sig, ni), n)


def satisfy_existing_pods_anti_affinity(state: PreFilterState, node_info) -> bool:
    counts = state.existing_anti_affinity_counts
    if counts:
        labels = node_info.labels
        if len(counts) < len(labels):
            for (k, v), n in counts.items():
                if n > 0 and labels.get(k) == v:
                    return False
        else:
            for k, v in labels.items():
                if counts.get((k, v), 0) > 0:
                    return False
    return True


def satisfy_pod_anti_affinity(state: PreFilterState, node_info) -> bool:
    counts = state.anti_affinity_counts
    if counts:
        labels = node_info.labels
        for t in state.required_anti_affinity:
            tv = labels.get(t.topology_key)
            if tv is not None and counts.get((t.topology_key, tv), 0) > 0:
                return False
    return True


def satisfy_pod_affinity(state: PreFilterState, node_info) -> bool:
    pods_exist = True
    labels = node_info.labels
    counts = state.affinity_counts
    for t in state.required_affinity:
        tv = labels.get(t.topology_key)
        if tv is None:
            # Every topology key of the terms must be on the node.
            return False
        if counts.get((t.topology_key, tv), 0) <= 0:
            pods_exist = False
    if not pods_exist:
        # The first pod of a group whose affinity points at itself: when no
        # pod in the cluster matches and the pod matches its own terms, it
        # may go anywhere that has the topology keys.
        return not counts and first_of_group(state)
    return True


def first_of_group(state: PreFilterState) -> bool:
    return pod_matches_all_terms(state.required_affinity, state.pod_info)


def filter_node(state: PreFilterState, node_info, defer: bool = False) -> Status | None:
    """The node's verdict, with its explanation; with `defer`, the
    explanation is worked out when first read (DeferredStatus)."""
    if not satisfy_pod_affinity(state, node_info):
        return _status(defer, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY, state, node_info,
                       affinity_details, False)
    if not satisfy_pod_anti_affinity(state, node_info):
        return _status(defer, Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY, state, node_info, anti_affinity_details)
    if not satisfy_existing_pods_anti_affinity(state, node_info):
        return _status(defer, Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY, state, node_info,
                       existing_anti_affinity_details)
    if state.required_affinity:
        return _status(defer, Code.SUCCESS, None, state, node_info, affinity_details, True)
    return None


def _status(defer: bool, code: Code, reason: str | None, state: PreFilterState, node_info, explain, *args) -> Status:
    reasons = () if reason is None else (reason,)
    if not defer:
        return Status(code, *reasons, details=explain(state, node_info, *args))

    def details():
        # An explanation names pods on other nodes: it is only true of the
        # snapshot PreFilter saw.
        state.check_unchanged(node_info)
        return explain(state, node_info, *args)

    return DeferredStatus(code, *reasons, explain=details)


def filter_nodes(state: PreFilterState, nodes) -> list | None:
    """filter_node on every node, explanations deferred (the runner's table
    keeps them; simulate drops most unread). Without required affinity
    terms a node passes without details unless an anti-affinity count
    concerns it, so only those nodes are looked at in full."""
    if state.required_affinity:
        return [filter_node(state, ni, True) for ni in nodes]
    anti = state.anti_affinity_counts
    existing = state.existing_anti_affinity_counts
    if not anti and not existing:
        return None
    # A node fails an anti-affinity check when its value of some key has a
    # positive count (counted pairs never have a None value).
    bad: dict[str, set] = {}
    if anti:
        keys = {t.topology_key for t in state.required_anti_affinity}
        for (k, v), n in anti.items():
            if n > 0 and k in keys:
                bad.setdefault(k, set()).add(v)
    for (k, v), n in existing.items():
        if n > 0:
            bad.setdefault(k, set()).add(v)
    flagged = set()
    for k, values in bad.items():
        flagged.update(i for i, ni in enumerate(nodes) if ni.labels.get(k) in values)
    if not flagged:
        return None
    out = [None] * len(nodes)
    for i in flagged:
        out[i] = filter_node(state, nodes[i], True)
    return out


# -- explanations ------------------------------------------------------------------------
def pod_ref(pi, node_name: str, topology_value: str | None = None) -> dict:
    d = {"pod": pi.key, "node": node_name}
    if topology_value is not None:
        d["topologyValue"] = topology_value
    return d


def _pods_list(state, kind, pair) -> list:
    pods = state.pods_for(kind, pair, MAX_PODS_SHOWN)
    return [pod_ref(pi, node, pair[1]) for pi, node in pods[:MAX_PODS_SHOWN]]


def affinity_details(state: PreFilterState, node_info, passed: bool) -> dict:
    labels = node_info.labels
    terms = []
    for t in state.required_affinity:
        d = t.describe()
        tv = labels.get(t.topology_key)
        d["nodeValue"] = tv
        if tv is None:
            d["missingTopologyKey"] = True
            d["matchingPods"] = 0
        else:
            pair = (t.topology_key, tv)
            d["matchingPods"] = state.affinity_counts.get(pair, 0)
            if not passed:
                d["pods"] = _pods_list(state, AFFINITY, pair)
        terms.append(d)
    out = {"requiredAffinityTerms": terms}
    if passed and all(d["matchingPods"] <= 0 for d in terms):
        out["firstOfGroup"] = True
        out["note"] = ("no pod in the cluster matches the pod's affinity terms and the pod matches them itself: "
                       "it may be placed as the first of its group")
    elif not passed:
        out["matchingPodsInCluster"] = sum(n for n in state.affinity_counts.values() if n > 0)
        if not state.affinity_counts and not first_of_group(state):
            out["note"] = "no pod matches the affinity terms, and the pod does not match them itself"
    return out


def anti_affinity_details(state: PreFilterState, node_info) -> dict:
    labels = node_info.labels
    terms = []
    for t in state.required_anti_affinity:
        d = t.describe()
        tv = labels.get(t.topology_key)
        d["nodeValue"] = tv
        if tv is not None:
            pair = (t.topology_key, tv)
            n = state.anti_affinity_counts.get(pair, 0)
            d["matchingPods"] = n
            if n > 0:
                d["pods"] = _pods_list(state, ANTI, pair)
        else:
            d["matchingPods"] = 0
        terms.append(d)
    return {"requiredAntiAffinityTerms": terms}


def existing_anti_affinity_details(state: PreFilterState, node_info) -> dict:
    labels = node_info.labels
    pods = []
    total = 0
    for pair, n in sorted(state.existing_anti_affinity_counts.items()):
        if n <= 0 or labels.get(pair[0]) != pair[1]:
            continue
        total += n
        for pi, node in state.pods_for(EXISTING_ANTI, pair, MAX_PODS_SHOWN):
            if len(pods) < MAX_PODS_SHOWN:
                ref = pod_ref(pi, node, pair[1])
                ref["topologyKey"] = pair[0]
                pods.append(ref)
    return {"existingPods": pods, "matchingPods": total}
