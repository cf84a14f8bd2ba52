"""kubectl's selection flags: the -l label selector syntax (facts from
apimachinery's labels/selector_test.go and kubectl's documented examples),
--field-selector (fields/selector_test.go and the pod fields the API server
selects on), and -n / -A / -l / --field-selector choosing pending pods of a
snapshot, in queue order."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedx.cli.main import main
from kschedx.api.labels import SelectorError, parse_selector
from kschedx.api.selection import FieldSelectorError, PodSelection, parse_field_selector


def req(sel):
    return [(r.key, r.op, sorted(r.values)) for r in sel.requirements]


# ---- label selectors: labels.Parse --------------------------------------------------------

# TestSelectorParse (good and bad strings)
@pytest.mark.parametrize("text", ["x=a,y=b,z=c", "", "x!=a,y=b", "x=", "x= ", "x=,z= ", "x= ,z= ", "!x",
                                  "x>1", "x>1,z<5"])
def test_upstream_good_strings(text):
    parse_selector(text)


@pytest.mark.parametrize("text", ["x=a||y=b", "x==a==b", "!x=a", "x<a",
                                  # TestSetSelectorParser's invalid ones
                                  "x,,y", ",x,y", "x nott in (y)", "a in (xyz),", "a in (xyz)b notin ()",
                                  "a in (xyz abc)", "a notin(", "a (", "("])
def test_upstream_bad_strings(text):
    with pytest.raises(SelectorError):
        parse_selector(text)


# TestSetSelectorParser: the requirements each string parses to (sorted by key)
@pytest.mark.parametrize("text, expected", [
    ("\rx", [("x", "Exists", [])]),
    ("this-is-a-dns.domain.com/key-with-dash", [("this-is-a-dns.domain.com/key-with-dash", "Exists", [])]),
    ("this-is-another-dns.domain.com/key-with-dash in (so,what)",
     [("this-is-another-dns.domain.com/key-with-dash", "In", ["so", "what"])]),
    ("0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
     [("0.1.2.domain/99", "NotIn", ["10.10.100.1", "tick.tack.clock"])]),
    ("foo  in\t (abc)", [("foo", "In", ["abc"])]),
    ("x notin\n (abc)", [("x", "NotIn", ["abc"])]),
    ("x  notin\t\t\t(abc,def)", [("x", "NotIn", ["abc", "def"])]),
    ("x in (abc,def)", [("x", "In", ["abc", "def"])]),
    ("x in (abc,)", [("x", "In", ["", "abc"])]),
    ("x in ()", [("x", "In", [""])]),
    ("x notin (abc,def),bar,z in (),w",
     [("bar", "Exists", []), ("w", "Exists", []), ("x", "NotIn", ["abc", "def"]), ("z", "In", [""])]),
    ("x,y in (a)", [("x", "Exists", []), ("y", "In", ["a"])]),
    ("x=a", [("x", "In", ["a"])]),
    ("x>1", [("x", "Gt", ["1"])]),
    ("x<7", [("x", "Lt", ["7"])]),
    ("x=a,y!=b", [("x", "In", ["a"]), ("y", "NotIn", ["b"])]),
    ("x=a,y!=b,z in (h,i,j)", [("x", "In", ["a"]), ("y", "NotIn", ["b"]), ("z", "In", ["h", "i", "j"])]),
    ("x notin ( )", [("x", "NotIn", [""])]),
    ("x notin (, a)", [("x", "NotIn", ["", "a"])]),
    ("a ", [("a", "Exists", [])]),
    ("a in (x,y,notin, z,in)", [("a", "In", ["in", "notin", "x", "y", "z"])]),
    ("notin=in", [("notin", "In", ["in"])]),
])
def test_upstream_set_selector_parser(text, expected):
    assert req(parse_selector(text)) == expected


# TestSelectorMatches
@pytest.mark.parametrize("text, labels, match", [
    ("", {"x": "y"}, True),
    ("x=y", {"x": "y"}, True),
    ("x=y,z=w", {"x": "y", "z": "w"}, True),
    ("x!=y,z!=w", {"x": "z", "z": "a"}, True),
    ("notin=in", {"notin": "in"}, True),
    ("x", {"x": "z"}, True),
    ("!x", {"y": "z"}, True),
    ("x>1", {"x": "2"}, True),
    ("x<1", {"x": "0"}, True),
    ("x=z", {}, False),
    ("x=y", {"x": "z"}, False),
    ("x=y,z=w", {"x": "w", "z": "w"}, False),
    ("x!=y,z!=w", {"x": "z", "z": "w"}, False),
    ("x", {"y": "z"}, False),
    ("!x", {"x": "z"}, False),
    ("x>1", {"x": "0"}, False),
    ("x<1", {"x": "2"}, False),
    ("foo=bar,baz=blah", {"foo": "bar", "baz": "blah"}, True),
    ("foo=bar,foobar=bar,baz=blah", {"foo": "bar", "baz": "blah"}, False),
    # TestRequirementSelectorMatching
    ("x notin (),y", {"y": ""}, True),
    ("!x,y", {"y": ""}, True),
    ("x notin (),!y", {"y": ""}, False),
    ("x in ()", {"y": "baz"}, False),
    ("z>1", {"z": "v2"}, False),
])
def test_upstream_matches(text, labels, match):
    assert parse_selector(text).matches(labels) is match


# TestRequirementConstructor, through the string form
@pytest.mark.parametrize("text, ok", [
    ("1foo in (bar)", True), ("1234 in (bar)", True), ("y>1", True), ("z<6", True),
    ("foo>bar", False), ("barz<blah", False), ("a" * 254, False),
])
def test_upstream_requirement_constructor(text, ok):
    if ok:
        parse_selector(text)
    else:
        with pytest.raises(SelectorError):
            parse_selector(text)


# kubectl's documented examples (kubectl get --help, "Labels and Selectors")
@pytest.mark.parametrize("text, labels, match", [
    ("environment = production,tier = frontend", {"environment": "production", "tier": "frontend"}, True),
    ("environment=production,tier!=frontend", {"environment": "production", "tier": "frontend"}, False),
    ("environment in (production),tier in (frontend)", {"environment": "production", "tier": "frontend"}, True),
    ("environment in (production, qa)", {"environment": "qa"}, True),
    ("environment notin (frontend)", {}, True),
    ("tier notin (frontend,backend)", {"tier": "cache"}, True),
    ("partition", {"partition": "customerA"}, True),
    ("!partition", {"partition": "customerA"}, False),
    ("partition in (customerA, customerB),environment!=qa", {"partition": "customerB"}, True),
    ("app=nginx", {"app": "nginx", "pod-template-hash": "x"}, True),
])
def test_kubectl_documented_examples(text, labels, match):
    assert parse_selector(text).matches(labels) is match


def test_parse_is_deterministic():
    assert req(parse_selector("x=a,a=x")) == req(parse_selector("a=x,x=a"))


@pytest.mark.parametrize("text, message", [
    ("x=a=b", "found '=', expected: ',' or 'end of string'"),
    ("x in a", "found 'a' expected: '('"),
    ("=a", "expected: !, identifier, or 'end of string'"),
    ("x>a", "the value must be an integer"),
])
def test_error_messages_are_upstreams(text, message):
    with pytest.raises(SelectorError) as e:
        parse_selector(text)
    assert message in str(e.value)


_word = st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True).filter(lambda w: w not in ("in", "notin"))


@st.composite
def _requirement(draw):
    key = draw(_word)
    kind = draw(st.sampled_from(["=", "==", "!=", "in", "notin", "exists", "!", ">", "<"]))
    if kind in ("=", "==", "!="):
        value = draw(_word)
        return f"{key}{draw(st.sampled_from(['', ' ']))}{kind}{value}", (key, kind, {value})
    if kind in ("in", "notin"):
        values = draw(st.lists(_word, min_size=1, max_size=3))
        return f"{key} {kind} ({', '.join(values)})", (key, kind, set(values))
    if kind in (">", "<"):
        n = draw(st.integers(0, 99))
        return f"{key}{kind}{n}", (key, kind, n)
    return (key if kind == "exists" else f"!{key}"), (key, kind, None)


def _model(reqs, labels) -> bool:
    for key, kind, values in reqs:
        has, value = key in labels, labels.get(key)
        if kind in ("=", "==", "in"):
            ok = has and value in values
        elif kind in ("!=", "notin"):
            ok = not has or value not in values
        elif kind in ("exists", "!"):
            ok = has if kind == "exists" else not has
        else:
            ok = has and value.isdigit() and (int(value) > values if kind == ">" else int(value) < values)
        if not ok:
            return False
    return True


@settings(max_examples=200, deadline=None)
@given(st.lists(_requirement(), min_size=1, max_size=4),
       st.dictionaries(_word, st.one_of(_word, st.integers(0, 99).map(str)), max_size=4))
def test_parsed_selectors_match_like_the_reference_model(reqs, labels):
    text = ",".join(t for t, _ in reqs)
    assert parse_selector(text).matches(labels) is _model([r for _, r in reqs], labels)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab=!(),<> in1", max_size=20))
def test_any_text_parses_or_is_one_selector_error(text):
    try:
        parse_selector(text)
    except SelectorError:
        pass


# ---- field selectors: fields.ParseSelector --------------------------------------------------

POD = {"metadata": {"name": "web-1", "namespace": "shop"},
       "spec": {"schedulerName": "default-scheduler"}, "status": {}}


@pytest.mark.parametrize("text, match", [
    ("metadata.name=web-1", True),
    ("metadata.name==web-1", True),
    ("metadata.name!=web-1", False),
    ("metadata.namespace=shop,metadata.name=web-1", True),
    ("metadata.namespace=shop,metadata.name=web-2", False),
    ("spec.nodeName=", True),  # pending: no node
    ("spec.nodeName!=", False),
    ("status.phase=Pending", True),  # the phase the API server gives a new pod
    ("status.phase!=Succeeded,status.phase!=Failed", True),
    ("spec.schedulerName=default-scheduler", True),
    ("spec.hostNetwork=false", True),
    ("", True),
])
def test_field_selector_matches(text, match):
    assert all(r.matches(POD) for r in parse_field_selector(text)) is match


@pytest.mark.parametrize("text, value", [
    (r"metadata.name=a\,b", "a,b"),
    (r"metadata.name=a\=b", "a=b"),
    (r"metadata.name=a\\b", "a\\b"),
])
def test_field_selector_escapes(text, value):
    [r] = parse_field_selector(text)
    assert r.value == value


@pytest.mark.parametrize("text, message", [
    ("metadata.name", "can't understand 'metadata.name'"),
    ("metadata.name=a,b", "can't understand 'b'"),
    (r"metadata.name=a\b", "invalid escape sequence"),
    ("metadata.name=a\\", "invalid escape sequence"),
    ("metadata.name=a=b", "unescaped character in value: ="),
    ("spec.containers=x", "field label not supported: spec.containers"),
])
def test_field_selector_errors(text, message):
    with pytest.raises(FieldSelectorError) as e:
        parse_field_selector(text)
    assert message in str(e.value)


# ---- choosing pending pods of a snapshot -----------------------------------------------------

CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
"""


def _pod(ns, name, labels, *, priority=None, created="2024-01-01T00:00:00Z", node=None, scheduler=None):
    spec = {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}]}
    if priority:
        spec["priorityClassName"] = priority
    if node:
        spec["nodeName"] = node
    if scheduler:
        spec["schedulerName"] = scheduler
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": labels, "creationTimestamp": created},
            "spec": spec}


@pytest.fixture
def snapshot(tmp_path):
    pods = [
        _pod("shop", "web-1", {"app": "web", "tier": "frontend"}, created="2024-01-01T00:00:03Z"),
        _pod("shop", "web-2", {"app": "web", "tier": "frontend"}, priority="high",
             created="2024-01-01T00:00:05Z"),
        _pod("shop", "db-1", {"app": "db", "tier": "backend"}, created="2024-01-01T00:00:01Z"),
        _pod("shop", "bound", {"app": "web"}, node="n1"),
        _pod("team", "web-3", {"app": "web", "canary": "true"}, created="2024-01-01T00:00:02Z"),
        _pod("team", "batch-1", {"app": "batch"}, created="2024-01-01T00:00:00Z", scheduler="other"),
    ]
    path = tmp_path / "cluster.yaml"
    path.write_text(CLUSTER + "".join("---\n" + json.dumps(p) + "\n" for p in pods))
    return path


def _pods(*args):
    r = CliRunner().invoke(main, ["explain", *map(str, args), "-o", "json", "--tie-break", "name"],
                           catch_exceptions=False)
    assert r.exit_code in (0, 1), r.output + r.stderr
    return [p["pod"] for p in json.loads(r.stdout)["pods"]], r.stderr


@pytest.mark.parametrize("flags, expected", [
    # No flag: every pending pod of the snapshot, in queue order (priority, then age).
    ((), ["shop/web-2", "team/batch-1", "shop/db-1", "team/web-3", "shop/web-1"]),
    (("-A",), ["shop/web-2", "team/batch-1", "shop/db-1", "team/web-3", "shop/web-1"]),
    (("-n", "shop"), ["shop/web-2", "shop/db-1", "shop/web-1"]),
    (("--namespace", "team"), ["team/batch-1", "team/web-3"]),
    (("-l", "app=web"), ["shop/web-2", "team/web-3", "shop/web-1"]),
    (("-l", "app=web", "-n", "shop"), ["shop/web-2", "shop/web-1"]),
    (("-l", "app=web", "-n", "shop", "-A"), ["shop/web-2", "team/web-3", "shop/web-1"]),  # -A wins, as kubectl
    (("-l", "app in (web, db),tier!=frontend"), ["shop/db-1", "team/web-3"]),
    (("-l", "!canary,app"), ["shop/web-2", "team/batch-1", "shop/db-1", "shop/web-1"]),
    (("--selector", "tier notin (frontend)"), ["team/batch-1", "shop/db-1", "team/web-3"]),
    (("--field-selector", "metadata.name=web-1"), ["shop/web-1"]),
    (("--field-selector", "metadata.namespace!=shop,spec.schedulerName=default-scheduler"), ["team/web-3"]),
    (("--field-selector", "spec.nodeName=", "-n", "shop", "-l", "tier=frontend"), ["shop/web-2", "shop/web-1"]),
])
def test_selection_flags_on_a_snapshot(snapshot, flags, expected):
    assert _pods("--snapshot", snapshot, *flags)[0] == expected


def test_pod_names_take_the_namespace_from_n(snapshot):
    assert _pods("--snapshot", snapshot, "web-1", "-n", "shop")[0] == ["shop/web-1"]
    assert _pods("--snapshot", snapshot, "team/web-3", "web-2", "-n", "shop")[0] == ["shop/web-2", "team/web-3"]


def test_a_selection_matching_nothing_says_so(snapshot):
    pods, stderr = _pods("--snapshot", snapshot, "-l", "app=nothing", "-n", "shop")
    assert pods == []
    assert "no pending pods in namespace shop matching -l 'app=nothing'" in stderr


def test_pod_files_go_to_the_n_namespace_and_refuse_another(snapshot, tmp_path):
    pod = _pod(None, "probe", {"app": "probe"})
    del pod["metadata"]["namespace"]
    path = tmp_path / "probe.yaml"
    path.write_text(json.dumps(pod))
    assert _pods("--snapshot", snapshot, path, "-n", "team")[0] == ["team/probe"]
    other = tmp_path / "other.yaml"
    other.write_text(json.dumps(_pod("shop", "probe", {})))
    r = CliRunner().invoke(main, ["explain", "--snapshot", str(snapshot), str(other), "-n", "team"])
    assert r.exit_code == 3
    assert "metadata.namespace 'shop' does not match the namespace 'team' given with -n" in r.stderr


@pytest.mark.parametrize("flags, message", [
    (("-l", "app=web=x"), "Invalid value for '-l' / '--selector'"),
    (("--field-selector", "spec.image=x"), "field label not supported: spec.image"),
    (("-n", "Shop"), "is not a namespace name"),
])
def test_bad_selection_flags_are_usage_errors(snapshot, flags, message):
    r = CliRunner().invoke(main, ["explain", "--snapshot", str(snapshot), *flags])
    assert r.exit_code == 2 and message in r.stderr


def test_selection_scope():
    assert PodSelection().scope("team") == "team"
    assert PodSelection(namespace="shop").scope("team") == "shop"
    assert PodSelection(namespace="shop", all_namespaces=True).scope("team") is None
    assert PodSelection().scope(None) is None
