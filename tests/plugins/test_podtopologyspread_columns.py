"""PodTopologySpread over the snapshot's own nodes works by columns (C loops
over label values, the pod index for matching pods): on random clusters it
gives what the node-by-node reference gives - the same domains in the same
order, the same counts, critical paths, ignored nodes, weights and scores."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedx.framework.cycle_state import CycleState
from kschedx.plugins.podtopologyspread import filtering, scoring
from kschedx.plugins.podtopologyspread.common import DO_NOT_SCHEDULE_ACTION, SCHEDULE_ANYWAY, get_constraints
from kschedx.state.pod_index import index_of
from builders import Env, P, exists, taint
from builders import topology_node as node

# The version this module holds its plugins to: named, so that a newer
# version (the default) does not change what these tables mean.
VERSION = "1.35"

PTS = "PodTopologySpread"
HOST = "kubernetes.io/hostname"
KEYS = ("zone", "rack", HOST)

nodes_st = st.lists(
    st.tuples(
        st.sampled_from([None, "z1", "z2", "z3"]),  # zone
        st.sampled_from([None, "r1", "r2"]),  # rack
        st.booleans(),  # has its hostname label
        st.booleans(),  # tainted
    ),
    min_size=1, max_size=10,
)
pods_st = st.lists(st.tuples(st.integers(0, 9), st.sampled_from(["a", "b"]), st.booleans()), max_size=25)
constraint_st = st.tuples(
    st.sampled_from(KEYS),
    st.sampled_from(["DoNotSchedule", "ScheduleAnyway"]),
    st.integers(1, 3),  # maxSkew
    st.sampled_from([None, "Honor", "Ignore"]),  # nodeAffinityPolicy
    st.sampled_from([None, "Honor", "Ignore"]),  # nodeTaintsPolicy
)


def _env(nodes, pods, constraints, node_selector, tolerates):
    node_objs = []
    for i, (zone, rack, hostname, tainted) in enumerate(nodes):
        name = f"n{i}"
        labels = {k: v for k, v in (("zone", zone), ("rack", rack)) if v is not None}
        if hostname:
            labels[HOST] = name
        node_objs.append(node(name, labels, [taint("t", "x", "NoSchedule")] if tainted else None))
    pod_objs = [P(f"q{j}").label("app", app).namespace("default" if same_ns else "other")
                .node(f"n{i % len(nodes)}").obj()
                for j, (i, app, same_ns) in enumerate(pods)]
    incoming = P("p").label("app", "a")
    for key, when, skew, affinity_policy, taints_policy in constraints:
        incoming.spread(skew, key, when, exists("app"), node_affinity_policy=affinity_policy,
                        node_taints_policy=taints_policy)
    if node_selector:
        incoming.node_selector({"zone": "z1"})
    if tolerates:
        incoming.toleration("t")
    return Env(incoming.obj(), pod_objs, node_objs, version=VERSION)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# One constraint per topologyKey and whenUnsatisfiable, as the API server takes them.
@given(nodes_st, pods_st, st.lists(constraint_st, min_size=1, max_size=3, unique_by=lambda c: c[:2]), st.booleans(),
       st.booleans(), st.lists(st.booleans(), min_size=10, max_size=10))
def test_columns_agree_with_node_by_node(nodes, pods, constraints, node_selector, tolerates, feasible_mask):
    env = _env(nodes, pods, constraints, node_selector, tolerates)
    pl, pi, snap = env.plugin(PTS), env.pod_info, env.snapshot
    all_nodes = snap.node_infos
    index = index_of(snap)

    hard = get_constraints(pl, pi, DO_NOT_SCHEDULE_ACTION)
    if hard:
        got = filtering.compute_pre_filter_state(hard, pi, all_nodes, index, snap.by_name)
        want = filtering.compute_node_by_node(hard, pi, all_nodes)
        assert [list(m.items()) for m in got.tp_value_to_match_num] == \
            [list(m.items()) for m in want.tp_value_to_match_num]
        assert [p.paths for p in got.critical_paths] == [p.paths for p in want.critical_paths]

    soft = get_constraints(pl, pi, SCHEDULE_ANYWAY)
    feasible = [ni for ni, keep in zip(all_nodes, feasible_mask) if keep] or all_nodes
    if soft:
        for require_all in (True, False):
            got, want = scoring.PreScoreState(), scoring.PreScoreState()
            got.constraints, want.constraints = soft, soft
            scoring.init_pre_score_state(got, feasible, require_all)
            scoring.init_node_by_node(want, feasible, require_all)
            assert [list(m.items()) for m in got.topology_value_to_pod_counts] == \
                [list(m.items()) for m in want.topology_value_to_pod_counts]
            assert (got.ignored_nodes, got.topology_normalizing_weight) == \
                (want.ignored_nodes, want.topology_normalizing_weight)
        state = CycleState()
        if pl.pre_score(state, pi, feasible) is None:
            assert pl.score_all(state, pi, feasible) == [pl.score(state, pi, ni) for ni in feasible]
