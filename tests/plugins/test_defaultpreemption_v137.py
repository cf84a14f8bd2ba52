"""DefaultPreemption at v1.37: upstream default_preemption_test.go TestPostFilter
(v1.37.2: a preemption that finds a node returns Success with "preemption:
found a potential placement for pod on node N, preempting K victims"), and
framework/preemption/util_test.go TestFilterVictimsWithPDBViolation (a pod
stops taking from its budgets at the first one it violates), with a case of
our own where that tells 1.37 from 1.36."""

from __future__ import annotations

import pytest

from kschedx.api.labels import selector_from_set
from kschedx.framework.preemption import Budget, split_by_pdb_violation
from kschedx.framework.status import Code
from kschedx.state.types import PodInfo
from builders import preemption_pod as pod
from test_defaultpreemption import POST_FILTER_CASES, Env, ErroringExtensions

VERSION = "1.37"


def _placement(case) -> str:
    """1.37's Success text for a case whose node upstream's table names."""
    env = Env([*case["nodes"], *case["pods"], *case.get("pdbs", ()), case["pod"]], version=VERSION)
    if case.get("test_plugin"):
        env.add_pre_filter(ErroringExtensions())
    pi = env.pod_info("p")
    state = env.pre_filter(pi)
    return env.plugin.post_filter(state, pi, env.node_to_status(case["statuses"]))


@pytest.mark.parametrize("case", POST_FILTER_CASES, ids=[c["name"] for c in POST_FILTER_CASES])
def test_post_filter(case):
    result, status = _placement(case)
    assert status.code == case["want_code"]
    if case["want_code"] == Code.SUCCESS:
        assert status.message() == (f"preemption: found a potential placement for pod on node {case['want_node']}, "
                                    f"preempting {len(result.details['victims'])} victims")
        assert len(result.details["victims"]) == 1  # every table case preempts one pod
    else:
        # The failures' texts are 1.36's.
        assert status.message() == case["want_msg"]
    if case["want_node"] is None:
        assert result is None
    else:
        assert result is not None and result.nominated_node == case["want_node"]


def _victim(name, **labels):
    return PodInfo(pod(name, labels=labels))


def _budget(name, labels, allowed, disrupted=()):
    return Budget(f"default/{name}", "default", selector_from_set(labels) if labels else None, allowed,
                  frozenset(disrupted))


# TestFilterVictimsWithPDBViolation's pod victims (its pod-group ones need GenericWorkload).
PDB_CASES = [
    ("no victims, no PDBs", [], [], [], []),
    ("victim with no matching PDBs", [("p1", {"app": "foo"})], [("b", {"app": "bar"}, 0)], [], ["p1"]),
    ("victim matching PDB, adequate DisruptionsAllowed", [("p1", {"app": "foo"})], [("b", {"app": "foo"}, 1)],
     [], ["p1"]),
    ("victim matching PDB, no DisruptionsAllowed", [("p1", {"app": "foo"})], [("b", {"app": "foo"}, 0)],
     ["p1"], []),
    ("multiple victims matching the same PDB", [("p1", {"app": "foo"}), ("p2", {"app": "foo"})],
     [("b", {"app": "foo"}, 1)], ["p2"], ["p1"]),
    ("PDB with empty selector", [("p1", {"app": "foo"})], [("b", {}, 0)], [], ["p1"]),
    ("Multiple PDBs", [("p1", {"app": "foo", "tier": "backend"})],
     [("a", {"app": "foo"}, 1), ("b", {"tier": "backend"}, 0)], ["p1"], []),
]


@pytest.mark.parametrize("name, victims, pdbs, violating, non_violating", PDB_CASES, ids=[c[0] for c in PDB_CASES])
def test_filter_victims_with_pdb_violation(name, victims, pdbs, violating, non_violating):
    got_v, got_n = split_by_pdb_violation([_victim(n, **lb) for n, lb in victims],
                                          [_budget(*b) for b in pdbs], first_violation_stops=True)
    assert ([p.name for p in got_v], [p.name for p in got_n]) == (violating, non_violating)


def test_pod_in_disrupted_pods_is_ignored():
    got_v, got_n = split_by_pdb_violation([_victim("p1", app="foo")], [_budget("b", {"app": "foo"}, 0, {"p1"})],
                                          first_violation_stops=True)
    assert (got_v, [p.name for p in got_n]) == ([], ["p1"])


def test_the_first_violated_budget_stops_the_walk():
    """Ours: A matches PDB1 (0 allowed) then PDB2 (1 allowed); B matches PDB2
    only. 1.36 takes one from both budgets for A, so B violates PDB2 too;
    1.37 stops at PDB1 for A, and B still fits PDB2's budget."""
    victims = [_victim("a", app="a", tier="t"), _victim("b", tier="t")]
    budgets = [_budget("pdb1", {"app": "a"}, 0), _budget("pdb2", {"tier": "t"}, 1)]
    v137, n137 = split_by_pdb_violation(victims, budgets, first_violation_stops=True)
    v136, n136 = split_by_pdb_violation(victims, budgets)
    assert ([p.name for p in v137], [p.name for p in n137]) == (["a"], ["b"])
    assert ([p.name for p in v136], [p.name for p in n136]) == (["a", "b"], [])


@pytest.mark.parametrize("version, switch", [("1.35", False), ("1.36", False), ("1.37", True)])
def test_the_plugin_follows_its_version(version, switch):
    env = Env([pod("p")], version=version)
    assert env.plugin.pdb_first_violation_stops is switch
