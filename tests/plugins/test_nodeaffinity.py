"""NodeAffinity PreFilter / Filter / Score (upstream node_affinity_test.go)
and the component-helpers nodeaffinity selector semantics it relies on
(nodeaffinity_test.go), including the rows with the plugin's `addedAffinity`
argument."""

import pytest
from builders import handle_at, make_node, make_pod, node_info, required_node_affinity, run_filter, run_score, verdict
from builders import node_selector_term as term
from builders import requirement as expr

from kschedx.framework.cycle_state import CycleState
from kschedx.api.labels import NodeSelector, SelectorError, node_selector_requirements
from kschedx.plugins.nodeaffinity import NodeAffinity, RequiredNodeAffinity
from kschedx.state.types import PodInfo

# The version this module holds its plugins to: named, so that a newer
# version (the default) does not change what these tables mean.
VERSION = "1.35"

NO_MATCH = ("UnschedulableAndUnresolvable", ["node(s) didn't match Pod's node affinity/selector"])
OK = ("Success", [])


def name_in(*names):
    return expr("metadata.name", "In", *names)


def required(*terms):
    return {"nodeAffinity": required_node_affinity(*terms)}


# name, pod kwargs, node labels, node name, want prefilter (code or None / set of names), want filter
FILTER_CASES = [
    ("missing labels", dict(node_selector={"foo": "bar"}), {}, "n", None, NO_MATCH),
    ("same labels", dict(node_selector={"foo": "bar"}), {"foo": "bar"}, "n", None, OK),
    ("node labels are superset", dict(node_selector={"foo": "bar"}), {"foo": "bar", "baz": "blah"}, "n", None, OK),
    ("node labels are subset", dict(node_selector={"foo": "bar", "baz": "blah"}), {"foo": "bar"}, "n", None, NO_MATCH),
    ("In operator matches", dict(affinity=required(term(expr("foo", "In", "bar", "value2")))), {"foo": "bar"}, "n", None, OK),
    ("Gt operator matches", dict(affinity=required(term(expr("kernel-version", "Gt", "0204")))),
     {"kernel-version": "0206"}, "n", None, OK),
    ("NotIn operator matches", dict(affinity=required(term(expr("mem-type", "NotIn", "DDR", "DDR2")))),
     {"mem-type": "DDR3"}, "n", None, OK),
    ("Exists operator matches", dict(affinity=required(term(expr("GPU", "Exists")))),
     {"GPU": "NVIDIA-GRID-K1"}, "n", None, OK),
    ("affinity does not match labels", dict(affinity=required(term(expr("foo", "In", "value1", "value2")))),
     {"foo": "bar"}, "n", None, NO_MATCH),
    ("empty MatchExpressions matches nothing", dict(affinity=required({"matchExpressions": []})),
     {"foo": "bar"}, "n", None, NO_MATCH),
    ("no affinity: PreFilter skips", dict(), {"foo": "bar"}, "n", "Skip", OK),
    ("affinity with nil required: PreFilter skips", dict(affinity={"nodeAffinity": {}}), {"foo": "bar"}, "n", "Skip", OK),
    ("multiple matchExpressions ANDed match",
     dict(affinity=required(term(expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")))),
     {"GPU": "NVIDIA-GRID-K1"}, "n", None, OK),
    ("multiple matchExpressions ANDed don't match",
     dict(affinity=required(term(expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")))),
     {"GPU": "NVIDIA-GRID-K1"}, "n", None, NO_MATCH),
    ("terms ORed, one matches",
     dict(affinity=required(term(expr("foo", "In", "bar", "value2")), term(expr("diffkey", "In", "wrong", "value2")))),
     {"foo": "bar"}, "n", None, OK),
    ("affinity and nodeSelector both satisfied",
     dict(node_selector={"foo": "bar"}, affinity=required(term(expr("foo", "Exists")))), {"foo": "bar"}, "n", None, OK),
    ("affinity satisfied but nodeSelector not",
     dict(node_selector={"foo": "bar"}, affinity=required(term(expr("foo", "Exists")))), {"foo": "barrrrrr"}, "n", None,
     NO_MATCH),
    ("invalid value in a term never matches",
     dict(affinity=required(term(expr("foo", "NotIn", "invalid value: ___@#$%^")))), {"foo": "bar"}, "n", None, NO_MATCH),
    ("matchFields In matches the node", dict(affinity=required(term(fields=[name_in("node1")]))), {}, "node1",
     {"node1"}, OK),
    ("matchFields In does not match the node", dict(affinity=required(term(fields=[name_in("node1")]))), {}, "node2",
     {"node1"}, NO_MATCH),
    ("two terms: matchFields fails, matchExpressions matches",
     dict(affinity=required(term(fields=[name_in("node1"), name_in("node2")]), term(expr("foo", "In", "bar")))),
     {"foo": "bar"}, "node2", None, OK),
    ("one term: matchFields fails, matchExpressions matches",
     dict(affinity=required(term(expr("foo", "In", "bar"), fields=[name_in("node1")]))), {"foo": "bar"}, "node2",
     {"node1"}, NO_MATCH),
    ("one term: both match", dict(affinity=required(term(expr("foo", "In", "bar"), fields=[name_in("node1")]))),
     {"foo": "bar"}, "node1", {"node1"}, OK),
    ("two terms: neither matches",
     dict(affinity=required(term(fields=[name_in("node1")]), term(expr("foo", "In", "not-match-to-bar")))),
     {"foo": "bar"}, "node2", None, NO_MATCH),
    ("two terms of node name affinity",
     dict(affinity=required(term(fields=[name_in("node1")]), term(fields=[name_in("node2")]))), {}, "node2",
     {"node1", "node2"}, OK),
    ("two conflicting matchFields requirements",
     dict(affinity=required(term(fields=[name_in("node1"), name_in("node2")]))), {"foo": "bar"}, "node2",
     ("UnschedulableAndUnresolvable", ["pod affinity terms conflict"]), NO_MATCH),
    ("matchFields In with several names narrows to all of them",
     dict(affinity=required(term(fields=[{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]))), {}, "b",
     {"a", "b"}, ("UnschedulableAndUnresolvable", ["node(s) didn't match Pod's node affinity/selector"])),
    ("matchFields NotIn does not narrow",
     dict(affinity=required(term(fields=[{"key": "metadata.name", "operator": "NotIn", "values": ["a"]}]))), {}, "b",
     None, OK),
    ("empty nodeSelectorTerms: no narrowing, no match", dict(affinity=required()), {}, "n", None, NO_MATCH),
]


@pytest.mark.parametrize("name, pod_kw, labels, node_name, want_pre, want", FILTER_CASES, ids=[c[0] for c in FILTER_CASES])
def test_prefilter_and_filter(name, pod_kw, labels, node_name, want_pre, want):
    pod = make_pod(**pod_kw)
    pl = NodeAffinity(handle_at(VERSION))
    state = CycleState()
    res, st = pl.pre_filter(state, PodInfo(pod), [])
    if want_pre == "Skip":
        assert st is not None and st.code.label == "Skip" and res is None
    elif isinstance(want_pre, tuple):
        assert verdict(st) == want_pre and res is None
    elif isinstance(want_pre, set):
        assert st is None and res is not None and res.node_names == want_pre
    else:
        assert st is None and (res is None or res.all_nodes())
    ni = node_info(make_node(node_name, labels=labels))
    assert verdict(pl.filter(state, PodInfo(pod), ni)) == want


@pytest.mark.parametrize(
    "pod_kw, labels, want",
    [
        (dict(node_selector={"foo": "bar"}), {"foo": "bar", "baz": "blah"}, OK),
        (dict(affinity=required(term(expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")))),
         {"GPU": "NVIDIA-GRID-K1"}, OK),
        (dict(node_selector={"foo": "bar"}), {"foo": "baz"}, NO_MATCH),
    ],
)
def test_filter_without_prefilter(pod_kw, labels, want):
    _, st = run_filter(NodeAffinity(handle_at(VERSION)), make_pod(**pod_kw), node_info(make_node("n", labels=labels)), pre_filter=False)
    assert verdict(st) == want


def preferred(*weighted_terms):
    return {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": w, "preference": t} for w, t in weighted_terms]}}


AFFINITY1 = preferred((2, term(expr("foo", "In", "bar"))))
AFFINITY2 = preferred(
    (2, term(expr("foo", "In", "bar"))),
    (4, term(expr("key", "In", "value"))),
    (5, term(expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1"))),
)
LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}

SCORE_CASES = [
    ("no node matches preferred terms", AFFINITY1, [("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)],
     [("node1", 0), ("node2", 0), ("node3", 0)]),
    ("only node1 matches", AFFINITY1, [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)],
     [("node1", 100), ("node2", 0), ("node3", 0)]),
    ("all nodes match with different priorities", AFFINITY2, [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)],
     [("node1", 18), ("node5", 100), ("node2", 36)]),
    ("zero weight and empty terms are ignored",
     preferred((0, term(expr("foo", "In", "bar"))), (3, {}), (1, term(expr("key", "In", "value")))),
     [("node1", LABEL1), ("node2", LABEL2)], [("node1", 0), ("node2", 100)]),
    ("preferred matchFields", preferred((5, term(fields=[name_in("node2")]))), [("node1", {}), ("node2", {})],
     [("node1", 0), ("node2", 100)]),
]


@pytest.mark.parametrize("name, affinity, nodes, expected", SCORE_CASES, ids=[c[0] for c in SCORE_CASES])
@pytest.mark.parametrize("with_prescore", [True, False], ids=["prescore", "no-prescore"])
def test_score(name, affinity, nodes, expected, with_prescore):
    infos = [node_info(make_node(n, labels=lb)) for n, lb in nodes]
    got = run_score(NodeAffinity(handle_at(VERSION)), make_pod(affinity=affinity), infos, pre_score=with_prescore)
    assert got == expected


def test_score_prescore_skips_without_preferred_terms():
    infos = [node_info(make_node(n, labels=LABEL1)) for n in ("node1", "node2")]
    assert run_score(NodeAffinity(handle_at(VERSION)), make_pod(), infos) == "Skip"
    # Score still works when PreScore did not run: every node scores 0.
    assert run_score(NodeAffinity(handle_at(VERSION)), make_pod(), infos, pre_score=False) == [("node1", 0), ("node2", 0)]


# --- addedAffinity (NodeAffinityArgs) --------------------------------------------------

ENFORCED = ("UnschedulableAndUnresolvable", ["node(s) didn't match scheduler-enforced node affinity"])


def added_required(*terms):
    return {"addedAffinity": required_node_affinity(*terms)}


@pytest.mark.parametrize("name, pod_kw, args, want", [
    ("matches added affinity and pod's node affinity", dict(affinity=required(term(expr("zone", "In", "foo")))),
     added_required(term(fields=[name_in("node2")])), OK),
    ("matches added affinity but not pod's node affinity", dict(affinity=required(term(expr("zone", "In", "bar")))),
     added_required(term(fields=[name_in("node2")])), NO_MATCH),
    ("doesn't match added affinity", {}, added_required(term(expr("zone", "In", "bar"))), ENFORCED),
    # The enforced selector is checked first: its reason wins when both fail.
    ("fails both", dict(affinity=required(term(expr("zone", "In", "bar")))),
     added_required(term(expr("zone", "In", "bar"))), ENFORCED),
])
def test_added_affinity_filter(name, pod_kw, args, want):
    pl = NodeAffinity(handle_at(VERSION), args)
    ni = node_info(make_node("node2", labels={"zone": "foo"}))
    pre, st = run_filter(pl, make_pod(**pod_kw), ni)
    assert pre is None  # an added selector keeps PreFilter from skipping
    assert verdict(st) == want
    assert verdict(pl.filter_all(CycleState(), PodInfo(make_pod(**pod_kw)), [ni]) and
                   pl.filter_all(CycleState(), PodInfo(make_pod(**pod_kw)), [ni])[0]) == want


@pytest.mark.parametrize("name, pod_affinity, args, nodes, expected", [
    ("added affinity", None, {"addedAffinity": AFFINITY1["nodeAffinity"]},
     [("node1", LABEL1), ("node2", LABEL2)], [("node1", 100), ("node2", 0)]),
    ("added affinity and pod has default affinity", AFFINITY1,
     {"addedAffinity": preferred((3, term(expr("key", "In", "value"))))["nodeAffinity"]},
     [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)], [("node1", 40), ("node2", 60), ("node3", 100)]),
])
@pytest.mark.parametrize("with_prescore", [True, False], ids=["prescore", "no-prescore"])
def test_added_affinity_score(name, pod_affinity, args, nodes, expected, with_prescore):
    infos = [node_info(make_node(n, labels=lb)) for n, lb in nodes]
    pod = make_pod(affinity=pod_affinity) if pod_affinity else make_pod()
    assert run_score(NodeAffinity(handle_at(VERSION), args), pod, infos, pre_score=with_prescore) == expected


def test_added_preferred_terms_of_weight_zero_still_run_prescore():
    # A non-empty added list makes PreScore run even when every term is dropped.
    args = {"addedAffinity": preferred((0, term(expr("foo", "In", "bar"))))["nodeAffinity"]}
    infos = [node_info(make_node("node1", labels=LABEL1))]
    assert run_score(NodeAffinity(handle_at(VERSION), args), make_pod(), infos) == [("node1", 0)]


def test_invalid_added_affinity_is_refused():
    with pytest.raises(ValueError, match="scheduler|initializing plugin"):
        NodeAffinity(handle_at(VERSION), added_required(term(expr("invalid/label/key", "In", "x"))))


# --- component-helpers nodeaffinity: selector semantics --------------------------


def ns(*terms):
    return NodeSelector({"nodeSelectorTerms": list(terms)})


def test_node_selector_invalid_terms_are_skipped_lazily():
    sel = ns(
        term(fields=[name_in("host_1", "host_2")]),  # matchFields In needs exactly one value
        term(expr("label_1", "In", "label_1_val"), fields=[name_in("host_1")]),
        term(expr("invalid key", "In", "label_value")),
    )
    assert sel.matches({"label_1": "label_1_val"}, "host_1") is True
    assert sel.matches({}, "host_1") is False


@pytest.mark.parametrize(
    "terms, labels, name, want",
    [
        ([term(expr("label_1", "In", "label_1_val"), fields=[name_in("host_1")])], {}, "host_1", False),
        ([term(expr("label_1", "In", "label_1_val"), fields=[name_in("host_1")])], {"label_1": "label_1_val"}, "host_1",
         True),
        ([term(expr("label_1", "In", "label_1_val")), term(fields=[name_in("host_1")])], {}, "host_1", True),
        ([], {"foo": "bar"}, "n", False),
        # A node without a name has no fields: matchFields is not applied.
        ([term(fields=[name_in("host_1")])], {}, "", True),
    ],
)
def test_node_selector_match(terms, labels, name, want):
    assert ns(*terms).matches(labels, name) is want


def test_preferred_terms_score_sums_matching_weights():
    pod = make_pod(affinity=preferred(
        (5, term(fields=[name_in("host_1")])),
        (7, term(expr("unknown_label", "In", "unknown_label_val"))),
        (11, term(expr("label_1", "In", "label_1_val"))),
    ))
    got = run_score(NodeAffinity(handle_at(VERSION)), pod, [node_info(make_node("host_1", labels={"label_1": "label_1_val"}))],
                    normalize=False)
    assert got == [("host_1", 16)]


@pytest.mark.parametrize(
    "exprs, labels, want",
    [
        (None, {"foo": "bar"}, False),
        ([], {"foo": "bar"}, False),
        ([expr("foo", "In", "bar", "baz")], {"foo": "baz"}, True),
        ([expr("foo", "In", "bar", "baz")], {"foo": "qux"}, False),
        ([expr("foo", "Gt", "1")], {"foo": "2"}, True),
        ([expr("foo", "Gt", "1")], {"foo": "1"}, False),
        ([expr("bar", "Lt", "7")], {"bar": "6"}, True),
        ([expr("bar", "Lt", "7")], {"bar": "seven"}, False),
        ([expr("bar", "Lt", "7")], {}, False),
    ],
)
def test_node_selector_requirements_as_selector(exprs, labels, want):
    assert node_selector_requirements(exprs).matches(labels) is want


@pytest.mark.parametrize(
    "exprs",
    [
        [expr("foo", "Exists", "bar", "baz")],  # values set must be empty for exists
        [expr("foo", "In")],  # values set can't be empty
        [expr("foo", "Gt", "1", "2")],  # exactly one value
        [expr("foo", "Gt", "one")],  # must be an integer
        [expr("foo", "Gt", "-1")],  # an integer, but not a valid label value
        [expr("foo", "Lt", "+7")],
        [expr("foo", "Near", "x")],
        [expr("bad key", "Exists")],
    ],
)
def test_node_selector_requirements_invalid(exprs):
    with pytest.raises(SelectorError):
        node_selector_requirements(exprs)


REQUIRED_CASES = [
    ("no selector", {}, {}, "", True),
    ("nil nodeSelectorTerms", dict(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}),
     {"foo": "bar"}, "", False),
    ("empty nodeSelectorTerms", dict(affinity=required()), {"foo": "bar"}, "", False),
    ("matchFields In matches", dict(affinity=required(term(fields=[name_in("node_1")]))), {}, "node_1", True),
    ("matchFields In does not match", dict(affinity=required(term(fields=[name_in("node_1")]))), {}, "node_2", False),
    ("nil required node selector", dict(affinity={"nodeAffinity": {}}), {"foo": "bar"}, "", True),
]


@pytest.mark.parametrize("name, pod_kw, labels, node_name, want", REQUIRED_CASES, ids=[c[0] for c in REQUIRED_CASES])
def test_get_required_node_affinity_match(name, pod_kw, labels, node_name, want):
    req = RequiredNodeAffinity(make_pod(**pod_kw)["spec"])
    assert req.matches(node_info(make_node(node_name or "x", labels=labels)) if node_name else _NamelessNode(labels)) is want


class _NamelessNode:
    def __init__(self, labels):
        self.labels = labels
        self.name = ""


def test_invalid_preferred_term_fails_prescore():
    # component-helpers: NewPreferredSchedulingTerms returns the parse errors
    # and NodeAffinity's PreScore returns them as an Error status.
    from kschedx.framework.cycle_state import CycleState

    pod = make_pod(affinity=preferred((1, term(expr("invalid key", "In", "label_value"))),
                                      (1, term(expr("label_1", "In", "label_1_val")))))
    st = NodeAffinity(handle_at(VERSION)).pre_score(CycleState(), PodInfo(pod), [])
    assert st is not None and st.code.label == "Error"


def test_invalid_preferred_term_with_zero_weight_is_ignored():
    pod = make_pod(affinity=preferred((0, term(fields=[name_in("host_1", "host_2")])),
                                      (3, term(expr("label_1", "In", "label_1_val")))))
    got = run_score(NodeAffinity(handle_at(VERSION)), pod, [node_info(make_node("host_1", labels={"label_1": "label_1_val"}))],
                    normalize=False)
    assert got == [("host_1", 3)]


ALL_LABELS = [labels for _, _, labels, _, _, _ in FILTER_CASES] + [{}, {"foo": "bar", "GPU": "x"}]


@pytest.mark.parametrize("name, pod_kw, labels, node_name, want_pre, want", FILTER_CASES, ids=[c[0] for c in FILTER_CASES])
def test_filter_all_agrees_with_filter_on_nodes_of_every_label_set(name, pod_kw, labels, node_name, want_pre, want):
    """filter_all works a verdict out once per combination of the label
    values it reads: it must equal filter on each node, for nodes sharing
    and not sharing those values (each label set twice, other names)."""
    pod = PodInfo(make_pod(**pod_kw))
    pl = NodeAffinity(handle_at(VERSION))
    state = CycleState()
    pl.pre_filter(state, pod, [])
    nodes = [node_info(make_node(f"{node_name}-{i}" if i else node_name, labels=lbl))
             for i, lbl in enumerate(ALL_LABELS + ALL_LABELS)]
    batch = pl.filter_all(state, pod, nodes)
    per_node = [pl.filter(state, pod, ni) for ni in nodes]
    assert [verdict(st) for st in (batch or [None] * len(nodes))] == [verdict(st) for st in per_node]
