"""Node sampling (framework/sampling.py, framework/node_tree.py) against
upstream: numFeasibleNodesToFind (schedule_one_test.go
TestNumFeasibleNodesToFind), the rotating start index
(TestFairEvaluationForNodes), and the node tree's zone interleaving
(node_tree_test.go TestNodeTree_AddNode / _RemoveNode / _UpdateNode / _List /
MultiOperations). Facts ported as tables; the code under test is ours."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedx.framework.node_tree import NodeTree, node_tree_order, zone_key
from kschedx.framework.sampling import SamplingState, best_of_some_window, num_feasible_nodes_to_find, walk

REGION = "topology.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"


# TestNumFeasibleNodesToFind: (global percentage, profile percentage, nodes, wanted)
@pytest.mark.parametrize("global_pct, profile_pct, num_nodes, want", [
    (0, None, 10, 10),      # not set, not more than 50 nodes
    (0, 40, 10, 10),        # profile set, not more than 50 nodes
    (0, None, 1000, 420),   # not set, more than 50 nodes: 50 - 1000/125 = 42%
    (0, 40, 1000, 400),     # profile set
    (100, 40, 1000, 400),   # profile beats global
    (40, None, 1000, 400),  # global set
    (0, None, 6000, 300),   # adaptive floor: 5%
    (0, 40, 6000, 2400),    # profile set, more than 50*125 nodes
])
def test_num_feasible_nodes_to_find(global_pct, profile_pct, num_nodes, want):
    assert num_feasible_nodes_to_find(profile_pct, global_pct, num_nodes) == want


@pytest.mark.parametrize("profile_pct, num_nodes, want", [
    (None, 99, 99),     # below minFeasibleNodesToFind: every node
    (None, 100, 100),   # 100 * 50% = 50 -> raised to 100
    (None, 250, 120),   # 50 - 250/125 = 48% of 250
    (1, 5000, 100),     # 1% of 5000 = 50 -> raised to 100
    (100, 5000, 5000),
    (0, 5000, 500),     # profile 0 is adaptive too: 50 - 40 = 10%
])
def test_num_feasible_nodes_to_find_bounds(profile_pct, num_nodes, want):
    assert num_feasible_nodes_to_find(profile_pct, 0, num_nodes) == want


def named(names):
    return [SimpleNamespace(name=n) for n in names]


def test_fair_evaluation_rotates_start_index():
    """TestFairEvaluationForNodes: 500 nodes all feasible, 30%: each cycle
    finds 150 nodes and the next one starts 150 further on."""
    nodes = named(str(i) for i in range(500))
    state = SamplingState("upstream", 30)
    k = num_feasible_nodes_to_find(None, 30, 500)
    assert k == 150
    for i in range(2 * (500 // k + 1)):
        s = walk(nodes, lambda ni: True, state.next_start_node_index, k)
        assert len(s.found) == k
        assert s.found[0].name == str(i * k % 500)
        state.advance(s.processed, 500)
        assert state.next_start_node_index == (i + 1) * k % 500


def test_walk_counts_failures_until_one_feasible_node_too_many():
    """The search stops when it meets the (k+1)-th feasible node: that one is
    dropped, failures met before it were checked and count."""
    nodes = named("abcdefgh")
    feasible = set("acfh")
    s = walk(nodes, lambda ni: ni.name in feasible, 0, 2)
    assert [n.name for n in s.found] == ["a", "c"]
    assert s.failed == ["b", "d", "e"]  # f stops the search
    assert s.processed == 5
    s = walk(nodes, lambda ni: ni.name in feasible, 6, 2)  # g h a | b c
    assert [n.name for n in s.found] == ["h", "a"]
    assert s.failed == ["g", "b"]
    assert s.processed == 4
    s = walk(nodes, lambda ni: ni.name in feasible, 0, 10)  # fewer than k: all checked
    assert len(s.found) == 4 and s.processed == 8
    assert walk([], lambda ni: True, 3, 1).processed == 0


def test_no_scoring_means_one_node_to_find():
    """findNodesThatPassFilters: without Score plugins, scoring extenders or
    filtering extenders, one feasible node is enough."""
    def profile(score, pct=None):
        return SimpleNamespace(score=score, plan=SimpleNamespace(percentage_of_nodes_to_score=pct))
    assert SamplingState().num_to_find(profile([]), 3) == 1
    assert SamplingState().num_to_find(profile(["x"]), 3) == 3
    assert SamplingState().num_to_find(profile(["x"], 40), 1000) == 400
    assert SamplingState(has_extender_filters=True).num_to_find(profile([]), 3) == 3
    assert SamplingState(has_extender_prioritizers=True).num_to_find(profile([]), 3) == 3


# node_tree_test.go's allNodes: (name, labels)
ALL_NODES = [
    ("node-0", {}),
    ("node-1", {REGION: "region-1"}),
    ("node-2", {ZONE: "zone-2"}),
    ("node-3", {REGION: "region-1", ZONE: "zone-2"}),
    ("node-4", {REGION: "region-1", ZONE: "zone-2"}),
    ("node-5", {REGION: "region-1", ZONE: "zone-3"}),
    ("node-6", {REGION: "region-2", ZONE: "zone-2"}),
    ("node-7", {REGION: "region-2", ZONE: "zone-2"}),
    ("node-8", {REGION: "region-2", ZONE: "zone-2"}),
    ("node-9", {REGION: "region-2", ZONE: "zone-2", BETA_REGION: "region-2", BETA_ZONE: "zone-2"}),
    ("node-10", {BETA_REGION: "region-2", BETA_ZONE: "zone-3"}),
]


def check_tree(nt: NodeTree, expected: dict):
    assert nt.tree == expected
    assert nt.num_nodes == sum(len(v) for v in expected.values())
    assert sorted(nt.zones) == sorted(expected)


@pytest.mark.parametrize("to_add, expected", [
    (ALL_NODES[:1], {"": ["node-0"]}),
    ([ALL_NODES[0], ALL_NODES[0]], {"": ["node-0"]}),
    (ALL_NODES[:4], {"": ["node-0"], "region-1:\x00:": ["node-1"], ":\x00:zone-2": ["node-2"],
                     "region-1:\x00:zone-2": ["node-3"]}),
    (ALL_NODES[:7], {"": ["node-0"], "region-1:\x00:": ["node-1"], ":\x00:zone-2": ["node-2"],
                     "region-1:\x00:zone-2": ["node-3", "node-4"], "region-1:\x00:zone-3": ["node-5"],
                     "region-2:\x00:zone-2": ["node-6"]}),
    (ALL_NODES[9:], {"region-2:\x00:zone-2": ["node-9"], "region-2:\x00:zone-3": ["node-10"]}),
])
def test_node_tree_add(to_add, expected):
    check_tree(NodeTree(to_add), expected)


@pytest.mark.parametrize("existing, to_remove, expected, ok", [
    (ALL_NODES[:7], ALL_NODES[:1], {"region-1:\x00:": ["node-1"], ":\x00:zone-2": ["node-2"],
                                    "region-1:\x00:zone-2": ["node-3", "node-4"],
                                    "region-1:\x00:zone-3": ["node-5"], "region-2:\x00:zone-2": ["node-6"]}, True),
    (ALL_NODES[:7], ALL_NODES[1:4], {"": ["node-0"], "region-1:\x00:zone-2": ["node-4"],
                                     "region-1:\x00:zone-3": ["node-5"], "region-2:\x00:zone-2": ["node-6"]}, True),
    (ALL_NODES[:7], ALL_NODES[:7], {}, True),
    ([], ALL_NODES[:5], {}, False),
])
def test_node_tree_remove(existing, to_remove, expected, ok):
    nt = NodeTree(existing)
    for name, labels in to_remove:
        assert nt.remove_node(name, labels) is ok
    check_tree(nt, expected)


@pytest.mark.parametrize("existing, name, labels, expected", [
    (ALL_NODES[:7], "node-0", {REGION: "region-1", ZONE: "zone-2"},
     {"region-1:\x00:": ["node-1"], ":\x00:zone-2": ["node-2"], "region-1:\x00:zone-2": ["node-3", "node-4", "node-0"],
      "region-1:\x00:zone-3": ["node-5"], "region-2:\x00:zone-2": ["node-6"]}),
    (ALL_NODES[:1], "node-0", {REGION: "region-1", ZONE: "zone-2"}, {"region-1:\x00:zone-2": ["node-0"]}),
    (ALL_NODES[:1], "node-new", {REGION: "region-1", ZONE: "zone-2"},
     {"": ["node-0"], "region-1:\x00:zone-2": ["node-new"]}),
])
def test_node_tree_update(existing, name, labels, expected):
    nt = NodeTree(existing)
    old = dict(ALL_NODES).get(name, {})
    nt.update_node(old, name, labels)
    check_tree(nt, expected)


@pytest.mark.parametrize("to_add, expected", [
    ([], []),
    (ALL_NODES[:1], ["node-0"]),
    (ALL_NODES[:4], ["node-0", "node-1", "node-2", "node-3"]),
    (ALL_NODES[:9], ["node-0", "node-1", "node-2", "node-3", "node-5", "node-6", "node-4", "node-7", "node-8"]),
])
def test_node_tree_list(to_add, expected):
    assert NodeTree(to_add).list() == expected


@pytest.mark.parametrize("to_add, to_remove, ops, expected", [
    (ALL_NODES[2:9], ALL_NODES[2:9], "aaarrr", []),
    (ALL_NODES[2:9], ALL_NODES[2:9], "aaar", ["node-3", "node-4"]),
    (ALL_NODES[2:9], ALL_NODES[2:9], "aaarrra", ["node-5"]),
    (ALL_NODES[4:9] + [ALL_NODES[3]], [], "aaaaaa", ["node-4", "node-5", "node-6", "node-3", "node-7", "node-8"]),
    (ALL_NODES[3:5] + ALL_NODES[6:8], ALL_NODES[3:5], "aaraar", ["node-6", "node-7"]),
])
def test_node_tree_multi_operations(to_add, to_remove, ops, expected):
    nt = NodeTree()
    adds, removes = iter(to_add), iter(to_remove)
    for op in ops:
        if op == "a":
            nt.add_node(*next(adds))
        else:
            nt.remove_node(*next(removes))
    assert nt.list() == expected


def test_zone_key_prefers_beta_labels_even_empty():
    assert zone_key({BETA_ZONE: "", ZONE: "z"}) == ""
    assert zone_key({BETA_ZONE: "b", ZONE: "z", REGION: "r"}) == "r:\x00:b"
    assert zone_key(None) == ""


def test_snapshot_order_interleaves_zones_in_the_order_nodes_were_read():
    nodes = [{"metadata": {"name": f"{z}{i}", "labels": {ZONE: z}}} for z in "ba" for i in range(3)]
    nodes.append({"metadata": {"name": "c0", "labels": {ZONE: "c"}}})
    by_name = {n["metadata"]["name"]: SimpleNamespace(name=n["metadata"]["name"]) for n in nodes}
    assert [n.name for n in node_tree_order(nodes, by_name)] == ["b0", "a0", "c0", "b1", "a1", "b2", "a2"]


def brute_force_window_best(totals, k):
    f = len(totals)
    if k >= f:
        return sorted(i for i, t in enumerate(totals) if t == max(totals))
    out = set()
    for s in range(f):
        window = [(s + j) % f for j in range(k)]
        best = max(totals[i] for i in window)
        out.update(i for i in window if totals[i] == best)
    return sorted(out)


@given(st.lists(st.integers(0, 6), min_size=0, max_size=25), st.integers(1, 26))
def test_best_of_some_window_is_the_brute_force(totals, k):
    assert best_of_some_window(totals, k) == brute_force_window_best(totals, k)


def test_best_of_some_window_examples():
    # Two peaks, every window of 4 holds one of them: only they can win.
    assert best_of_some_window([9, 1, 1, 1, 8, 1, 1, 1], 4) == [0, 4]
    # With windows of 3, the three 1s between the peaks make a window alone.
    assert best_of_some_window([9, 1, 1, 1, 8, 1, 1, 1], 3) == [0, 1, 2, 3, 4, 5, 6, 7]
    # A low node between higher ones never wins a window of 3.
    assert 2 not in best_of_some_window([5, 6, 1, 6, 5, 4], 3)


def test_scheduler_sampling_state_from_a_configuration():
    from kschedx.framework.configured import parse_config
    from kschedx.framework.dispatch import sampling_state

    head = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    assert sampling_state("all").global_percentage == 0
    cfg = parse_config(head + "percentageOfNodesToScore: 35\nextenders:\n- urlPrefix: http://127.0.0.1:1/x\n"
                              "  filterVerb: filter\n", "sched.yaml")
    s = sampling_state("upstream", cfg)
    assert (s.mode, s.global_percentage, s.has_extender_filters, s.has_extender_prioritizers) == \
        ("upstream", 35, True, False)
    cfg = parse_config(head + "extenders:\n- urlPrefix: http://127.0.0.1:1/x\n  prioritizeVerb: prioritize\n"
                              "  weight: 2\n", "sched.yaml")
    s = sampling_state("all", cfg)
    assert (s.has_extender_filters, s.has_extender_prioritizers) == (False, True)


@given(st.lists(st.integers(0, 40), min_size=0, max_size=80), st.integers(1, 81))
def test_best_of_some_window_with_many_score_levels(totals, k):
    # More distinct scores than the first scan takes: the rest are sorted.
    assert best_of_some_window(totals, k) == brute_force_window_best(totals, k)
