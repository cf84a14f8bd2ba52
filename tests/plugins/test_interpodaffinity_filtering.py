"""InterPodAffinity PreFilter/Filter: the cases of upstream's filtering_test.go
(TestRequiredAffinitySingleNode, TestRequiredAffinityMultipleNodes,
TestPreFilterStateAddRemovePod), as facts about kschedx."""

from __future__ import annotations

import pytest

from kschedx.state import cache
from kschedx.framework.cycle_state import CycleState
from kschedx.framework.status import DeferredStatus
from kschedx.state.types import PodInfo
from kschedx.plugins.interpodaffinity import filtering
from builders import Env, P, admitted, label_selector, namespace, requirement
from builders import affinity_term as term
from builders import rejection as verdict
from builders import topology_node as node

# The version this module holds its plugins to: named, so that a newer
# version (the default) does not change what these tables mean.
VERSION = "1.35"

IPA = "InterPodAffinity"
AFF = ("UnschedulableAndUnresolvable", ("node(s) didn't match pod affinity rules",))
ANTI = ("Unschedulable", ("node(s) didn't match pod anti-affinity rules",))
EXISTING = ("Unschedulable", ("node(s) didn't satisfy existing pods anti-affinity rules",))
SKIP = "Skip"

POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
NODE1 = node("node1", {"region": "r1", "zone": "z11"})
NAMESPACES = [
    namespace("subteam1.team1", {"team": "team1"}),
    namespace("subteam2.team1", {"team": "team1"}),
    namespace("subteam1.team2", {"team": "team2"}),
]


def existing():
    return P().labels(POD_LABEL).node("node1")


def in_(key, *values):
    return label_selector(requirement(key, "In", *values))


def with_terms(p: P, affinity=(), anti=()):
    aff = p.o["spec"].setdefault("affinity", {})
    if affinity:
        aff.setdefault("podAffinity", {})["requiredDuringSchedulingIgnoredDuringExecution"] = list(affinity)
    if anti:
        aff.setdefault("podAntiAffinity", {})["requiredDuringSchedulingIgnoredDuringExecution"] = list(anti)
    return p


SINGLE_NODE = [
    ("no required rules, no existing pods", P().obj(), [], SKIP, None),
    ("affinity In matches the existing pod",
     P().labels(POD_LABEL2).pod_affinity_in("service", "region", ["securityscan", "value2"]).obj(),
     [existing().obj()], None, None),
    ("affinity NotIn matches the existing pod",
     P().labels(POD_LABEL2).pod_affinity_not_in("service", "region", ["securityscan3", "value3"]).obj(),
     [existing().obj()], None, None),
    # Upstream's table leaves topologyKey empty in the next two terms; the API
    # server refuses such a pod (kschedx too), and the verdict does not depend on it.
    ("affinity does not match because of a different namespace",
     with_terms(P().labels(POD_LABEL2), affinity=[term(in_("service", "securityscan", "value2"), "region",
                                                       namespaces=["DiffNameSpace"])]).obj(),
     [P().namespace("ns").label("service", "securityscan").node("node1").obj()], None, AFF),
    ("affinity selector does not match the existing pod",
     P().labels(POD_LABEL).pod_affinity_in("service", "region", ["antivirusscan", "value2"]).obj(),
     [existing().obj()], None, AFF),
    ("different operators in several terms all match",
     with_terms(P().labels(POD_LABEL2), affinity=[
         term({"matchExpressions": [{"key": "service", "operator": "Exists"},
                                    {"key": "wrongkey", "operator": "DoesNotExist"}]}, "region"),
         term({"matchExpressions": [{"key": "service", "operator": "In", "values": ["securityscan"]},
                                    {"key": "service", "operator": "NotIn", "values": ["WrongValue"]}]}, "region"),
     ]).obj(),
     [existing().obj()], None, None),
    ("requirements of a selector are ANDed",
     with_terms(P().labels(POD_LABEL2), affinity=[
         term({"matchExpressions": [{"key": "service", "operator": "Exists"},
                                    {"key": "wrongkey", "operator": "DoesNotExist"}]}, "region"),
         term({"matchExpressions": [{"key": "service", "operator": "In", "values": ["securityscan2"]},
                                    {"key": "service", "operator": "NotIn", "values": ["WrongValue"]}]}, "region"),
     ]).obj(),
     [existing().obj()], None, AFF),
    ("affinity and anti-affinity both satisfied",
     P().labels(POD_LABEL2).pod_affinity_in("service", "region", ["securityscan", "value2"])
     .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"]).obj(),
     [existing().obj()], None, None),
    ("affinity, anti-affinity and anti-affinity symmetry satisfied",
     P().labels(POD_LABEL2).pod_affinity_in("service", "region", ["securityscan", "value2"])
     .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"]).obj(),
     [existing().pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"]).obj()], None, None),
    ("affinity satisfied, anti-affinity not",
     P().labels(POD_LABEL2).pod_affinity_in("service", "region", ["securityscan", "value2"])
     .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"]).obj(),
     [existing().obj()], None, ANTI),
    ("existing pod's anti-affinity (symmetry) not satisfied",
     P().labels(POD_LABEL).pod_affinity_in("service", "region", ["securityscan", "value2"])
     .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"]).obj(),
     [existing().pod_anti_affinity_in("service", "zone", ["securityscan", "value2"]).obj()], None, EXISTING),
    ("pod matches its own affinity but an existing pod matches too (on another node)",
     P().labels(POD_LABEL).pod_affinity_not_in("service", "region", ["securityscan", "value2"]).obj(),
     [P().label("service", "securityscan").node("node2").obj()], None, AFF),
    ("existing pod's anti-affinity applies to a pod without anti-affinity",
     P().labels(POD_LABEL).obj(),
     [existing().pod_anti_affinity_in("service", "zone", ["securityscan", "value2"]).obj()], None, EXISTING),
    ("existing pod's anti-affinity does not match: PreFilter skips",
     P().labels(POD_LABEL).obj(),
     [existing().pod_anti_affinity_not_in("service", "zone", ["securityscan", "value2"]).obj()], SKIP, None),
    ("incoming anti-affinity matches an existing pod (any term)",
     P().labels(POD_LABEL).pod_anti_affinity_exists("service", "region").pod_anti_affinity_exists("security", "region")
     .obj(),
     [P().node("node1").labels(POD_LABEL2).pod_anti_affinity_exists("security", "zone").obj()], None, ANTI),
    ("symmetry a1",
     P().labels(POD_LABEL).pod_anti_affinity_exists("service", "zone").pod_anti_affinity_exists("security", "zone")
     .obj(),
     [P().node("node1").labels(POD_LABEL2).pod_anti_affinity_exists("security", "zone").obj()], None, ANTI),
    ("symmetry a2",
     P().labels(POD_LABEL2).pod_anti_affinity_exists("security", "zone").obj(),
     [P().node("node1").labels(POD_LABEL).pod_anti_affinity_exists("service", "zone")
      .pod_anti_affinity_exists("security", "zone").obj()], None, EXISTING),
    ("symmetry b1",
     P().labels({"abc": "", "xyz": ""}).pod_anti_affinity_exists("abc", "zone").pod_anti_affinity_exists("def", "zone")
     .obj(),
     [P().node("node1").labels({"def": "", "xyz": ""}).pod_anti_affinity_exists("abc", "zone")
      .pod_anti_affinity_exists("def", "zone").obj()], None, ANTI),
    ("symmetry b2",
     P().labels({"def": "", "xyz": ""}).pod_anti_affinity_exists("abc", "zone").pod_anti_affinity_exists("def", "zone")
     .obj(),
     [P().node("node1").labels({"abc": "", "xyz": ""}).pod_anti_affinity_exists("abc", "zone")
      .pod_anti_affinity_exists("def", "zone").obj()], None, ANTI),
    ("affinity with a matching namespaceSelector",
     with_terms(P().labels(POD_LABEL2), affinity=[term(in_("service", "securityscan", "value2"), "region",
                                                       namespaceSelector=in_("team", "team1"))]).obj(),
     [P().namespace("subteam1.team1").labels(POD_LABEL).node("node1").obj()], None, None),
    ("affinity with a non-matching namespaceSelector",
     with_terms(P().labels(POD_LABEL2), affinity=[term(in_("service", "securityscan", "value2"), "region",
                                                       namespaceSelector=in_("team", "team1"))]).obj(),
     [P().namespace("subteam1.team2").labels(POD_LABEL).node("node1").obj()], None, AFF),
    ("anti-affinity with a matching namespaceSelector",
     with_terms(P().namespace("subteam1.team1").labels(POD_LABEL2),
                anti=[term(in_("service", "securityscan", "value2"), "zone",
                           namespaceSelector=in_("team", "team1"))]).obj(),
     [P().namespace("subteam2.team1").labels(POD_LABEL).node("node1").obj()], None, ANTI),
    ("anti-affinity with an empty (match all) namespaceSelector",
     with_terms(P().namespace("subteam1.team1").labels(POD_LABEL2),
                anti=[term(in_("service", "securityscan", "value2"), "zone", namespaceSelector={})]).obj(),
     [P().namespace("subteam2.team1").labels(POD_LABEL).node("node1").obj()], None, ANTI),
    ("anti-affinity with a non-matching namespaceSelector",
     with_terms(P().namespace("subteam1.team1").labels(POD_LABEL2),
                anti=[term(in_("service", "securityscan", "value2"), "zone",
                           namespaceSelector=in_("team", "team1"))]).obj(),
     [P().namespace("subteam1.team2").labels(POD_LABEL).node("node1").obj()], None, None),
]


@pytest.mark.parametrize("name,pod,pods,want_pre,want", SINGLE_NODE, ids=[c[0] for c in SINGLE_NODE])
def test_required_affinity_single_node(name, pod, pods, want_pre, want):
    env = Env(pod, pods, [NODE1], NAMESPACES, version=VERSION)
    pre, statuses = env.filter_all(IPA)
    if want_pre == SKIP:
        assert pre is not None and pre.is_skip()
        return
    assert pre is None
    assert verdict(statuses["node1"]) == want


def test_invalid_label_value_fails_pre_filter():
    pod = P().labels(POD_LABEL).pod_affinity_in("service", "region", ["{{.bad-value.}}"]) \
        .pod_affinity_in("service", "node", ["antivirusscan", "value2"]).obj()
    env = Env(pod, [], [NODE1], version=VERSION)
    pre, _ = env.filter_all(IPA)
    assert pre.code.label == "UnschedulableAndUnresolvable"
    assert pre.reasons[0].startswith("parsing pod: requiredAffinityTerms: ")


RG_CHINA = {"region": "China"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
RG_INDIA = {"region": "India"}


def abc_nodes(*zones):
    return [node(f"node{chr(65 + i)}", {"region": "r1", "zone": z, "hostname": f"node{chr(65 + i)}"})
            for i, z in enumerate(zones)]


MULTI_NODE = [
    ("all nodes of the domain with a matching pod",
     P().pod_affinity_in("foo", "region", ["bar"]).obj(),
     [P("p1").node("node1").labels({"foo": "bar"}).obj()],
     [node("node1", RG_CHINA), node("node2", RG_CHINA_AZ1), node("node3", RG_INDIA)],
     None, [None, None, AFF]),
    ("first pod of a collection is not blocked",
     P().labels({"foo": "bar", "service": "securityscan"}).pod_affinity_in("foo", "zone", ["bar"])
     .pod_affinity_in("service", "zone", ["securityscan"]).obj(),
     [P("p1").node("nodeA").labels({"foo": "bar"}).obj()],
     [node("nodeA", {"zone": "az1", "hostname": "h1"}), node("nodeB", {"zone": "az2", "hostname": "h2"})],
     None, [None, None]),
    ("first pod of a collection needs the topology keys",
     P().labels({"foo": "bar", "service": "securityscan"}).pod_affinity_in("foo", "zone", ["bar"])
     .pod_affinity_in("service", "zone", ["securityscan"]).obj(),
     [P("p1").node("nodeA").labels({"foo": "bar"}).obj()],
     [node("nodeA", {"zoneLabel": "az1", "hostname": "h1"}), node("nodeB", {"zoneLabel": "az2", "hostname": "h2"})],
     None, [AFF, AFF]),
    ("anti-affinity covers the whole domain",
     P().pod_anti_affinity_in("foo", "region", ["abc"]).obj(),
     [P().node("nodeA").labels({"foo": "abc"}).obj()],
     [node("nodeA", {"region": "r1", "hostname": "nodeA"}), node("nodeB", {"region": "r1", "hostname": "nodeB"})],
     None, [ANTI, ANTI]),
    ("anti-affinity: any term matching is enough",
     P().pod_anti_affinity_in("foo", "region", ["abc"]).pod_anti_affinity_in("service", "zone", ["securityscan"]).obj(),
     [P().node("nodeA").labels({"foo": "abc", "service": "securityscan"}).obj()],
     [node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}),
      node("nodeB", {"region": "r1", "zone": "z2", "hostname": "nodeB"})],
     None, [ANTI, ANTI]),
    ("anti-affinity: a node of another region fits",
     P().pod_anti_affinity_in("foo", "region", ["abc"]).obj(),
     [P().node("nodeA").labels({"foo": "abc"}).obj()],
     [node("nodeA", RG_CHINA), node("nodeB", RG_CHINA_AZ1), node("nodeC", RG_INDIA)],
     None, [ANTI, ANTI, None]),
    ("anti-affinity: pod of another namespace does not count",
     P().namespace("NS1").labels({"foo": "123"}).pod_anti_affinity_in("foo", "region", ["bar"]).obj(),
     [P().node("nodeA").namespace("NS1").labels({"foo": "bar"}).obj(),
      P().node("nodeC").namespace("NS2").pod_anti_affinity_in("foo", "region", ["123"]).obj()],
     [node("nodeA", RG_CHINA), node("nodeB", RG_CHINA_AZ1), node("nodeC", RG_INDIA)],
     None, [ANTI, ANTI, None]),
    ("existing anti-affinity with a topology key no node has: Skip",
     P().label("foo", "").obj(),
     [P().node("nodeA").pod_anti_affinity_exists("foo", "invalid-node-label").obj()],
     abc_nodes("z1", "z1"), SKIP, None),
    ("incoming anti-affinity: the topology key must be on the node",
     P().pod_anti_affinity_exists("foo", "invalid-node-label").obj(),
     [P().node("nodeA").labels({"foo": ""}).obj()],
     abc_nodes("z1", "z1"), None, [None, None]),
    ("existing pods' anti-affinity on every node",
     P().label("foo", "").label("bar", "").obj(),
     [P().node("nodeA").pod_anti_affinity_exists("foo", "zone").obj(),
      P().node("nodeA").pod_anti_affinity_exists("bar", "region").obj()],
     abc_nodes("z1", "z2"), None, [EXISTING, EXISTING]),
    ("incoming anti-affinity violated by some term on each node",
     P().pod_anti_affinity_exists("foo", "zone").pod_anti_affinity_exists("bar", "region").obj(),
     [P().node("nodeA").labels({"foo": ""}).obj(), P().node("nodeB").labels({"bar": ""}).obj()],
     abc_nodes("z1", "z2"), None, [ANTI, ANTI]),
    ("existing anti-affinity: a term with an unknown topology key does not count",
     P().label("foo", "").label("bar", "").obj(),
     [P().node("nodeA").pod_anti_affinity_exists("foo", "invalid-node-label").pod_anti_affinity_exists("bar", "zone")
      .obj()],
     abc_nodes("z1", "z2"), None, [EXISTING, None]),
    ("incoming anti-affinity: a term with an unknown topology key does not count",
     P().pod_anti_affinity_exists("foo", "invalid-node-label").pod_anti_affinity_exists("bar", "zone").obj(),
     [P("podA").node("nodeA").labels({"foo": "", "bar": ""}).obj()],
     abc_nodes("z1", "z2"), None, [ANTI, None]),
    ("existing anti-affinity: all terms with valid keys",
     P().label("foo", "").label("bar", "").obj(),
     [P().node("nodeA").pod_anti_affinity_exists("foo", "region").pod_anti_affinity_exists("bar", "zone").obj()],
     abc_nodes("z1", "z2"), None, [EXISTING, EXISTING]),
    ("incoming anti-affinity: all terms with valid keys",
     P().pod_anti_affinity_exists("foo", "region").pod_anti_affinity_exists("bar", "zone").obj(),
     [P().node("nodeA").labels({"foo": "", "bar": ""}).obj()],
     abc_nodes("z1", "z2"), None, [ANTI, ANTI]),
    ("existing pods on A and B each have a matching term: only C fits",
     P().label("foo", "").label("bar", "").obj(),
     [P().node("nodeA").pod_anti_affinity_exists("foo", "zone").pod_anti_affinity_exists("labelA", "zone").obj(),
      P().node("nodeB").pod_anti_affinity_exists("bar", "zone").pod_anti_affinity_exists("labelB", "zone").obj()],
     abc_nodes("z1", "z2", "z3"), None, [EXISTING, EXISTING, None]),
    ("incoming affinity: all terms matched by one pod",
     P().pod_affinity_exists("foo", "region").pod_affinity_exists("bar", "zone").obj(),
     [P("pod1").labels({"foo": "", "bar": ""}).node("nodeA").obj()],
     abc_nodes("z1", "z1"), None, [None, None]),
    ("incoming affinity: the terms must be matched by the same pod",
     P().pod_affinity_exists("foo", "region").pod_affinity_exists("bar", "zone").obj(),
     [P("pod1").node("nodeA").labels({"foo": ""}).obj(), P("pod2").node("nodeB").labels({"bar": ""}).obj()],
     abc_nodes("z1", "z2"), None, [AFF, AFF]),
]


@pytest.mark.parametrize("name,pod,pods,nodes,want_pre,want", MULTI_NODE, ids=[c[0] for c in MULTI_NODE])
def test_required_affinity_multiple_nodes(name, pod, pods, nodes, want_pre, want):
    env = Env(pod, pods, nodes, [namespace("NS1")], version=VERSION)
    pre, statuses = env.filter_all(IPA)
    if want_pre == SKIP:
        assert pre is not None and pre.is_skip()
        return
    assert pre is None
    assert [verdict(statuses[n["metadata"]["name"]]) for n in nodes] == want


def test_filter_without_pre_filter_is_an_error():
    # An Error Status (not a raised error), so that the framework prefixes
    # it with the plugin's name as kube-scheduler does.
    env = Env(P().obj(), [], [NODE1], version=VERSION)
    want = 'error reading "PreFilterInterPodAffinity" from cycleState: not found'
    st = env.plugin(IPA).filter(CycleState(), env.pod_info, env.node("node1"))
    assert st.code.label == "Error" and st.message() == want
    [st] = env.plugin(IPA).filter_all(CycleState(), env.pod_info, [env.node("node1")])
    assert st.code.label == "Error" and st.message() == want


# -- AddPod / RemovePod (TestPreFilterStateAddRemovePod) -------------------------------------
LABEL1 = {"region": "r1", "zone": "z11"}
LABEL2 = {"region": "r1", "zone": "z12"}
LABEL3 = {"region": "r2", "zone": "z21"}
ANTI_FOO_BAR = [term(in_("foo", "bar"), "region")]
COMPLEX = [term(in_("foo", "bar", "buzz"), "region"),
           term({"matchExpressions": [{"key": "service", "operator": "NotIn", "values": ["bar", "security", "test"]}]},
                "zone")]


def _add_remove(pending, existing_pods, added, want_anti, want_existing, want_aff):
    nodes = [node("nodeA", LABEL1), node("nodeB", LABEL2), node("nodeC", LABEL3)]
    env = Env(pending, existing_pods, nodes, version=VERSION)
    state, st = env.pre_filter(IPA)
    assert st is None
    before = state.read(filtering.PRE_FILTER_STATE_KEY)
    snapshot_anti = dict(before.anti_affinity_counts), dict(before.existing_anti_affinity_counts)
    snapshot_aff = dict(before.affinity_counts)
    from kschedx.state.types import PodInfo

    added["metadata"].setdefault("uid", "uid-added")
    added_pi = PodInfo(added)
    target = env.node(added["spec"]["nodeName"])
    clone = state.clone()
    ext = env.plugin(IPA).pre_filter_extensions()
    ext.add_pod(clone, env.pod_info, added_pi, target)
    s = clone.read(filtering.PRE_FILTER_STATE_KEY)
    assert s.anti_affinity_counts == want_anti
    assert s.existing_anti_affinity_counts == want_existing
    assert s.affinity_counts == want_aff
    # The original state is untouched by AddPod on the clone.
    assert (dict(before.anti_affinity_counts), dict(before.existing_anti_affinity_counts)) == snapshot_anti
    assert before.affinity_counts == snapshot_aff
    ext.remove_pod(clone, env.pod_info, added_pi, target)
    assert s.anti_affinity_counts == snapshot_anti[0]
    assert s.existing_anti_affinity_counts == snapshot_anti[1]
    assert s.affinity_counts == snapshot_aff


def test_add_remove_pod_anti_affinity():
    _add_remove(
        with_terms(P("pending").labels({"foo": "bar"}), anti=ANTI_FOO_BAR).obj(),
        [P("p1").labels({"foo": "bar"}).node("nodeA").obj(), with_terms(P("p2").node("nodeC"), anti=ANTI_FOO_BAR).obj()],
        with_terms(P("addedPod").labels({"foo": "bar"}).node("nodeB"), anti=ANTI_FOO_BAR).obj(),
        {("region", "r1"): 2},
        {("region", "r2"): 1, ("region", "r1"): 1},
        {},
    )


def test_add_remove_pod_complex_anti_affinity():
    _add_remove(
        with_terms(P("pending").labels({"foo": "bar"}), anti=COMPLEX).obj(),
        [P("p1").labels({"foo": "bar"}).node("nodeA").obj(), with_terms(P("p2").node("nodeC"), anti=ANTI_FOO_BAR).obj()],
        with_terms(P("addedPod").labels({"foo": "bar"}).node("nodeA"), anti=COMPLEX).obj(),
        {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1},
        {("region", "r2"): 1, ("region", "r1"): 1, ("zone", "z11"): 1},
        {},
    )


def test_add_remove_pod_affinity_and_anti_affinity():
    _add_remove(
        with_terms(P("pending").labels({"foo": "bar"}), affinity=COMPLEX, anti=ANTI_FOO_BAR).obj(),
        [P("p1").labels({"foo": "bar"}).node("nodeA").obj()],
        with_terms(P("addedPod").labels({"foo": "bar"}).node("nodeA"), anti=ANTI_FOO_BAR).obj(),
        {("region", "r1"): 2},
        {("region", "r1"): 1},
        {("region", "r1"): 2, ("zone", "z11"): 2},
    )


# -- explanations --------------------------------------------------------------------------------
def test_anti_affinity_details_name_the_pods():
    pod = P().pod_anti_affinity_in("app", "zone", ["web"]).obj()
    pods = [P("web-1").label("app", "web").node("nodeA").obj()]
    env = Env(pod, pods, abc_nodes("z1", "z1", "z2"), version=VERSION)
    _, statuses = env.filter_all(IPA)
    d = statuses["nodeB"].details
    t = d["requiredAntiAffinityTerms"][0]
    assert t["nodeValue"] == "z1" and t["matchingPods"] == 1
    assert t["pods"] == [{"pod": "default/web-1", "node": "nodeA", "topologyValue": "z1"}]
    assert statuses["nodeC"] is None


def test_existing_anti_affinity_details_name_the_pods():
    pod = P().label("app", "web").obj()
    pods = [P("db-0").node("nodeA").pod_anti_affinity_in("app", "hostname", ["web"]).obj()]
    env = Env(pod, pods, abc_nodes("z1", "z1"), version=VERSION)
    _, statuses = env.filter_all(IPA)
    d = statuses["nodeA"].details
    assert d["existingPods"] == [{"pod": "default/db-0", "node": "nodeA", "topologyValue": "nodeA",
                                  "topologyKey": "hostname"}]
    assert statuses["nodeB"] is None


def test_affinity_first_of_group_is_explained():
    pod = P().label("app", "web").pod_affinity_in("app", "zone", ["web"]).obj()
    env = Env(pod, [], abc_nodes("z1"), version=VERSION)
    _, statuses = env.filter_all(IPA)
    st = statuses["nodeA"]
    assert st.is_success() and st.details["firstOfGroup"] is True


def test_match_label_keys_are_merged_at_admission():
    # Hand-written pods get what the API server appends at creation.
    pod = P().label("app", "web").label("rev", "2").obj()
    pod["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "hostname", "matchLabelKeys": ["rev"]}]}}
    pods = [P("old").labels({"app": "web", "rev": "1"}).node("nodeA").obj(),
            P("new").labels({"app": "web", "rev": "2"}).node("nodeB").obj()]
    env = Env(pod, pods, abc_nodes("z1", "z1", "z1"), version=VERSION)
    _, statuses = env.filter_all(IPA)
    assert [verdict(statuses[n]) for n in ("nodeA", "nodeB", "nodeC")] == [None, ANTI, None]
    exprs = env.pod_info.spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0][
        "labelSelector"]["matchExpressions"]
    assert exprs == [{"key": "rev", "operator": "In", "values": ["2"]}]


def test_mismatch_label_keys_merge_is_idempotent():
    pod = P().label("tenant", "a").obj()
    pod["spec"]["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchExpressions": [{"key": "tenant", "operator": "NotIn", "values": ["a"]}]},
         "topologyKey": "zone", "mismatchLabelKeys": ["tenant"]}]}}
    env = Env(pod, [], abc_nodes("z1"), version=VERSION)
    exprs = env.pod_info.spec["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0][
        "labelSelector"]["matchExpressions"]
    assert exprs == [{"key": "tenant", "operator": "NotIn", "values": ["a"]}]


def test_nominated_pods_count_through_add_pod():
    """A higher-priority pod nominated to node A counts there (AddPod on a
    cloned state) for the incoming pod's anti-affinity, and nowhere else."""
    from kschedx.framework.dispatch import new_framework

    nominated = P("nominated").label("app", "web").obj()
    nominated["spec"]["priority"] = 100
    nominated["status"] = {"nominatedNodeName": "nodeA"}
    incoming = P("incoming").label("app", "web").pod_anti_affinity_in("app", "hostname", ["web"]).obj()
    cluster = admitted(*abc_nodes("z1", "z1"), nominated, incoming)
    from kschedx.state.types import PodInfo

    fw = new_framework(cluster, tie_break="name", seed=None)
    pi = PodInfo(next(p for p in cluster.pods if p["metadata"]["name"] == "incoming"))
    r = fw.schedule(pi)
    by_node = {n.name: n for n in r.nodes}
    assert by_node["nodeA"].first_failure == IPA
    assert by_node["nodeB"].feasible
    assert r.selected_node == "nodeB"


def test_table_explanations_are_worked_out_when_read():
    # filter_all (the runner's table) defers each explanation: the same as
    # filter's when read before the snapshot changes, an error after.
    pod = P().pod_anti_affinity_in("app", "zone", ["web"]).obj()
    pods = [P("web-1").label("app", "web").node("nodeA").obj()]
    env = Env(pod, pods, abc_nodes("z1", "z1", "z2"), version=VERSION)
    pl, nodes = env.plugin(IPA), env.snapshot.node_infos
    state = CycleState()
    pl.pre_filter(state, env.pod_info, nodes)
    eager = [pl.filter(state, env.pod_info, ni) for ni in nodes]
    read, late = pl.filter_all(state, env.pod_info, nodes), pl.filter_all(state, env.pod_info, nodes)
    assert [type(st) for st in read] == [DeferredStatus, DeferredStatus, type(None)]
    assert [(st.code, st.reasons, st.details) for st in read[:2]] == \
        [(st.code, st.reasons, st.details) for st in eager[:2]]
    late[0].settle()  # settled while the snapshot is unchanged: kept
    cache.assume_pod(env.snapshot, PodInfo(P("web-2").uid("web-2").label("app", "web").obj()), "nodeA")
    assert late[0].details == eager[0].details
    with pytest.raises(RuntimeError, match="after the node changed"):
        late[1].details
