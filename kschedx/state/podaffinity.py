"""Parsed pod (anti-)affinity terms, as the scheduler's PodInfo holds them.

kube-scheduler parses a pod's four term lists once (PodInfo.Update) into
AffinityTerm values: the namespaces the term names (the pod's own when it
names none and has no namespaceSelector), its label selector, its namespace
selector and its topology key. kschedx does the same, lazily, through
`pod_info.cached`, and interns the parsed terms: the replicas of one
workload share the same term objects, so plugins can memoise per term.

Label signatures (`label_signature`) give every distinct (namespace, labels,
terminating) combination a small integer, so a cycle evaluates a selector
once per distinct signature instead of once per pod.
"""

from __future__ import annotations

import json

from ..api.labels import EVERYTHING, NOTHING, Selector, SelectorError, label_selector
from .types import SIGNATURE_INFO

HOSTNAME_KEY = "kubernetes.io/hostname"
ZONE_KEY = "topology.kubernetes.io/zone"


class AffinityTerm:
    """fwk.AffinityTerm: namespaces, selector, topology key, namespace selector."""

    __slots__ = ("namespaces", "selector", "topology_key", "namespace_selector", "raw")

    def __init__(self, namespaces: frozenset, selector: Selector, topology_key: str,
                 namespace_selector: Selector, raw: dict | None = None):
        self.namespaces = namespaces
        self.selector = selector
        self.topology_key = topology_key
        self.namespace_selector = namespace_selector
        self.raw = raw

    def matches(self, pod_info, ns_labels) -> bool:
        """The pod is in one of the term's namespaces (by name or by its
        namespace's labels) and its labels match the selector."""
        if pod_info.namespace in self.namespaces or self.namespace_selector.matches(ns_labels or {}):
            return self.selector.matches(pod_info.labels)
        return False

    def with_namespaces_merged(self, cluster, replace_selector: bool = True) -> "AffinityTerm":
        """mergeAffinityTermNamespacesIfNotEmpty: an incoming pod's non-empty
        namespaceSelector is unrolled into namespace names once per cycle,
        and (`replace_selector`, from 1.37) replaced by Nothing, so existing
        pods are matched by name only. Before 1.37 the term was passed by
        value and the replacement lost: the selector stays, and existing pods
        are matched against it with no namespace labels, so a selector that
        an empty label set satisfies (NotIn, DoesNotExist) matches pods of
        every namespace."""
        if self.namespace_selector.is_empty():
            return self
        names = set(self.namespaces)
        for name, ns in cluster.namespaces.items():
            if self.namespace_selector.matches(ns["metadata"].get("labels") or {}):
                names.add(name)
        return AffinityTerm(frozenset(names), self.selector, self.topology_key,
                            NOTHING if replace_selector else self.namespace_selector, self.raw)

    def describe(self) -> dict:
        d = {"topologyKey": self.topology_key, "labelSelector": selector_string(self.selector)}
        if self.namespaces:
            d["namespaces"] = sorted(self.namespaces)
        if not self.namespace_selector.nothing:
            d["namespaceSelector"] = selector_string(self.namespace_selector)
        return d

    def __repr__(self):
        return f"AffinityTerm({self.describe()})"


class WeightedAffinityTerm:
    __slots__ = ("term", "weight")

    def __init__(self, term: AffinityTerm, weight: int):
        self.term = term
        self.weight = weight

    def __repr__(self):
        return f"WeightedAffinityTerm({self.weight}, {self.term!r})"


class PodAffinityTerms:
    """The four parsed lists of one pod, and the parse error if any (a list
    whose selector does not parse is empty, as upstream leaves it nil)."""

    __slots__ = ("required_affinity", "required_anti_affinity", "preferred_affinity",
                 "preferred_anti_affinity", "errors")

    def __init__(self):
        self.required_affinity: list[AffinityTerm] = []
        self.required_anti_affinity: list[AffinityTerm] = []
        self.preferred_affinity: list[WeightedAffinityTerm] = []
        self.preferred_anti_affinity: list[WeightedAffinityTerm] = []
        self.errors: list[str] = []

    def error_message(self) -> str | None:
        """utilerrors.NewAggregate(...).Error()"""
        if not self.errors:
            return None
        if len(self.errors) == 1:
            return self.errors[0]
        return "[" + ", ".join(self.errors) + "]"


# Parsed terms shared by every pod whose term (and namespace, when the term
# defaults to it) is the same: replicas of a workload parse to one object.
_TERM_CACHE: dict = {}
_TERM_CACHE_LIMIT = 100_000


def _parse_term(namespace: str, term: dict) -> AffinityTerm:
    key = (namespace, json.dumps(term, sort_keys=True, default=str))
    cached = _TERM_CACHE.get(key)
    if cached is not None:
        return cached
    selector = label_selector(term.get("labelSelector"))
    ns_selector_raw = term.get("namespaceSelector")
    names = term.get("namespaces") or []
    if not names and ns_selector_raw is None:
        namespaces = frozenset((namespace,))
    else:
        namespaces = frozenset(names)
    ns_selector = label_selector(ns_selector_raw)
    parsed = AffinityTerm(namespaces, selector, term.get("topologyKey") or "", ns_selector, term)
    if len(_TERM_CACHE) < _TERM_CACHE_LIMIT:
        _TERM_CACHE[key] = parsed
    return parsed


def _parse_list(namespace, terms, weighted: bool):
    out = []
    for t in terms or ():
        if weighted:
            out.append(WeightedAffinityTerm(_parse_term(namespace, t.get("podAffinityTerm") or {}), t.get("weight") or 0))
        else:
            out.append(_parse_term(namespace, t))
    return out


def _compute_terms(pod_info) -> PodAffinityTerms:
    out = PodAffinityTerms()
    affinity = pod_info.spec.get("affinity") or {}
    pa = affinity.get("podAffinity") or {}
    paa = affinity.get("podAntiAffinity") or {}
    ns = pod_info.namespace
    for attr, source, weighted, label in (
        ("required_affinity", pa.get("requiredDuringSchedulingIgnoredDuringExecution"), False, "requiredAffinityTerms"),
        ("required_anti_affinity", paa.get("requiredDuringSchedulingIgnoredDuringExecution"), False,
         "requiredAntiAffinityTerms"),
        ("preferred_affinity", pa.get("preferredDuringSchedulingIgnoredDuringExecution"), True, "preferredAffinityTerms"),
        ("preferred_anti_affinity", paa.get("preferredDuringSchedulingIgnoredDuringExecution"), True,
         "preferredAntiAffinityTerms"),
    ):
        try:
            setattr(out, attr, _parse_list(ns, source, weighted))
        except SelectorError as exc:
            out.errors.append(f"{label}: {exc}")
    return out


# Parsed term lists shared by every pod of a namespace with the same pod
# (anti-)affinity: the replicas of a workload are parsed once.
_POD_TERMS_CACHE: dict = {}


def _shared_terms(pod_info) -> PodAffinityTerms:
    affinity = pod_info.spec.get("affinity") or {}
    key = (pod_info.namespace, repr((affinity.get("podAffinity"), affinity.get("podAntiAffinity"))))
    terms = _POD_TERMS_CACHE.get(key)
    if terms is None:
        terms = _compute_terms(pod_info)
        if len(_POD_TERMS_CACHE) < _TERM_CACHE_LIMIT:
            _POD_TERMS_CACHE[key] = terms
    return terms


def affinity_terms(pod_info, memo: dict | None = None) -> PodAffinityTerms:
    """The pod's parsed terms. `memo`, for a loop over many pods during which
    no pod changes: pods whose spec holds the very same affinity object
    (replicas sharing one admitted spec) in one namespace take the first
    one's terms without a look at their content."""
    if memo is None:
        return pod_info.cached("PodAffinityTerms", _shared_terms)
    key = (id(pod_info.spec.get("affinity")), pod_info.namespace)
    hit = memo.get(key)
    if hit is None:
        # The affinity object is kept with its terms, so that its id is not reused.
        hit = memo[key] = (pod_info.spec.get("affinity"), pod_info.cached("PodAffinityTerms", _shared_terms))
        return hit[1]
    return pod_info.cached("PodAffinityTerms", lambda _pi: hit[1])


def pod_matches_all_terms(terms, pod_info) -> bool:
    """podMatchesAllAffinityTerms: false for no terms; the terms are an
    incoming pod's, whose namespace selectors were merged into names."""
    if not terms:
        return False
    for t in terms:
        if not t.matches(pod_info, None):
            return False
    return True


# -- label signatures (snapshot.label_signature_of) ---------------------------------
def label_signature(pod_info) -> int:
    """Pods with equal namespace, labels and terminating state share one id."""
    return pod_info.signature


# NodeInfo.generation changes whenever a node's pods change, and a clone keeps
# its original's generation and content: so a generation identifies the
# content, and the per-node signature counts can be kept by generation.
_NODE_COUNTS: dict[int, dict[int, int]] = {}
_NODE_COUNTS_LIMIT = 200_000


def node_signature_counts(node_info) -> dict[int, int]:
    """{label signature: number of pods} of the pods on a node."""
    counts = _NODE_COUNTS.get(node_info.generation)
    if counts is None:
        counts = {}
        for p in node_info.pods:
            sig = p.signature
            counts[sig] = counts.get(sig, 0) + 1
        if len(_NODE_COUNTS) >= _NODE_COUNTS_LIMIT:
            _NODE_COUNTS.clear()
        _NODE_COUNTS[node_info.generation] = counts
    return counts


def cache_sizes() -> dict[str, int]:
    return {"terms": len(_TERM_CACHE), "podTerms": len(_POD_TERMS_CACHE), "nodeCounts": len(_NODE_COUNTS)}


def forget_node_counts() -> None:
    """Drop the per-generation counts: a long watch makes new generations all day."""
    _NODE_COUNTS.clear()


def clear_caches() -> None:
    """Forget every parsed term and count (a watch compacting its state)."""
    _TERM_CACHE.clear()
    _POD_TERMS_CACHE.clear()
    _NODE_COUNTS.clear()


def pods_with_signature(node_info, sig: int) -> list:
    return [p for p in node_info.pods if p.signature == sig]


class SignaturePod:
    """What a term or selector needs of a pod, for a whole signature."""

    __slots__ = ("namespace", "labels", "terminating")

    def __init__(self, sig: int):
        self.namespace, self.labels, self.terminating = SIGNATURE_INFO[sig]


def is_terminating(pod_info) -> bool:
    return pod_info.pod["metadata"].get("deletionTimestamp") is not None


# -- selector display ---------------------------------------------------------------
def selector_string(sel: Selector) -> str:
    """labels.Selector's String(): requirements sorted by key, comma-joined."""
    if sel.text is None:
        # Explanations name a selector on every node: build the text once.
        sel.text = _selector_text(sel)
    return sel.text


def _selector_text(sel: Selector) -> str:
    if sel.nothing:
        return "<none>"
    if not sel.requirements:
        return "<everything>"
    parts = []
    for r in sorted(sel.requirements, key=lambda r: r.key):
        values = ",".join(sorted(r.values))
        if r.op == "In":
            parts.append(f"{r.key}={values}" if len(r.values) == 1 else f"{r.key} in ({values})")
        elif r.op == "NotIn":
            parts.append(f"{r.key}!={values}" if len(r.values) == 1 else f"{r.key} notin ({values})")
        elif r.op == "Exists":
            parts.append(r.key)
        elif r.op == "DoesNotExist":
            parts.append(f"!{r.key}")
        else:
            parts.append(f"{r.key} {r.op.lower()} {values}")
    return ",".join(parts)


__all__ = [
    "AffinityTerm",
    "WeightedAffinityTerm",
    "PodAffinityTerms",
    "affinity_terms",
    "pod_matches_all_terms",
    "label_signature",
    "node_signature_counts",
    "pods_with_signature",
    "SignaturePod",
    "is_terminating",
    "selector_string",
    "EVERYTHING",
    "NOTHING",
    "HOSTNAME_KEY",
    "ZONE_KEY",
]
