"""PodTopologySpread: the Filter cases of upstream's filtering_test.go
(TestSingleConstraint and friends) as facts about kschedx, plus scoring,
system defaults, minDomains, node inclusion policies and AddPod/RemovePod."""

from __future__ import annotations

import math

import pytest

from kschedx.plugins.podtopologyspread import filtering
from kschedx.plugins.podtopologyspread.common import default_selector
from kschedx.state.types import PodInfo
from builders import Env, P, exists
from builders import topology_node as node

# The version this module holds its plugins to: named, so that a newer
# version (the default) does not change what these tables mean.
VERSION = "1.35"

PTS = "PodTopologySpread"
DNS = "DoNotSchedule"
SA = "ScheduleAnyway"
OK = "Success"
U = "Unschedulable"
UU = "UnschedulableAndUnresolvable"


def code(st):
    return OK if st is None or st.is_success() else st.code.label


def abxy(zone_key="zone"):
    return [
        node("node-a", {zone_key: "zone1", "node": "node-a"}),
        node("node-b", {zone_key: "zone1", "node": "node-b"}),
        node("node-x", {"zone": "zone2", "node": "node-x"}),
        node("node-y", {"zone": "zone2", "node": "node-y"}),
    ]


def foo_on(*nodes_):
    return [P().node(n).label("foo", "").obj() for n in nodes_]


SPREAD_2103 = foo_on("node-a", "node-a", "node-b", "node-y", "node-y", "node-y")

SINGLE = [
    ("no existing pods", P("p").label("foo", "").spread(1, "zone", DNS, exists("foo")).obj(), abxy(), [],
     {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK}),
    ("no existing pods, incoming pod doesn't match itself",
     P("p").label("foo", "").spread(1, "zone", DNS, exists("bar")).obj(), abxy(), [],
     {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK}),
    ("existing pods in a different namespace do not count",
     P("p").label("foo", "").spread(1, "zone", DNS, exists("foo")).obj(), abxy(),
     [P("p-a1").namespace("ns1").node("node-a").label("foo", "").obj(),
      P("p-b1").namespace("ns2").node("node-a").label("foo", "").obj(),
      P("p-x1").node("node-x").label("foo", "").obj(), P("p-y1").node("node-y").label("foo", "").obj()],
     {"node-a": OK, "node-b": OK, "node-x": U, "node-y": U}),
    ("pods spread across zones as 3/3, all nodes fit",
     P("p").label("foo", "").spread(1, "zone", DNS, exists("foo")).obj(), abxy(), SPREAD_2103,
     {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK}),
    ("pods spread as 1/2 due to absence of label 'zone' on node-b",
     P("p").label("foo", "").spread(1, "zone", DNS, exists("foo")).obj(),
     [node("node-a", {"zone": "zone1", "node": "node-a"}), node("node-b", {"zon": "zone1", "node": "node-b"}),
      node("node-x", {"zone": "zone2", "node": "node-x"}), node("node-y", {"zone": "zone2", "node": "node-y"})],
     foo_on("node-a", "node-b", "node-x", "node-y"),
     {"node-a": OK, "node-b": UU, "node-x": U, "node-y": U}),
    ("no node has label 'rack'",
     P("p").label("foo", "").spread(1, "rack", DNS, exists("foo")).obj(),
     [node("node-a", {"zone": "zone1", "node": "node-a"}), node("node-x", {"zone": "zone2", "node": "node-x"})], [],
     {"node-a": UU, "node-x": UU}),
    ("pods spread across nodes as 2/1/0/3, only node-x fits",
     P("p").label("foo", "").spread(1, "node", DNS, exists("foo")).obj(), abxy(), SPREAD_2103,
     {"node-a": U, "node-b": U, "node-x": OK, "node-y": U}),
    ("2/1/0/3 with maxSkew 2: node-b and node-x fit",
     P("p").label("foo", "").spread(2, "node", DNS, exists("foo")).obj(), abxy(), SPREAD_2103,
     {"node-a": U, "node-b": OK, "node-x": OK, "node-y": U}),
    ("2/1/0/3 but the pod doesn't match itself",
     P("p").label("bar", "").spread(1, "node", DNS, exists("foo")).obj(), abxy(), SPREAD_2103,
     {"node-a": U, "node-b": OK, "node-x": OK, "node-y": U}),
    ("node affinity leaves 2/~1~/~0~/3: node-a fits",
     P("p").label("foo", "").node_affinity_in("node", ["node-a", "node-y"]).spread(1, "node", DNS, exists("foo")).obj(),
     abxy(), SPREAD_2103, {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": U}),
    ("terminating pods are excluded",
     P("p").label("foo", "").spread(1, "node", DNS, exists("foo")).obj(),
     [node("node-a", {"node": "node-a"}), node("node-b", {"node": "node-b"})],
     [P("p-a").node("node-a").label("foo", "").terminating().obj(), P("p-b").node("node-b").label("foo", "").obj()],
     {"node-a": OK, "node-b": U}),
    # TestMultipleConstraints
    ("zone and node constraints, spreads [3/3, 2/1/0/3]: node-x",
     P("p").label("foo", "").spread(1, "zone", DNS, exists("foo")).spread(1, "node", DNS, exists("foo")).obj(),
     abxy(), SPREAD_2103, {"node-a": U, "node-b": U, "node-x": OK, "node-y": U}),
    ("zone and node constraints, spreads [3/4, 2/1/0/4]: none",
     P("p").label("foo", "").spread(1, "zone", DNS, exists("foo")).spread(1, "node", DNS, exists("foo")).obj(),
     abxy(), SPREAD_2103 + foo_on("node-y"), {"node-a": U, "node-b": U, "node-x": U, "node-y": U}),
    ("constraints on different labels: zone counts foo, node counts bar",
     P("p").label("foo", "").label("bar", "").spread(1, "zone", DNS, exists("foo"))
     .spread(1, "node", DNS, exists("bar")).obj(), abxy(),
     [P("p-a1").node("node-a").label("foo", "").obj(), P("p-b1").node("node-b").label("bar", "").obj(),
      P("p-y1").node("node-y").label("foo", "").obj(), P("p-y2").node("node-y").label("bar", "").obj()],
     {"node-a": OK, "node-b": U, "node-x": OK, "node-y": U}),
]


@pytest.mark.parametrize("name,pod,nodes,pods,want", SINGLE, ids=[c[0] for c in SINGLE])
def test_filter(name, pod, nodes, pods, want):
    env = Env(pod, pods, nodes, version=VERSION)
    pre, statuses = env.filter_all(PTS)
    assert pre is None
    assert {n: code(st) for n, st in statuses.items()} == want


def test_pod_without_hard_constraints_skips_pre_filter():
    env = Env(P("p").label("foo", "").spread(1, "zone", SA, exists("foo")).obj(), [], abxy(), version=VERSION)
    pre, _ = env.filter_all(PTS)
    assert pre.is_skip()


def test_min_domains_makes_the_global_minimum_zero():
    # Two zones with 1 and 2 matching pods; minDomains 3 > 2 domains, so the
    # global minimum is 0 and a zone with 1 pod gives skew 2 > maxSkew 1.
    pod = P("p").label("foo", "").spread(1, "zone", DNS, exists("foo"), min_domains=3).obj()
    env = Env(pod, foo_on("node-a", "node-x", "node-y"), abxy(), version=VERSION)
    _, statuses = env.filter_all(PTS)
    assert {n: code(st) for n, st in statuses.items()} == {"node-a": U, "node-b": U, "node-x": U, "node-y": U}
    d = statuses["node-a"].details["constraints"][0]
    assert d["globalMinimum"] == 0 and d["belowMinDomains"] is True and d["skew"] == 2
    pod = P("p").label("foo", "").spread(1, "zone", DNS, exists("foo"), min_domains=2).obj()
    env = Env(pod, foo_on("node-a", "node-x", "node-y"), abxy(), version=VERSION)
    _, statuses = env.filter_all(PTS)
    assert {n: code(st) for n, st in statuses.items()} == {"node-a": OK, "node-b": OK, "node-x": U, "node-y": U}


def test_node_taints_policy_honor_excludes_tainted_domains():
    taint = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}
    nodes = [node("node-a", {"zone": "zone1"}), node("node-x", {"zone": "zone2"}, taints=[taint])]
    pods = foo_on("node-a")
    ignore = Env(P("p").label("foo", "").spread(1, "zone", DNS, exists("foo")).obj(), pods, nodes, version=VERSION)
    _, st = ignore.filter_all(PTS)
    # zone2 counts (0 pods): zone1 would be skew 2.
    assert code(st["node-a"]) == U
    honor = Env(P("p").label("foo", "").spread(1, "zone", DNS, exists("foo"), node_taints_policy="Honor").obj(),
                pods, nodes, version=VERSION)
    _, st = honor.filter_all(PTS)
    # zone2 is not a domain: only zone1 counts, minimum 1, skew 1.
    assert code(st["node-a"]) == OK
    d = st["node-x"].details["constraints"][0]
    assert d["domainEligible"] is False and d["domainCounts"] == {"zone1": 1}


def test_node_affinity_policy_ignore_counts_all_domains():
    pod = P("p").label("foo", "").node_affinity_in("zone", ["zone1"]).spread(
        1, "zone", DNS, exists("foo"), node_affinity_policy="Ignore").obj()
    env = Env(pod, foo_on("node-a"), abxy(), version=VERSION)
    _, st = env.filter_all(PTS)
    assert code(st["node-a"]) == U  # zone2 (0 pods) is a domain despite the node affinity
    pod = P("p").label("foo", "").node_affinity_in("zone", ["zone1"]).spread(1, "zone", DNS, exists("foo")).obj()
    env = Env(pod, foo_on("node-a"), abxy(), version=VERSION)
    _, st = env.filter_all(PTS)
    assert code(st["node-a"]) == OK


def test_match_label_keys_narrow_the_selector():
    pod = P("p").labels({"app": "web", "rev": "2"}).spread(
        1, "zone", DNS, {"matchLabels": {"app": "web"}}, match_label_keys=["rev"]).obj()
    pods = [P("old-1").labels({"app": "web", "rev": "1"}).node("node-x").obj(),
            P("old-2").labels({"app": "web", "rev": "1"}).node("node-y").obj()]
    env = Env(pod, pods, abxy(), version=VERSION)
    _, st = env.filter_all(PTS)
    # Old-revision pods do not count: every zone has 0 matching pods.
    assert all(code(s) == OK for s in st.values())


def test_empty_selector_counts_nothing_but_matches_self():
    # An empty labelSelector selects everything, but upstream's counting
    # shortcut counts no pod for it, while the pod still matches itself.
    pod = P("p").label("foo", "").spread(1, "node", DNS, {}).obj()
    env = Env(pod, foo_on("node-a", "node-a", "node-a"), abxy(), version=VERSION)
    _, st = env.filter_all(PTS)
    assert all(code(s) == OK for s in st.values())
    assert st["node-a"].details["constraints"][0]["matchingPods"] == 0


def test_add_remove_pod_updates_counts_and_critical_paths():
    pod = P("p").label("foo", "").spread(1, "node", DNS, exists("foo")).obj()
    env = Env(pod, foo_on("node-a", "node-b"), abxy(), version=VERSION)
    state, st = env.pre_filter(PTS)
    s = state.read(filtering.PRE_FILTER_STATE_KEY)
    assert s.tp_value_to_match_num[0] == {"node-a": 1, "node-b": 1, "node-x": 0, "node-y": 0}
    assert s.critical_paths[0].paths[0][1] == 0
    clone = state.clone()
    ext = env.plugin(PTS).pre_filter_extensions()
    for i, n in enumerate(("node-x", "node-y")):
        added = P(f"added-{i}").label("foo", "").node(n).uid(f"uid-added-{i}").obj()
        ext.add_pod(clone, env.pod_info, PodInfo(added), env.node(n))
    c = clone.read(filtering.PRE_FILTER_STATE_KEY)
    assert c.tp_value_to_match_num[0] == {"node-a": 1, "node-b": 1, "node-x": 1, "node-y": 1}
    assert c.critical_paths[0].paths[0][1] == 1
    # The original is untouched.
    assert s.tp_value_to_match_num[0]["node-x"] == 0 and s.critical_paths[0].paths[0][1] == 0
    # A pod of another namespace changes nothing.
    other = P("other").namespace("ns2").label("foo", "").node("node-a").uid("uid-other").obj()
    ext.add_pod(clone, env.pod_info, PodInfo(other), env.node("node-a"))
    assert c.tp_value_to_match_num[0]["node-a"] == 1


# -- scoring -------------------------------------------------------------------------------------
def test_score_single_zone_constraint():
    # zone1 has 3 matching pods, zone2 has 1: raw = cnt*log(2+2) + (maxSkew-1).
    pod = P("p").label("foo", "").spread(1, "zone", SA, exists("foo")).obj()
    env = Env(pod, foo_on("node-a", "node-a", "node-b", "node-x"), abxy(), version=VERSION)
    st, scores = env.scores(PTS)
    assert st is None
    w = math.log(4)
    raw_a = round(3 * w)  # 4.16 -> 4
    raw_x = round(1 * w)  # 1.39 -> 1
    assert (raw_a, raw_x) == (4, 1)
    # NormalizeScore: 100 * (max + min - s) / max
    assert scores == {"node-a": 100 * (4 + 1 - 4) // 4, "node-b": 25, "node-x": 100, "node-y": 100}


def test_score_hostname_constraint_counts_per_node():
    pod = P("p").label("foo", "").spread(2, "kubernetes.io/hostname", SA, exists("foo")).obj()
    nodes = [node(n, {"kubernetes.io/hostname": n}) for n in ("n1", "n2", "n3")]
    env = Env(pod, [P(f"q{i}").node("n1").label("foo", "").obj() for i in range(3)] +
              [P("r").node("n2").label("foo", "").obj()], nodes, version=VERSION)
    st, scores = env.scores(PTS)
    w = math.log(3 + 2)
    raws = {"n1": int(math.floor(3 * w + 1 + 0.5)), "n2": int(math.floor(w + 1 + 0.5)), "n3": 1}
    mx, mn = max(raws.values()), min(raws.values())
    assert scores == {n: 100 * (mx + mn - r) // mx for n, r in raws.items()}


def test_score_nodes_missing_a_key_are_ignored_with_own_constraints():
    pod = P("p").label("foo", "").spread(1, "zone", SA, exists("foo")).obj()
    nodes = [node("node-a", {"zone": "zone1"}), node("node-b", {})]
    env = Env(pod, foo_on("node-a"), nodes, version=VERSION)
    _, scores = env.scores(PTS)
    assert scores == {"node-a": 100, "node-b": 0}


def test_system_default_constraints_use_owner_selectors():
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web-rs", "namespace": "default"},
          "spec": {"selector": {"matchLabels": {"app": "web"}}}}
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"selector": {"tier": "front"}}}
    labels = {"app": "web", "tier": "front"}
    pod = P("p").labels(labels).owner("ReplicaSet", "web-rs").obj()
    nodes = [node("n1", {"kubernetes.io/hostname": "n1", "topology.kubernetes.io/zone": "z1"}),
             node("n2", {"kubernetes.io/hostname": "n2", "topology.kubernetes.io/zone": "z2"}),
             node("n3", {"kubernetes.io/hostname": "n3"})]
    pods = [P("w1").labels(labels).node("n1").obj(), P("w2").labels(labels).node("n1").obj(),
            P("other").labels({"app": "web"}).node("n2").obj()]
    env = Env(pod, pods, nodes, others=[rs, svc], version=VERSION)
    sel = default_selector(env.pod_info, env.cluster)
    assert sel.matches(labels) and not sel.matches({"app": "web"})
    pre, _ = env.filter_all(PTS)
    assert pre.is_skip()  # system defaults are ScheduleAnyway only
    st, scores = env.scores(PTS)
    assert st is None
    # hostname: 2 / 0 / 0 pods, 3 nodes -> log(5); zone: z1 2, z2 0, "" (n3) 0 -> 3 domains, log(5).
    w = math.log(5)
    raw = {"n1": int(math.floor(2 * w + 2 + 2 * w + 4 + 0.5)), "n2": 2 + 4, "n3": 2}
    mx, mn = max(raw.values()), min(raw.values())
    assert scores == {n: 100 * (mx + mn - r) // mx for n, r in raw.items()}


def test_pod_without_selecting_objects_skips_scoring():
    env = Env(P("p").label("app", "x").obj(), [], abxy(), version=VERSION)
    st, _ = env.scores(PTS)
    assert st.is_skip()


# -- PodTopologySpreadArgs: defaultingType List and defaultConstraints (TestPreFilterState) --------
def service(selector):
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": "default"},
            "spec": {"selector": selector}}


def list_args(*constraints):
    return {PTS: {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": s, "topologyKey": k, "whenUnsatisfiable": w} for s, k, w in constraints]}}


@pytest.mark.parametrize("name, pod, defaults, selector, want", [
    # The DoNotSchedule defaults, each with the Service's selector; no nodes, no domains.
    ("default constraints and a service", P("p").label("foo", "bar").label("baz", "kar").obj(),
     [(3, "node", DNS), (2, "node", SA), (5, "rack", DNS)], {"foo": "bar"}, [(3, "node"), (5, "rack")]),
    ("default constraints and a service that doesn't match", P("p").label("foo", "bar").obj(),
     [(3, "node", DNS)], {"baz": "kep"}, "Skip"),
    # The pod's own constraints replace the defaults; only its hard one filters.
    ("default constraints and a service, but pod has constraints",
     P("p").label("foo", "bar").label("baz", "tar").spread(1, "zone", DNS, {"matchLabels": {"baz": "tar"}})
     .spread(2, "planet", SA, {"matchLabels": {"fot": "rok"}}).obj(),
     [(2, "node", DNS)], {"foo": "bar"}, [(1, "zone")]),
    ("default soft constraints and a service", P("p").label("foo", "bar").obj(), [(2, "node", SA)],
     {"foo": "bar"}, "Skip"),
])
def test_pre_filter_state_with_default_constraints(name, pod, defaults, selector, want):
    env = Env(pod, [], [], others=[service(selector)], plugin_args=list_args(*defaults), version=VERSION)
    state, st = env.pre_filter(PTS)
    if want == "Skip":
        assert st.is_skip()
        return
    assert st is None
    s = state.read(filtering.PRE_FILTER_STATE_KEY)
    assert [(c.max_skew, c.topology_key) for c in s.constraints] == want
    if name == "default constraints and a service":
        sel = s.constraints[0].selector
        assert sel.matches({"foo": "bar"}) and not sel.matches({"baz": "kar"})


def test_list_defaults_filter_and_score_with_the_service_selector():
    # node-a: 2 app=web pods, node-b: 1, node-x and node-y: none (zone1 3, zone2 0).
    pods = [P("w1").label("app", "web").node("node-a").obj(), P("w2").label("app", "web").node("node-a").obj(),
            P("w3").label("app", "web").node("node-b").obj()]
    pod = P("p").label("app", "web").obj()
    # zone maxSkew 1 DoNotSchedule: zone1 3 + 1 - 0 = 4 > 1 -> Unschedulable; zone2 1 - 0 = 1 -> fits.
    env = Env(pod, pods, abxy(), others=[service({"app": "web"})], plugin_args=list_args((1, "zone", DNS)), version=VERSION)
    _, statuses = env.filter_all(PTS)
    assert {n: code(st) for n, st in statuses.items()} == {"node-a": U, "node-b": U, "node-x": OK, "node-y": OK}
    # node maxSkew 1 ScheduleAnyway: 4 node domains, weight log(6); score = round(count * log 6):
    # node-a round(2 * 1.79) = 4, node-b round(1.79) = 2, node-x/y 0. Normalized 100 * (4 - s) / 4.
    env = Env(pod, pods, abxy(), others=[service({"app": "web"})], plugin_args=list_args((1, "node", SA)), version=VERSION)
    st, scores = env.scores(PTS)
    assert st is None
    assert scores == {"node-a": 0, "node-b": 50, "node-x": 100, "node-y": 100}
