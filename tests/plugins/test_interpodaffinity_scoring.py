"""InterPodAffinity PreScore/Score/NormalizeScore: the facts of upstream's
scoring_test.go (preferred terms of the incoming pod and of existing pods,
hardPodAffinityWeight, namespaces, normalisation)."""

from __future__ import annotations

from builders import PREFERRED, REQUIRED, Env, P, namespace
from builders import topology_node as node

# The version this module holds its plugins to: named, so that a newer
# version (the default) does not change what these tables mean.
VERSION = "1.35"

IPA = "InterPodAffinity"

NODES = [
    node("node1", {"region": "China"}),
    node("node2", {"region": "India"}),
    node("node3", {"az": "az1"}),
]


def test_no_terms_anywhere_skips():
    env = Env(P().label("security", "S1").obj(), [P().node("node1").label("security", "S1").obj()], NODES, version=VERSION)
    st, _ = env.scores(IPA)
    assert st.is_skip()


def test_preferred_affinity_favours_the_matching_domain():
    pod = P().pod_affinity_in("security", "region", ["S1"], kind=PREFERRED, weight=5).obj()
    pods = [P().node("node1").label("security", "S1").obj(), P().node("node2").label("security", "S2").obj()]
    env = Env(pod, pods, NODES, version=VERSION)
    st, scores = env.scores(IPA)
    assert st is None
    assert scores == {"node1": 100, "node2": 0, "node3": 0}


def test_preferred_affinity_sums_weights_over_pods_and_terms():
    pod = (P().pod_affinity_in("security", "region", ["S1"], kind=PREFERRED, weight=5)
           .pod_affinity_in("disk", "az", ["ssd"], kind=PREFERRED, weight=8).obj())
    pods = [P().node("node1").label("security", "S1").obj(),
            P().node("node2").label("security", "S1").obj(), P().node("node2").label("security", "S1").obj(),
            P().node("node3").label("disk", "ssd").obj()]
    env = Env(pod, pods, NODES, version=VERSION)
    st, scores = env.scores(IPA)
    # raw: node1 5, node2 10, node3 8 -> (s - 5) / 5 * 100
    assert scores == {"node1": 0, "node2": 100, "node3": 60}


def test_preferred_anti_affinity_disfavours_the_matching_domain():
    pod = P().pod_anti_affinity_in("security", "region", ["S1"], kind=PREFERRED, weight=5).obj()
    pods = [P().node("node1").label("security", "S1").obj()]
    env = Env(pod, pods, NODES, version=VERSION)
    _, scores = env.scores(IPA)
    assert scores == {"node1": 0, "node2": 100, "node3": 100}


def test_existing_pods_required_affinity_uses_hard_pod_affinity_weight():
    pod = P().label("app", "db").obj()
    pods = [P().node("node1").label("app", "web").pod_affinity_in("app", "region", ["db"]).obj()]
    env = Env(pod, pods, NODES, version=VERSION)
    st, scores = env.scores(IPA)
    assert st is None and scores == {"node1": 100, "node2": 0, "node3": 0}
    env = Env(pod, pods, NODES, plugin_args={IPA: {"hardPodAffinityWeight": 0}}, version=VERSION)
    st, _ = env.scores(IPA)
    assert st.is_skip()


def test_existing_pods_preferred_terms_apply_symmetrically():
    pod = P().label("app", "db").obj()
    pods = [P().node("node1").pod_affinity_in("app", "region", ["db"], kind=PREFERRED, weight=10).obj(),
            P().node("node2").pod_anti_affinity_in("app", "region", ["db"], kind=PREFERRED, weight=10).obj()]
    env = Env(pod, pods, NODES, version=VERSION)
    _, scores = env.scores(IPA)
    # raw: node1 +10, node2 -10, node3 0 -> (s + 10) / 20 * 100
    assert scores == {"node1": 100, "node2": 0, "node3": 50}


def test_terms_of_other_namespaces_and_namespace_selector():
    nss = [namespace("ns1", {"team": "a"}), namespace("ns2", {"team": "b"})]
    pod = P().namespace("ns1").pod_affinity("region", {"matchLabels": {"app": "x"}}, kind=PREFERRED, weight=1,
                                            namespaceSelector={"matchLabels": {"team": "b"}}).obj()
    pods = [P().namespace("ns2").node("node1").label("app", "x").obj(),
            P().namespace("ns1").node("node2").label("app", "x").obj()]
    env = Env(pod, pods, NODES, nss, version=VERSION)
    _, scores = env.scores(IPA)
    # namespaceSelector replaces the pod's own namespace: only ns2 counts.
    assert scores == {"node1": 100, "node2": 0, "node3": 0}


def test_nodes_without_labels_contribute_nothing():
    pod = P().pod_affinity_in("app", "region", ["x"], kind=PREFERRED).obj()
    nodes = NODES + [node("bare", {})]
    env = Env(pod, [P().node("bare").label("app", "x").obj()], nodes, version=VERSION)
    st, _ = env.scores(IPA)
    assert st.is_skip()


def test_normalize_uses_float_and_truncates():
    pod = P().pod_affinity_in("app", "region", ["x"], kind=PREFERRED, weight=1).obj()
    nodes = [node("a", {"region": "r1"}), node("b", {"region": "r2"}), node("c", {"region": "r3"})]
    pods = [P().node("a").label("app", "x").obj()] + [P().node("b").label("app", "x").obj() for _ in range(3)]
    env = Env(pod, pods, nodes, version=VERSION)
    _, scores = env.scores(IPA)
    # raw 1, 3, 0: int(100 * (1/3)) = 33
    assert scores == {"a": 33, "b": 100, "c": 0}


def test_score_details_name_the_pods():
    pod = P().pod_affinity_in("app", "region", ["x"], kind=PREFERRED, weight=7).obj()
    env = Env(pod, [P("x1").node("node1").label("app", "x").obj()], NODES, version=VERSION)
    from kschedx.framework.cycle_state import CycleState

    pl = env.plugin(IPA)
    state = CycleState()
    assert pl.pre_score(state, env.pod_info, env.snapshot.node_infos) is None
    d = pl.score_details(state, env.pod_info, env.node("node1"))
    assert d["domains"][0]["pods"] == [{"pod": "default/x1", "node": "node1", "term": "preferredAffinity", "weight": 7}]
    assert d["domains"][0]["score"] == 7
    assert pl.score_details(state, env.pod_info, env.node("node2")) is None


def test_required_terms_do_not_score_for_the_incoming_pod():
    pod = P().pod_affinity_in("app", "region", ["x"], kind=REQUIRED).obj()
    env = Env(pod, [P().node("node1").label("app", "x").obj()], NODES, version=VERSION)
    st, _ = env.scores(IPA)
    assert st.is_skip()


def _existing_with_preferences():
    # TestPreferredAffinity's rows "(Do not) ignore preferred terms of existing pods":
    # node1 (China) runs an S1 pod preferring S1 in its region (8) and avoiding S2 in
    # its az (5); node2 (India) runs an S2 pod preferring S2 in its region (6).
    pods = [P().node("node1").label("security", "S1")
            .pod_affinity_in("security", "region", ["S1"], kind=PREFERRED, weight=8)
            .pod_anti_affinity_in("security", "az", ["S2"], kind=PREFERRED, weight=5).obj(),
            P().node("node2").label("security", "S2")
            .pod_affinity_in("security", "region", ["S2"], kind=PREFERRED, weight=6).obj()]
    return P().label("security", "S2").obj(), pods, NODES[:2]


def test_do_not_ignore_preferred_terms_of_existing_pods():
    # The S2 pod satisfies node2's pod term (+6 for region India); node1's anti term
    # needs an az label node1 lacks. Normalized: node1 0, node2 100.
    pod, pods, nodes = _existing_with_preferences()
    st, scores = Env(pod, pods, nodes, plugin_args={IPA: {"ignorePreferredTermsOfExistingPods": False}}, version=VERSION).scores(IPA)
    assert st is None and scores == {"node1": 0, "node2": 100}


def test_ignore_preferred_terms_of_existing_pods():
    # The incoming pod has no affinity of its own: PreScore skips.
    pod, pods, nodes = _existing_with_preferences()
    st, _ = Env(pod, pods, nodes, plugin_args={IPA: {"ignorePreferredTermsOfExistingPods": True}}, version=VERSION).scores(IPA)
    assert st.is_skip()


def test_ignore_preferred_terms_still_scores_pods_with_their_own_terms():
    # With its own preferred term the pod is scored as usual, existing pods' terms included:
    # own S1-by-region (5) on node1 (China has the S1 pod) + node2's S2 term (+6 India).
    pod, pods, nodes = _existing_with_preferences()
    pod = P().label("security", "S2").pod_affinity_in("security", "region", ["S1"], kind=PREFERRED, weight=5).obj()
    st, scores = Env(pod, pods, nodes, plugin_args={IPA: {"ignorePreferredTermsOfExistingPods": True}}, version=VERSION).scores(IPA)
    # raw node1 5, node2 6 -> (s - 5) * 100 / (6 - 5)
    assert st is None and scores == {"node1": 0, "node2": 100}
