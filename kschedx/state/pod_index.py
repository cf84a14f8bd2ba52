"""Where the snapshot's pods are, by label signature and by affinity terms.

Cluster-wide plugins (InterPodAffinity, PodTopologySpread) ask each cycle
"which nodes hold pods matching this selector / with terms the incoming
pod satisfies". Walking every node's pods for that made a cycle cost
O(pods); this index answers it per distinct signature or terms object and
is kept up to date by NodeInfo.add_pod / remove_pod of the snapshot's own
nodes, so `simulate` never rebuilds it from all pods.

Only the snapshot's NodeInfos point at the index (`NodeInfo.pod_index`);
clones (preemption dry runs, nominated pods) do not, and plugins take the
plain per-node walk for them. The index only narrows which nodes are
walked: what a node contributes, and in which order, is unchanged.
"""

from __future__ import annotations

from collections import Counter
from operator import attrgetter

from .podaffinity import affinity_terms
from .types import SIGNATURE_INFO

# False: plugins walk every node's pods as before (tests compare the two).
ENABLED = True


class PodIndex:
    __slots__ = ("sig_nodes", "ns_sigs", "terms_nodes")

    def __init__(self):
        # label signature -> {node name: pods of that signature}
        self.sig_nodes: dict[int, dict[str, int]] = {}
        # namespace -> signatures present on some node
        self.ns_sigs: dict[str, set[int]] = {}
        # id(PodAffinityTerms) -> (terms, {node name: pods with those terms})
        self.terms_nodes: dict[int, tuple] = {}

    def update(self, pi, node_name: str, delta: int, terms_memo: dict | None = None) -> None:
        sig = pi.signature
        nodes = self.sig_nodes.get(sig)
        if nodes is None:
            nodes = self.sig_nodes[sig] = {}
            self.ns_sigs.setdefault(pi.namespace, set()).add(sig)
        if not _count(nodes, node_name, delta):
            del self.sig_nodes[sig]
            sigs = self.ns_sigs[pi.namespace]
            sigs.discard(sig)
            if not sigs:
                del self.ns_sigs[pi.namespace]
        if pi.has_affinity:
            self.update_terms(pi, node_name, delta, terms_memo)

    def update_terms(self, pi, node_name: str, delta: int, terms_memo: dict | None = None) -> None:
        """The terms part of update(): pods with inter-pod (anti-)affinity."""
        terms = affinity_terms(pi, terms_memo)
        entry = self.terms_nodes.get(id(terms))
        if entry is None:
            entry = self.terms_nodes[id(terms)] = (terms, {})
        if not _count(entry[1], node_name, delta):
            del self.terms_nodes[id(terms)]

    # -- questions --------------------------------------------------------------------
    def count_by_node(self, namespace: str, selector, memo: dict) -> dict[str, int]:
        """{node name: pods of `namespace`, not terminating, whose labels
        match `selector`} (countPodsMatchSelector for every node at once);
        `memo` caches the answer per signature."""
        out: dict[str, int] = {}
        for sig in self.ns_sigs.get(namespace, ()):
            m = memo.get(sig)
            if m is None:
                _, labels, terminating = SIGNATURE_INFO[sig]
                m = memo[sig] = not terminating and selector.matches(labels)
            if m:
                for node, n in self.sig_nodes[sig].items():
                    out[node] = out.get(node, 0) + n
        return out

    def nodes_with_signatures(self, wanted) -> set[str]:
        """Nodes holding a pod whose signature `wanted(sig)` is true."""
        out: set[str] = set()
        for sig, nodes in self.sig_nodes.items():
            if wanted(sig):
                out.update(nodes)
        return out

    def nodes_with_terms(self, wanted) -> set[str]:
        """Nodes holding a pod whose parsed affinity terms `wanted(terms)` is true."""
        out: set[str] = set()
        for terms, nodes in self.terms_nodes.values():
            if wanted(terms):
                out.update(nodes)
        return out


def index_of(snapshot) -> PodIndex | None:
    """The snapshot's index, built on first use from the nodes' pods."""
    if not ENABLED:
        return None
    idx = snapshot.pod_index
    if idx is None:
        idx = snapshot.pod_index = PodIndex()
        _fill(idx, snapshot.node_infos)
    return idx


def _count(by_node: dict, node_name: str, delta: int) -> bool:
    """Add `delta` to a node's count, dropping it at zero; False when no
    node is left."""
    n = by_node.get(node_name, 0) + delta
    if n > 0:
        by_node[node_name] = n
        return True
    by_node.pop(node_name, None)
    return bool(by_node)


# The key under which affinity_terms() keeps a pod's parsed terms.
_TERMS = "PodAffinityTerms"


def _fill(idx: PodIndex, node_infos) -> None:
    """What update() would make of every pod of every node, a node at a
    time (a snapshot of 150,000 pods is indexed when the first pod asks):
    the same entries, inserted in the same order."""
    sig_nodes, ns_sigs, terms_nodes = idx.sig_nodes, idx.ns_sigs, idx.terms_nodes
    terms_memo: dict = {}
    signature = attrgetter("signature")
    for ni in node_infos:
        ni.pod_index = idx
        name = ni.name
        counted = ni.signature_counts
        counts = counted[0] if counted is not None and counted[1] == ni.generation else Counter(map(signature, ni.pods))
        for sig, n in counts.items():
            nodes = sig_nodes.get(sig)
            if nodes is None:
                nodes = sig_nodes[sig] = {}
                ns = SIGNATURE_INFO[sig][0]
                sigs = ns_sigs.get(ns)
                if sigs is None:
                    sigs = ns_sigs[ns] = set()
                sigs.add(sig)
            nodes[name] = n
        for p in ni.pods_with_affinity:
            cache = p._cache
            terms = cache.get(_TERMS) if cache is not None else None
            if terms is None:
                # affinity_terms(p, terms_memo), inlined for its common case.
                hit = terms_memo.get((id(p.pod["spec"].get("affinity")), p.namespace))
                if hit is None:
                    terms = affinity_terms(p, terms_memo)
                else:
                    terms = hit[1]
                    if cache is None:
                        cache = p._cache = {}
                    cache[_TERMS] = terms
            entry = terms_nodes.get(id(terms))
            if entry is None:
                entry = terms_nodes[id(terms)] = (terms, {})
            by_node = entry[1]
            by_node[name] = by_node.get(name, 0) + 1
