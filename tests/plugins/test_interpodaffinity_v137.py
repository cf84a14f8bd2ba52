"""InterPodAffinity's incoming namespaceSelector, as v1.37 fixed it: upstream
scoring_test.go TestPreferredAffinity "Affinity / AntiAffinity with pods
correctly enforcing negative NamespaceSelector" (v1.37.2), and the same
inputs at v1.35 and v1.36, where the unrolled selector was kept and, matched
with no namespace labels, counted the pods of every namespace (their
values from the v1.35.4 and v1.36.3 schedulers, through the oracle:
tests/golden-versions/differences/interpodaffinity-negative-namespace-selector).
The Filter side is the same term, required."""

from __future__ import annotations

import pytest

from builders import PREFERRED, REQUIRED, Env, P, namespace
from builders import topology_node as node

IPA = "InterPodAffinity"

# scoring_test.go's namespaces and nodes.
NAMESPACES = [namespace("subteam1.team1", {"team": "team1"}), namespace("subteam2.team1", {"team": "team1"}),
              namespace("subteam1.team2", {"team": "team2"}), namespace("subteam2.team2", {"team": "team2"})]
NODES = [node("node1", {"region": "China"}), node("node2", {"region": "India"})]
NOT_TEAM1 = {"matchExpressions": [{"key": "team", "operator": "NotIn", "values": ["team1"]}]}
S1 = {"matchExpressions": [{"key": "security", "operator": "In", "values": ["S1"]}]}


def existing():
    return [P().namespace("subteam1.team1").node("node1").label("security", "S1").obj(),
            P().namespace("subteam1.team1").node("node1").label("security", "S1").obj(),
            P().namespace("subteam1.team2").node("node2").label("security", "S1").obj()]


def incoming(anti: bool, kind=PREFERRED):
    p = P().namespace("subteam1.team1").label("security", "S1")
    term = p.pod_anti_affinity if anti else p.pod_affinity
    return term("region", S1, kind=kind, weight=5, namespaceSelector=NOT_TEAM1).obj()


@pytest.mark.parametrize("version, affinity, anti_affinity", [
    # v1.37.2's table: only subteam1.team2's pod (on node2) counts.
    ("1.37", {"node1": 0, "node2": 100}, {"node1": 100, "node2": 0}),
    # Before: the two subteam1.team1 pods on node1 count too (raw 10 against 5).
    ("1.36", {"node1": 100, "node2": 0}, {"node1": 0, "node2": 100}),
    ("1.35", {"node1": 100, "node2": 0}, {"node1": 0, "node2": 100}),
])
def test_preferred_terms_with_a_negative_namespace_selector(version, affinity, anti_affinity):
    for anti, want in ((False, affinity), (True, anti_affinity)):
        env = Env(incoming(anti), existing(), NODES, NAMESPACES, version=version)
        st, scores = env.scores(IPA)
        assert st is None and scores == want, (version, anti)


@pytest.mark.parametrize("version, fits", [
    # Required anti-affinity: from 1.37 node1 (team1's pods only) fits.
    ("1.37", {"node1": True, "node2": False}),
    ("1.36", {"node1": False, "node2": False}),
    ("1.35", {"node1": False, "node2": False}),
])
def test_required_anti_affinity_with_a_negative_namespace_selector(version, fits):
    env = Env(incoming(True, REQUIRED), existing(), NODES, NAMESPACES, version=version)
    pre, statuses = env.filter_all(IPA)
    assert pre is None or pre.is_success()
    assert {n: st is None or st.is_success() for n, st in statuses.items()} == fits
