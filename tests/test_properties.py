"""Property tests for the parsers and the resource arithmetic.

- the fixture reader returns exactly the objects written, whatever the
  nesting of List / *List kinds, the document split, JSON or YAML, gzip;
- selector parsing raises nothing but SelectorError and agrees with a small
  reference model of apimachinery's rules written here;
- pod_requests: init containers never lower requests, sidecars add to the
  steady state, overhead adds, container order does not matter.
"""

from __future__ import annotations

import copy
import gzip
import json
import os
import re
import tempfile

import yaml
from builders import container, make_pod, req_containers, sidecar
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedx.api.labels import SelectorError, label_selector, node_selector_requirements
from kschedx.api.resources import pod_requests
from kschedx.sources.fixtures import read_objects

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- fixture reader round trip ------------------------------------------------------

NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12)
LABELS = st.dictionaries(st.sampled_from(["app", "tier", "example.com/x"]),
                         st.text(alphabet="abcXYZ019-._ üñ", max_size=8), max_size=3)


@st.composite
def k8s_object(draw):
    kind = draw(st.sampled_from(["Node", "Pod", "Namespace"]))
    meta = {"name": draw(NAMES)}
    labels = draw(LABELS)
    if labels:
        meta["labels"] = labels
    obj = {"apiVersion": "v1", "kind": kind, "metadata": meta}
    if kind == "Pod":
        obj["spec"] = {"containers": [{"name": "c", "image": draw(NAMES)}], "priority": draw(st.integers(-5, 10**9))}
    if kind == "Node":
        obj["status"] = {"capacity": {"cpu": draw(st.sampled_from(["1", "500m", "1.5", 4])), "pods": 110}}
    return obj


def group(draw, objs, depth):
    """Wrap a run of objects into List / <Kind>List documents, recursively."""
    out = []
    i = 0
    while i < len(objs):
        n = draw(st.integers(1, len(objs) - i))
        chunk = objs[i:i + n]
        i += n
        style = draw(st.sampled_from(["plain", "list", "typed"])) if depth < 3 else "plain"
        if style == "plain":
            out.extend(chunk)
        elif style == "list":
            out.append({"apiVersion": "v1", "kind": "List", "items": group(draw, chunk, depth + 1)})
        else:
            # A typed list holds objects of its kind, their kind left out as
            # API list responses do.
            kind = chunk[0]["kind"]
            if any(o["kind"] != kind for o in chunk):
                out.extend(chunk)
                continue
            items = []
            for o in chunk:
                o = dict(o)
                del o["kind"]
                del o["apiVersion"]
                items.append(o)
            out.append({"apiVersion": "v1", "kind": kind + "List", "items": items})
    return out


@st.composite
def fixture_file(draw):
    objs = draw(st.lists(k8s_object(), min_size=0, max_size=8))
    docs = group(draw, objs, 0)
    fmt = draw(st.sampled_from(["yaml", "json"]))
    if fmt == "json":
        value = docs[0] if len(docs) == 1 else {"apiVersion": "v1", "kind": "List", "items": docs}
        text = json.dumps(value, indent=draw(st.sampled_from([None, 2])), ensure_ascii=draw(st.booleans()))
    else:
        parts = []
        for d in docs:
            parts.append(yaml.safe_dump(d, allow_unicode=draw(st.booleans()), default_flow_style=draw(st.booleans())))
            if draw(st.booleans()):
                parts.append("# a comment\n")  # an empty document in between
        text = "---\n".join(parts)
        if draw(st.booleans()):
            text = "---\n" + text
    data = text.encode()
    gz = draw(st.booleans())
    if gz:
        data = gzip.compress(data)
    return objs, fmt, gz, data


@FAST
@given(fixture_file())
def test_fixture_reader_round_trips(case):
    objs, fmt, gz, data = case
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "f." + fmt + (".gz" if gz else ""))
        with open(path, "wb") as fh:
            fh.write(data)
        got = [o for o, _ in read_objects([path])]
    assert got == objs


# --- label selectors against a reference model ------------------------------------------

NAME_RE = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
DNS_LABEL_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def ref_valid_key(k):
    if not isinstance(k, str):
        return False
    parts = k.split("/")
    if len(parts) == 1:
        prefix, name = None, parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix or len(prefix) > 253 or not all(DNS_LABEL_RE.fullmatch(p) for p in prefix.split(".")):
            return False
    else:
        return False
    return 0 < len(name) <= 63 and NAME_RE.fullmatch(name) is not None


def ref_valid_value(v):
    return isinstance(v, str) and len(v) <= 63 and (v == "" or NAME_RE.fullmatch(v) is not None)


def ref_int(v):
    if not isinstance(v, str) or not re.fullmatch(r"[+-]?[0-9]+", v):
        return None
    n = int(v)
    return n if -(2**63) <= n < 2**63 else None


def ref_requirement_valid(key, op, values, allow_numeric):
    if not ref_valid_key(key):
        return False
    if op in ("In", "NotIn"):
        ok = len(values) > 0
    elif op in ("Exists", "DoesNotExist"):
        ok = len(values) == 0
    elif op in ("Gt", "Lt") and allow_numeric:
        ok = len(values) == 1 and ref_int(values[0]) is not None
    else:
        return False
    return ok and all(ref_valid_value(v) for v in values)


def ref_requirement_matches(key, op, values, labels):
    has = key in labels
    if op == "In":
        return has and labels[key] in values
    if op == "NotIn":
        return not has or labels[key] not in values
    if op == "Exists":
        return has
    if op == "DoesNotExist":
        return not has
    if not has or ref_int(labels[key]) is None:
        return False
    n, bound = ref_int(labels[key]), ref_int(values[0])
    return n > bound if op == "Gt" else n < bound


KEYS = st.sampled_from(["app", "tier", "example.com/team", "a.b-c_d", "x" * 63, "UPPER", "7",
                        "", "-app", "app-", "a b", "x" * 64, "Example.com/a", "a/b/c", "/a", "a/", "ex_ample.com/a"])
VALUES = st.sampled_from(["", "web", "db", "a-b", "A.b_c", "1", "42", "007", "-1", "+3", "9223372036854775808",
                          "v" * 63, "v" * 64, "-web", "web-", "has space", "ü"])
OPS = st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "in", "Near", "", None])
NODE_LABELS = st.dictionaries(st.sampled_from(["app", "tier", "example.com/team", "a.b-c_d", "7"]),
                              st.sampled_from(["web", "db", "", "1", "42", "007", "-3", "x"]), max_size=4)


@st.composite
def expressions(draw):
    out = []
    for _ in range(draw(st.integers(0, 3))):
        e = {"key": draw(KEYS), "operator": draw(OPS)}
        vals = draw(st.lists(VALUES, max_size=3))
        if vals or draw(st.booleans()):
            e["values"] = vals
        out.append(e)
    return out


@FAST
@given(st.dictionaries(KEYS, VALUES, max_size=3), expressions(), st.booleans(), NODE_LABELS)
def test_label_selector_agrees_with_reference(match_labels, exprs, with_labels, labels):
    sel = {"matchExpressions": exprs}
    if with_labels:
        sel["matchLabels"] = match_labels
    reqs = [(k, "In", [v]) for k, v in (match_labels.items() if with_labels else [])]
    reqs += [(e["key"], e["operator"], e.get("values") or []) for e in exprs]
    valid = all(ref_requirement_valid(k, op, vs, allow_numeric=False) for k, op, vs in reqs)
    try:
        selector = label_selector(sel)
    except SelectorError:
        assert not valid
        return
    assert valid
    want = all(ref_requirement_matches(k, op, vs, labels) for k, op, vs in reqs)
    assert selector.matches(labels) is want


@FAST
@given(expressions(), NODE_LABELS)
def test_node_selector_requirements_agree_with_reference(exprs, labels):
    reqs = [(e["key"], e["operator"], e.get("values") or []) for e in exprs]
    valid = all(ref_requirement_valid(k, op, vs, allow_numeric=True) for k, op, vs in reqs)
    try:
        selector = node_selector_requirements(exprs)
    except SelectorError:
        assert not valid
        return
    assert valid
    # An empty requirement list matches nothing.
    want = bool(reqs) and all(ref_requirement_matches(k, op, vs, labels) for k, op, vs in reqs)
    assert selector.matches(labels) is want


def test_label_selector_nil_and_empty():
    assert label_selector(None).matches({}) is False
    assert label_selector({}).matches({"a": "b"}) is True
    assert label_selector({"matchLabels": {}, "matchExpressions": []}).matches({}) is True


# --- resource arithmetic ------------------------------------------------------------

RESOURCES = ["cpu", "memory", "example.com/gpu"]


@st.composite
def request_list(draw):
    rl = {}
    for name in RESOURCES:
        if draw(st.booleans()):
            n = draw(st.integers(0, 5000))
            rl[name] = f"{n}m" if name == "cpu" else str(n)
    return rl


def init_entry():
    return st.tuples(st.booleans(), request_list())  # (is sidecar, requests)


def build(containers, inits, overhead=None):
    return make_pod(
        containers=req_containers(*containers),
        init_containers=[(sidecar if sc else container)(f"i{i}", requests=r) for i, (sc, r) in enumerate(inits)] or None,
        overhead=overhead,
    )


def ge(a, b):
    return all(a.get(k, 0) >= v for k, v in b.items())


def plus(a, b):
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out


def milli(rl):
    from kschedx.api.resources import to_milli_list

    return to_milli_list(rl)


@FAST
@given(st.lists(request_list(), max_size=3), st.lists(init_entry(), max_size=4), request_list())
def test_adding_an_init_container_never_lowers_requests(containers, inits, extra):
    before = pod_requests(build(containers, inits))
    after = pod_requests(build(containers, inits + [(False, extra)]))
    assert ge(after, before)
    # Appended last, it runs next to every sidecar: max(before, its requests + sidecars).
    sidecars = {}
    for sc, r in inits:
        if sc:
            sidecars = plus(sidecars, milli(r))
    want = dict(before)
    for k, v in plus(milli(extra), sidecars).items():
        if k in milli(extra) or k in sidecars:
            want[k] = max(want.get(k, 0), v)
    assert after == want


@FAST
@given(st.lists(request_list(), max_size=3), st.lists(init_entry(), max_size=4), request_list())
def test_a_sidecar_adds_to_the_steady_state(containers, inits, extra):
    before = pod_requests(build(containers, inits))
    after = pod_requests(build(containers, inits + [(True, extra)]))
    assert ge(after, before)
    # The steady state (containers + sidecars) grows by the sidecar's requests.
    steady = {}
    for r in containers:
        steady = plus(steady, milli(r))
    for sc, r in inits:
        if sc:
            steady = plus(steady, milli(r))
    assert ge(after, plus(steady, milli(extra)))
    if not inits:
        assert after == plus(before, milli(extra))


@FAST
@given(st.lists(request_list(), max_size=3), st.lists(init_entry(), max_size=3), request_list())
def test_overhead_adds_exactly(containers, inits, overhead):
    before = pod_requests(build(containers, inits))
    after = pod_requests(build(containers, inits, overhead=overhead or None))
    assert after == plus(before, milli(overhead))


@FAST
@given(st.lists(request_list(), min_size=1, max_size=4), st.lists(init_entry(), max_size=3), st.randoms())
def test_container_order_does_not_matter(containers, inits, rnd):
    shuffled = copy.deepcopy(containers)
    rnd.shuffle(shuffled)
    assert pod_requests(build(containers, inits)) == pod_requests(build(shuffled, inits))


@FAST
@given(st.lists(request_list(), max_size=3), st.lists(init_entry(), max_size=3),
       st.integers(0, 10**6), st.integers(0, 10**6))
def test_pod_level_requests_replace_cpu_and_memory(containers, inits, cpu, mem):
    p = build(containers, inits)
    base = pod_requests(p)
    p["spec"]["resources"] = {"requests": {"cpu": f"{cpu}m", "memory": str(mem)}}
    got = pod_requests(p)
    assert got["cpu"] == cpu and got["memory"] == mem * 1000
    assert {k: v for k, v in got.items() if k not in ("cpu", "memory")} == \
        {k: v for k, v in base.items() if k not in ("cpu", "memory")}
