"""Golden-style cases for each scoring strategy and plugin arg: a small
cluster, one pending pod, the whole scheduling cycle with the args given to
Framework(plugin_args=...). Every expected value is worked out by hand from
upstream's code (the arithmetic is in the comments), never read off kschedx's
output; each case also runs with the default args to show the arg changes
the answer."""

from __future__ import annotations

import pytest
from builders import api_object, container, framework, make_node, make_pod, metadata

from kschedx.features import default_features
from kschedx.state.types import PodInfo

# The scenarios' numbers are v1.35.4's (1.36 scores balance otherwise; its
# bindingTimeout is allowed): pinned, with what 1.36 changes checked below.
V135 = default_features("1.35")
V136 = default_features("1.36")

GI = 1024**3
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def node(name, cpu, memory, zone=None):
    labels = {HOSTNAME: name}
    if zone:
        labels[ZONE] = zone
    return make_node(name, cpu=cpu, memory=memory, pods=110, labels=labels)


def pod(name, requests=None, node_name=None, labels=None, affinity=None, limits=None):
    return make_pod(name, containers=[container(requests=requests, limits=limits)], node=node_name, labels=labels,
                    affinity=affinity)


def service(name, selector):
    return api_object("v1", "Service", metadata(name, "default"), spec={"selector": selector})


def run(objects, incoming, plugin_args=None, features=V135):
    fw = framework(*objects, incoming, plugin_args=plugin_args, features=features)
    pi = next(PodInfo(p) for p in fw.cluster.pods if p["metadata"]["name"] == incoming["metadata"]["name"])
    return fw.schedule(pi)


def plugin_scores(result, plugin):
    """{node: normalized score} of one plugin; None when it was skipped."""
    out = {}
    for n in result.nodes:
        for s in n.scores or ():
            if s.plugin == plugin:
                out[n.name] = None if s.skipped else s.normalized
    return out


def filter_reasons(result, plugin):
    out = {}
    for n in result.nodes:
        for f in n.filters:
            if f.plugin == plugin and f.status is not None and f.status.is_rejected():
                out[n.name] = list(f.status.reasons)
    return out


# --- NodeResourcesFit scoring strategies -----------------------------------------------------
# "small" 4 cpu / 8Gi already runs 2 cpu / 4Gi; "big" 8 cpu / 16Gi is empty; the pod
# asks 1 cpu / 2Gi. After placing it, small is at 3000m/4000m and 6Gi/8Gi (75%, 75%),
# big at 1000m/8000m and 2Gi/16Gi (12.5%, 12.5%).
FIT_CLUSTER = [node("small", "4", "8Gi"), node("big", "8", "16Gi"),
               pod("running", {"cpu": "2", "memory": "4Gi"}, node_name="small")]
FIT_POD = pod("incoming", {"cpu": "1", "memory": "2Gi"})


@pytest.mark.parametrize("args, want_scores, want_node", [
    # LeastAllocated (default): small (4000-3000)*100/4000 = 25 and (8-6)*100/8 = 25 -> 25;
    # big (8000-1000)*100/8000 = 87 and (16-2)*100/16 = 87 -> 87.
    (None, {"small": 25, "big": 87}, "big"),
    # MostAllocated: small 3000*100/4000 = 75, 6Gi*100/8Gi = 75 -> 75; big 1000*100/8000 = 12,
    # 2Gi*100/16Gi = 12 -> 12.
    ({"scoringStrategy": {"type": "MostAllocated"}}, {"small": 75, "big": 12}, "small"),
    # MostAllocated, memory weight 3: (75*1 + 75*3)/4 = 75; (12*1 + 12*3)/4 = 12.
    ({"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1},
                                                                  {"name": "memory", "weight": 3}]}},
     {"small": 75, "big": 12}, "small"),
    # RequestedToCapacityRatio bin packing, shape 0->0, 100->10 (x10: 0->0, 100->100):
    # utilization small 75 -> 75 for both resources; big 1000*100/8000 = 12 -> 12.
    ({"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {
        "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}}},
     {"small": 75, "big": 12}, "small"),
    # RequestedToCapacityRatio spreading, shape 0->10, 100->0, memory weight 3:
    # small 100 + (0-100)*75/100 = 25 for both -> 25; big 100 - 12 = 88 for both -> 88.
    ({"scoringStrategy": {"type": "RequestedToCapacityRatio", "resources": [{"name": "cpu", "weight": 1},
                                                                             {"name": "memory", "weight": 3}],
                          "requestedToCapacityRatio": {
                              "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]}}},
     {"small": 25, "big": 88}, "big"),
], ids=["LeastAllocated", "MostAllocated", "MostAllocated-weights", "RTCR-binpack", "RTCR-spread"])
def test_fit_strategies(args, want_scores, want_node):
    result = run(FIT_CLUSTER, FIT_POD, {"NodeResourcesFit": args} if args else None)
    assert plugin_scores(result, "NodeResourcesFit") == want_scores
    assert result.selected_node == want_node
    # The explanation names the strategy in use.
    big = next(n for n in result.nodes if n.name == "big")
    details = next(s.details for s in big.scores if s.plugin == "NodeResourcesFit")
    assert details["strategy"] == ((args or {}).get("scoringStrategy") or {}).get("type", "LeastAllocated")


# --- NodeResourcesFit ignoredResources / ignoredResourceGroups ------------------------------
# The node has 1 example.com/foo; the pod asks 2 (extended resources need
# limits equal to requests).

def ext_pod():
    return pod("incoming", {"cpu": "100m", "example.com/foo": "2"}, limits={"example.com/foo": "2"})


@pytest.mark.parametrize("args, want_status", [
    (None, "Unschedulable"),
    ({"ignoredResources": ["example.com/foo"]}, "Scheduled"),
    ({"ignoredResourceGroups": ["example.com"]}, "Scheduled"),
    ({"ignoredResourceGroups": ["example.org"]}, "Unschedulable"),
])
def test_fit_ignored_resources(args, want_status):
    cluster = [make_node("n1", cpu="4", memory="8Gi", pods=110, allocatable={"example.com/foo": "1"})]
    result = run(cluster, ext_pod(), {"NodeResourcesFit": args} if args else None)
    assert result.status == want_status
    if want_status == "Unschedulable":
        # "0/1 nodes are available: 1 Insufficient example.com/foo.", then the
        # PostFilter messages joined: DynamicResources' "no new claims to
        # deallocate" and, the request exceeding allocatable outright,
        # preemption cannot help.
        assert result.message == ("0/1 nodes are available: 1 Insufficient example.com/foo. no new claims to "
                                  "deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for "
                                  "scheduling.")


# --- NodeResourcesBalancedAllocation resources ----------------------------------------------
# Pod: 1 cpu, 2Gi, 1 example.com/gpu. Node a: 4 cpu, 8Gi, 4 gpus -> fractions .25, .25, .25:
# std 0 -> 100. Node b: 4 cpu, 8Gi, 1 gpu -> .25, .25, 1: mean .5, variance
# (.0625 + .0625 + .25)/3 = .125, std .35355 -> int((1 - .35355)*100) = 64.
# With the default resources (cpu, memory) both nodes score 100.
@pytest.mark.parametrize("args, want", [
    (None, {"a": 100, "b": 100}),
    ({"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "example.com/gpu"}]}, {"a": 100, "b": 64}),
])
def test_balanced_allocation_resources(args, want):
    cluster = [make_node("a", cpu="4", memory="8Gi", pods=110, allocatable={"example.com/gpu": "4"}),
               make_node("b", cpu="4", memory="8Gi", pods=110, allocatable={"example.com/gpu": "1"})]
    incoming = pod("incoming", {"cpu": "1", "memory": "2Gi", "example.com/gpu": "1"}, limits={"example.com/gpu": "1"})
    result = run(cluster, incoming, {"NodeResourcesBalancedAllocation": args} if args else None)
    assert plugin_scores(result, "NodeResourcesBalancedAllocation") == want


# 1.36 scores the change in balance. Without the pod both nodes are empty
# (balance 100); with it: a 100 -> 75; b 64 -> 50 + (50 + 64 - 100) / 2 = 57.
@pytest.mark.parametrize("args, want", [
    (None, {"a": 75, "b": 75}),
    ({"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "example.com/gpu"}]}, {"a": 75, "b": 57}),
])
def test_balanced_allocation_resources_1_36(args, want):
    cluster = [make_node("a", cpu="4", memory="8Gi", pods=110, allocatable={"example.com/gpu": "4"}),
               make_node("b", cpu="4", memory="8Gi", pods=110, allocatable={"example.com/gpu": "1"})]
    incoming = pod("incoming", {"cpu": "1", "memory": "2Gi", "example.com/gpu": "1"}, limits={"example.com/gpu": "1"})
    result = run(cluster, incoming, {"NodeResourcesBalancedAllocation": args} if args else None, features=V136)
    assert plugin_scores(result, "NodeResourcesBalancedAllocation") == want


# --- InterPodAffinity hardPodAffinityWeight / ignorePreferredTermsOfExistingPods -----------
# n2 (zone a) runs a pod with an affinity term to app=web by zone; n1 is in zone b.
# The incoming pod is app=web and has no affinity of its own; everything else ties
# (big nodes, pods without requests), so with no InterPodAffinity score the tie-break
# by name picks n1.
def affinity_cluster(existing_affinity):
    return [node("n1", "100", "1000Gi", zone="b"), node("n2", "100", "1000Gi", zone="a"),
            pod("existing", node_name="n2", labels={"app": "web"}, affinity=existing_affinity)]


def term(weight=None):
    t = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": ZONE}
    return t if weight is None else {"weight": weight, "podAffinityTerm": t}


REQUIRED = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term()]}}
PREFERRED = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [term(50)]}}


@pytest.mark.parametrize("existing, args, want_scores, want_node", [
    # The existing pod's required term matches the incoming pod: zone a gets
    # hardPodAffinityWeight (1 by default); normalized (s - min)*100/(max - min): 100 and 0.
    (REQUIRED, None, {"n1": 0, "n2": 100}, "n2"),
    (REQUIRED, {"hardPodAffinityWeight": 7}, {"n1": 0, "n2": 100}, "n2"),
    # Weight 0: required terms of existing pods count nothing; no score at all -> Skip.
    (REQUIRED, {"hardPodAffinityWeight": 0}, {"n1": None, "n2": None}, "n1"),
    # The existing pod's preferred term (weight 50) favours zone a...
    (PREFERRED, None, {"n1": 0, "n2": 100}, "n2"),
    # ...unless existing pods' preferred terms are ignored for pods without affinity: Skip.
    (PREFERRED, {"ignorePreferredTermsOfExistingPods": True}, {"n1": None, "n2": None}, "n1"),
])
def test_inter_pod_affinity_args(existing, args, want_scores, want_node):
    incoming = pod("incoming", labels={"app": "web"})
    result = run(affinity_cluster(existing), incoming, {"InterPodAffinity": args} if args else None)
    assert plugin_scores(result, "InterPodAffinity") == want_scores
    assert result.selected_node == want_node


# --- PodTopologySpread defaultingType / defaultConstraints ----------------------------------
# A Service selects app=web; n1 (zone a) runs two app=web pods, n2 (zone b) none.
# The incoming app=web pod has no constraints of its own.
SPREAD_CLUSTER = [node("n1", "100", "1000Gi", zone="a"), node("n2", "100", "1000Gi", zone="b"),
                  service("web", {"app": "web"}),
                  pod("w1", node_name="n1", labels={"app": "web"}), pod("w2", node_name="n1", labels={"app": "web"})]
LIST_HARD = {"defaultingType": "List", "defaultConstraints": [
    {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}]}


def test_spread_list_defaults_filter():
    # List: zone maxSkew 1 DoNotSchedule with the Service's selector. Skew =
    # matching pods in the node's zone + 1 (the pod matches itself) - the global
    # minimum: n1 2 + 1 - 0 = 3 > 1, rejected; n2 0 + 1 - 0 = 1 <= 1, feasible.
    result = run(SPREAD_CLUSTER, pod("incoming", labels={"app": "web"}), {"PodTopologySpread": LIST_HARD})
    assert filter_reasons(result, "PodTopologySpread") == {
        "n1": ["node(s) didn't match pod topology spread constraints"]}
    assert result.selected_node == "n2"


def test_spread_system_defaults_do_not_filter():
    # System defaults are ScheduleAnyway only: both nodes are feasible.
    result = run(SPREAD_CLUSTER, pod("incoming", labels={"app": "web"}))
    assert filter_reasons(result, "PodTopologySpread") == {}


def test_spread_list_without_constraints_skips():
    # List with no constraints: nothing to spread by, Score is skipped on every node.
    result = run(SPREAD_CLUSTER, pod("incoming", labels={"app": "web"}),
                 {"PodTopologySpread": {"defaultingType": "List"}})
    assert set(plugin_scores(result, "PodTopologySpread").values()) == {None}


def test_spread_list_soft_constraint_scores():
    # List, zone maxSkew 1 ScheduleAnyway. Score = round(matching pods in the zone *
    # log(zones + 2) + maxSkew - 1): n1 round(2 * log(4)) = round(2.77) = 3, n2 0.
    # NormalizeScore 100 * (max + min - s) / max: n1 100 * 0 / 3 = 0, n2 100 * 3 / 3 = 100.
    args = {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"}]}
    result = run(SPREAD_CLUSTER, pod("incoming", labels={"app": "web"}), {"PodTopologySpread": args})
    assert plugin_scores(result, "PodTopologySpread") == {"n1": 0, "n2": 100}


# --- NodeAffinity addedAffinity -----------------------------------------------------------------
ADDED_CLUSTER = [node("n1", "4", "8Gi", zone="a"), node("n2", "4", "8Gi", zone="b")]


def zone_in(*zones):
    return {"matchExpressions": [{"key": ZONE, "operator": "In", "values": list(zones)}]}


def test_added_required_affinity_filters_every_pod():
    args = {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [zone_in("b")]}}}
    result = run(ADDED_CLUSTER, pod("incoming"), {"NodeAffinity": args})
    assert filter_reasons(result, "NodeAffinity") == {"n1": ["node(s) didn't match scheduler-enforced node affinity"]}
    assert result.selected_node == "n2"


def test_added_required_affinity_message_when_nothing_matches():
    # UnschedulableAndUnresolvable on both nodes: preemption cannot help.
    args = {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [zone_in("c")]}}}
    result = run(ADDED_CLUSTER, pod("incoming"), {"NodeAffinity": args})
    assert result.status == "Unschedulable"
    assert result.message == ("0/2 nodes are available: 2 node(s) didn't match scheduler-enforced node affinity. "
                              "no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is "
                              "not helpful for scheduling.")


def test_added_preferred_affinity_scores_every_pod():
    # Added weight 80 for zone b: n2 raw 80, n1 0; normalized 100 and 0. The pod
    # itself prefers zone a with weight 20: n1 20, n2 80 -> 25 and 100.
    args = {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 80, "preference": zone_in("b")}]}}
    result = run(ADDED_CLUSTER, pod("incoming"), {"NodeAffinity": args})
    assert plugin_scores(result, "NodeAffinity") == {"n1": 0, "n2": 100}
    own = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 20, "preference": zone_in("a")}]}}
    result = run(ADDED_CLUSTER, pod("incoming", affinity=own), {"NodeAffinity": args})
    assert plugin_scores(result, "NodeAffinity") == {"n1": 25, "n2": 100}
    details = {n.name: next(s.details for s in n.scores if s.plugin == "NodeAffinity") for n in result.nodes}
    assert details == {"n1": {"addedAffinityWeight": 0, "podAffinityWeight": 20},
                       "n2": {"addedAffinityWeight": 80, "podAffinityWeight": 0}}
    # Without the arg the pod's own preference wins.
    assert run(ADDED_CLUSTER, pod("incoming", affinity=own)).selected_node == "n1"


# --- args that change nothing offline ----------------------------------------------------------
@pytest.mark.parametrize("name, args, attr, value", [
    ("VolumeBinding", {"bindTimeoutSeconds": 30}, "bind_timeout_seconds", 30),
    ("VolumeBinding", None, "bind_timeout_seconds", 600),
    ("DynamicResources", {"filterTimeout": "0s"}, "filter_timeout", "0s"),
    ("DynamicResources", None, "filter_timeout", "10s"),
    ("DefaultPreemption", {"minCandidateNodesAbsolute": 5}, "min_candidate_nodes_absolute", 5),
    ("DefaultPreemption", None, "min_candidate_nodes_percentage", 10),
])
def test_args_reach_the_plugin(name, args, attr, value):
    fw = framework(*ADDED_CLUSTER, plugin_args={name: args} if args else None, features=V135)
    assert getattr(fw.profile.by_name[name], attr) == value


@pytest.mark.parametrize("name, args, message", [
    ("VolumeBinding", {"shape": [{"utilization": 0, "score": 10}]},
     'initializing plugin "VolumeBinding": shape: Invalid value: [{"Utilization":0,"Score":10}]: unexpected field '
     "`shape`, remove it or turn on the feature gate StorageCapacityScoring"),
    ("DynamicResources", {"bindingTimeout": "60s"},
     'initializing plugin "DynamicResources": bindingTimeout: Forbidden: DRADeviceBindingConditions or '
     "DRAResourceClaimDeviceStatus feature gate is disabled"),
    ("InterPodAffinity", {"hardPodAffinityWeight": 101},
     'initializing plugin "InterPodAffinity": hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]'),
    ("PodTopologySpread", {"defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE,
                                                   "whenUnsatisfiable": "DoNotSchedule"}]},
     'initializing plugin "PodTopologySpread": defaultingType: Invalid value: "System": when .defaultConstraints '
     "are not empty"),
])
def test_invalid_args_refuse_to_build_the_plugin(name, args, message):
    with pytest.raises(ValueError) as exc:
        framework(*ADDED_CLUSTER, plugin_args={name: args}, features=V135)
    assert str(exc.value) == message


# --- DefaultPreemption minCandidateNodesPercentage / minCandidateNodesAbsolute ---------------------
# Three full nodes (1 cpu each, one 1-cpu victim each); the victim on n1 has
# priority 50, on n2 10, on n3 40. The preemptor (priority 100, 1 cpu) fits
# nowhere. With the defaults (10%, 100) every node is a candidate and
# pickOneNodeForPreemption takes the one whose highest victim priority is
# lowest: n2. With (0%, 1) the dry run stops at the first candidate found from
# the start offset (0 with --tie-break name), n1. (Upstream's dry run is
# parallel, so with 16 workers it may find more than one before it stops; the
# facts here are those of a sequential run, as upstream's own dry-run tables
# with parallelism 1 and kschedx's documented model.)
def preemption_cluster():
    nodes = [make_node(n, cpu="1", memory="8Gi", pods=110, labels={HOSTNAME: n}) for n in ("n1", "n2", "n3")]
    victims = [make_pod(f"v-{n}", containers=[container(requests={"cpu": "1"})], node=n, priority=p)
               for n, p in (("n1", 50), ("n2", 10), ("n3", 40))]
    return nodes + victims


@pytest.mark.parametrize("args, want", [
    (None, "n2"),
    ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 1}, "n1"),
    ({"minCandidateNodesPercentage": 100, "minCandidateNodesAbsolute": 0}, "n2"),
])
def test_preemption_candidate_count(args, want):
    preemptor = make_pod("incoming", containers=[container(requests={"cpu": "1"})], priority=100)
    result = run(preemption_cluster(), preemptor, {"DefaultPreemption": args} if args else None)
    assert result.preemption["nominatedNode"] == want
