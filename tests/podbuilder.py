"""Small builders for pods, nodes and clusters in plugin tests, in the spirit
of upstream's scheduler testing wrappers (MakePod().Label(...)...)."""

from __future__ import annotations

import copy
import itertools

from kschedx.cluster import build_cluster
from kschedx.framework.cycle_state import CycleState
from kschedx.framework.runner import Framework
from kschedx.snapshot import PodInfo, build_snapshot
from kschedx.sources.fixtures import Origin

_names = itertools.count(1)

REQUIRED = "required"
PREFERRED = "preferred"


class P:
    """A pod under construction; .obj() returns the dict."""

    def __init__(self, name: str | None = None):
        self.o = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name or f"pod-{next(_names)}", "namespace": "default", "labels": {}},
            "spec": {"containers": [{"name": "c", "image": "img"}]},
        }

    def name(self, n):
        self.o["metadata"]["name"] = n
        return self

    def namespace(self, ns):
        self.o["metadata"]["namespace"] = ns or "default"
        return self

    def uid(self, uid):
        self.o["metadata"]["uid"] = uid
        return self

    def labels(self, d):
        self.o["metadata"]["labels"].update(d)
        return self

    def label(self, k, v):
        self.o["metadata"]["labels"][k] = v
        return self

    def node(self, n):
        self.o["spec"]["nodeName"] = n
        return self

    def terminating(self):
        self.o["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
        return self

    def owner(self, kind, name, api_version="apps/v1"):
        self.o["metadata"].setdefault("ownerReferences", []).append(
            {"apiVersion": api_version, "kind": kind, "name": name, "controller": True, "uid": "x"})
        return self

    def node_selector(self, d):
        self.o["spec"]["nodeSelector"] = dict(d)
        return self

    def node_affinity_in(self, key, values):
        self.o["spec"].setdefault("affinity", {})["nodeAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}]}}
        return self

    def node_affinity_not_in(self, key, values):
        self.o["spec"].setdefault("affinity", {})["nodeAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "NotIn", "values": list(values)}]}]}}
        return self

    def toleration(self, key, effect="NoSchedule", operator="Exists", value=None):
        t = {"key": key, "operator": operator, "effect": effect}
        if value is not None:
            t["value"] = value
        self.o["spec"].setdefault("tolerations", []).append(t)
        return self

    # -- pod (anti-)affinity ------------------------------------------------------------
    def _term(self, anti, kind, selector, topology_key, weight=1, **extra):
        term = {"labelSelector": selector, "topologyKey": topology_key}
        term.update(extra)
        aff = self.o["spec"].setdefault("affinity", {})
        block = aff.setdefault("podAntiAffinity" if anti else "podAffinity", {})
        if kind == REQUIRED:
            block.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
        else:
            block.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": weight, "podAffinityTerm": term})
        return self

    def pod_affinity(self, topology_key, selector, kind=REQUIRED, weight=1, **extra):
        return self._term(False, kind, selector, topology_key, weight, **extra)

    def pod_anti_affinity(self, topology_key, selector, kind=REQUIRED, weight=1, **extra):
        return self._term(True, kind, selector, topology_key, weight, **extra)

    def pod_affinity_in(self, key, topology_key, values, kind=REQUIRED, weight=1):
        return self._term(False, kind, _expr(key, "In", values), topology_key, weight)

    def pod_affinity_not_in(self, key, topology_key, values, kind=REQUIRED, weight=1):
        return self._term(False, kind, _expr(key, "NotIn", values), topology_key, weight)

    def pod_affinity_exists(self, key, topology_key, kind=REQUIRED, weight=1):
        return self._term(False, kind, _expr(key, "Exists"), topology_key, weight)

    def pod_anti_affinity_in(self, key, topology_key, values, kind=REQUIRED, weight=1):
        return self._term(True, kind, _expr(key, "In", values), topology_key, weight)

    def pod_anti_affinity_not_in(self, key, topology_key, values, kind=REQUIRED, weight=1):
        return self._term(True, kind, _expr(key, "NotIn", values), topology_key, weight)

    def pod_anti_affinity_exists(self, key, topology_key, kind=REQUIRED, weight=1):
        return self._term(True, kind, _expr(key, "Exists"), topology_key, weight)

    # -- spread ----------------------------------------------------------------------------
    def spread(self, max_skew, topology_key, when, selector, min_domains=None, node_affinity_policy=None,
               node_taints_policy=None, match_label_keys=None):
        c = {"maxSkew": max_skew, "topologyKey": topology_key, "whenUnsatisfiable": when, "labelSelector": selector}
        if min_domains is not None:
            c["minDomains"] = min_domains
        if node_affinity_policy is not None:
            c["nodeAffinityPolicy"] = node_affinity_policy
        if node_taints_policy is not None:
            c["nodeTaintsPolicy"] = node_taints_policy
        if match_label_keys is not None:
            c["matchLabelKeys"] = list(match_label_keys)
        self.o["spec"].setdefault("topologySpreadConstraints", []).append(c)
        return self

    def obj(self):
        return copy.deepcopy(self.o)


def _expr(key, op, values=None):
    e = {"key": key, "operator": op}
    if values is not None:
        e["values"] = list(values)
    return {"matchExpressions": [e]}


def exists(*keys):
    return {"matchExpressions": [{"key": k, "operator": "Exists"} for k in keys]}


def match_labels(**kv):
    return {"matchLabels": dict(kv)}


def node(name, labels=None, taints=None, unschedulable=False):
    n = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": dict(labels or {})},
         "spec": {}, "status": {"allocatable": {"cpu": "100", "memory": "100Gi", "pods": "1000"}}}
    if taints:
        n["spec"]["taints"] = list(taints)
    if unschedulable:
        n["spec"]["unschedulable"] = True
    return n


def namespace(name, labels=None):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": dict(labels or {})}}


class Env:
    """A cluster, its snapshot and framework, and the incoming pod's PodInfo."""

    def __init__(self, pod, pods=(), nodes=(), others=(), plugin_args=None):
        objects = [(copy.deepcopy(o), Origin("test")) for o in list(others) + list(nodes) + list(pods)]
        incoming = copy.deepcopy(pod)
        incoming["spec"].pop("nodeName", None)
        objects.append((incoming, Origin("test")))
        self.cluster = build_cluster(objects)
        self.snapshot = build_snapshot(self.cluster)
        self.fw = Framework(self.snapshot, tie_break="name", plugin_args=plugin_args)
        self.pod_info = PodInfo(incoming)

    def plugin(self, name):
        return self.fw.profile.by_name[name]

    def node(self, name):
        return self.snapshot.get(name)

    def pre_filter(self, name, state=None):
        state = state or CycleState()
        _, st = self.plugin(name).pre_filter(state, self.pod_info, self.snapshot.node_infos)
        return state, st

    def filter_all(self, name):
        """PreFilter then Filter on every node: (prefilter status, {node: status})."""
        state, st = self.pre_filter(name)
        if st is not None and not st.is_success():
            return st, {}
        pl = self.plugin(name)
        return st, {ni.name: pl.filter(state, self.pod_info, ni) for ni in self.snapshot.node_infos}

    def scores(self, name, feasible=None):
        """PreScore, Score and NormalizeScore over the feasible nodes (default all)."""
        from kschedx.framework.interface import NodeScore

        pl = self.plugin(name)
        nodes = [self.snapshot.get(n) for n in feasible] if feasible is not None else self.snapshot.node_infos
        state = CycleState()
        st = pl.pre_score(state, self.pod_info, nodes)
        if st is not None and not st.is_success():
            return st, None
        scores = [NodeScore(ni.name, pl.score(state, self.pod_info, ni)) for ni in nodes]
        pl.normalize_score(state, self.pod_info, scores)
        return None, {s.name: s.score for s in scores}


def verdict(st):
    """(code label, reasons) of a Status, or None for Success."""
    if st is None or st.is_success():
        return None
    return (st.code.label, tuple(st.reasons))
