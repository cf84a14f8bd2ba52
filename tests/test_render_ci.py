"""CI report formats (-o junit, -o github, -o tap): built from the result
document, one test per pod, failures exactly where the exit code fails."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedx.cli.main import main
from kschedx.render.github import annotation, to_github
from kschedx.render.junit import to_junit
from kschedx.render.tap import to_tap
from kschedx.sources.fixtures import read_objects

ROOT = Path(__file__).resolve().parent.parent
CLUSTER = str(ROOT / "fixtures" / "cluster")
PODS = ROOT / "fixtures" / "pods"
XSD = ROOT / "tests" / "schemas" / "junit-10.xsd"

# Several pods in one file: two documents, a List of two, a comment and an
# empty document in between. Line numbers below are those of metadata.name.
SEVERAL = """\
# pods for CI
apiVersion: v1
kind: Pod
metadata:
  namespace: shop
  name: fits
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]
---
---
apiVersion: v1
kind: Pod
metadata:
  name: huge-1
  namespace: shop
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: "64"}}}]
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: "huge-2", namespace: shop}
  spec:
    containers: [{name: c, image: nginx, resources: {requests: {memory: 1Ti}}}]
- apiVersion: v1
  kind: Pod
  metadata:
    labels: {app: x}
    name: gated
    namespace: shop
  spec:
    schedulingGates: [{name: example.com/wait}]
    containers: [{name: c, image: nginx}]
"""
LINES = {"shop/fits": 6, "shop/huge-1": 14, "shop/huge-2": 24, "shop/gated": 31}
FAILING = {"shop/huge-1", "shop/huge-2", "shop/gated"}


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def several(tmp_path) -> str:
    path = tmp_path / "several.yaml"
    path.write_text(SEVERAL)
    return str(path)


def document(*args) -> dict:
    return json.loads(run(*args, "-o", "json", "--tie-break", "name").stdout)


# -- line tracking in the fixture reader --------------------------------------------
def test_pod_files_are_read_with_the_line_of_each_name(several):
    objects = read_objects([several], lines=True)
    got = {f"{o['metadata']['namespace']}/{o['metadata']['name']}": origin.line for o, origin in objects}
    assert got == LINES
    assert [origin.document for _, origin in objects] == [1, 3, 4, 4]


def test_snapshots_are_read_without_lines(several):
    assert all(origin.line is None for _, origin in read_objects([several]))


def test_json_pod_files_have_lines_too(tmp_path):
    path = tmp_path / "pod.json"
    path.write_text('{"apiVersion": "v1", "kind": "Pod",\n "metadata": {\n  "name": "p"}}\n')
    [(_, origin)] = read_objects([str(path)], lines=True)
    assert origin.line == 3


def test_an_object_without_a_name_has_no_line(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata: {generateName: p-}\n")
    [(_, origin)] = read_objects([str(path)], lines=True)
    assert origin.line is None


# Plain YAML scalars that stay strings: YAML 1.1 reads `no`, `on`, `y`... as
# booleans and `null` as nothing (a pod so named is refused, not located).
_YAML_WORDS = {"y", "yes", "n", "no", "on", "off", "true", "false", "null"}
_names = st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True).filter(lambda n: n not in _YAML_WORDS)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(_names, st.integers(0, 3), st.booleans()), min_size=1, max_size=6))
def test_the_line_found_is_the_line_of_the_name(tmp_path_factory, pods):
    docs = []
    for name, padding, name_first in pods:
        meta = [f"  name: {name}", "  namespace: ns"]
        if not name_first:
            meta.reverse()
        docs.append("\n".join(["# c"] * padding + ["apiVersion: v1", "kind: Pod", "metadata:", *meta]))
    text = "\n---\n".join(docs) + "\n"
    path = tmp_path_factory.mktemp("lines") / "pods.yaml"
    path.write_text(text)
    lines = text.splitlines()
    objects = read_objects([str(path)], lines=True)
    assert len(objects) == len(pods)
    for obj, origin in objects:
        assert lines[origin.line - 1] == f"  name: {obj['metadata']['name']}"


def test_the_document_says_where_each_pod_came_from(several):
    doc = document("explain", several, "--snapshot", CLUSTER)
    assert {p["pod"]: p["source"] for p in doc["pods"]} == {
        pod: {"file": several, "line": line} for pod, line in LINES.items()}


def test_pending_pods_of_a_snapshot_name_their_file():
    doc = document("explain", "--snapshot", CLUSTER)
    assert [p["source"] for p in doc["pods"]] == [{"file": str(Path(CLUSTER) / "pending.yaml")}]


# -- JUnit ------------------------------------------------------------------------------
def _validate(xml: str) -> None:
    import xmlschema

    xmlschema.XMLSchema(str(XSD)).validate(xml)


def _cases(xml: str) -> dict:
    import xml.etree.ElementTree as ET

    root = ET.fromstring(xml)
    return {c.get("name"): c for c in root.iter("testcase")}, root


def test_junit_validates_and_fails_exactly_the_failing_pods(several):
    r = run("explain", several, "--snapshot", CLUSTER, "-o", "junit", "--tie-break", "name")
    assert r.exit_code == 1
    _validate(r.stdout)
    doc = document("explain", several, "--snapshot", CLUSTER)
    cases, root = _cases(r.stdout)
    assert list(cases) == [p["pod"] for p in doc["pods"]]  # evaluation order
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "3", "0")
    for p in doc["pods"]:
        failure = cases[p["pod"]].find("failure")
        if p["pod"] in FAILING:
            assert failure.get("type") == p["status"]
            assert failure.get("message") == p["message"]  # the exact FailedScheduling text
            assert failure.text.startswith(p["message"])
            assert failure.text.endswith(f"{several}:{LINES[p['pod']]}")
        else:
            assert failure is None
            assert cases[p["pod"]].find("system-out").text.startswith("Scheduled on ")
    assert cases["shop/gated"].find("failure").get("type") == "Gated"


def test_junit_of_every_example_pod_and_of_simulate_validates():
    r = run("explain", *sorted(str(p) for p in PODS.glob("*.yaml")), "--snapshot", CLUSTER, "-o", "junit")
    assert r.exit_code == 1
    _validate(r.stdout)
    sim = ROOT / "fixtures" / "simulate"
    r = run("simulate", str(sim / "deploy.yaml"), "--snapshot", str(sim / "cluster.yaml"), "-o", "junit")
    _validate(r.stdout)
    cases, root = _cases(r.stdout)
    assert root.find("testsuite").get("name") == "kschedx simulate"
    assert all(c.get("classname") == "kschedx.simulate" for c in cases.values())


def test_a_pod_placed_by_preemption_passes_as_the_exit_code_says():
    r = run("explain", "--snapshot", str(ROOT / "fixtures" / "preemption"), "-o", "junit")
    assert r.exit_code == 0
    cases, _ = _cases(r.stdout)
    [case] = cases.values()
    assert case.find("failure") is None
    assert "schedulable by preemption: nominated" in case.find("system-out").text


def test_junit_escapes_what_xml_cannot_carry():
    doc = {"mode": "explain", "pods": [{"pod": "ns/a<&>\"", "status": "Error", "message": "bad \x01 <thing> & \"q\"\nx"}]}
    xml = to_junit(doc)
    _validate(xml)
    cases, _ = _cases(xml)
    assert cases['ns/a<&>"'].find("failure").get("message") == "bad \ufffd <thing> & \"q\"\nx"


# -- GitHub Actions annotations -----------------------------------------------------
def test_github_annotates_each_failing_pod_on_the_line_of_its_name(several):
    r = run("explain", several, "--snapshot", CLUSTER, "-o", "github")
    assert r.exit_code == 1
    doc = document("explain", several, "--snapshot", CLUSTER)
    messages = {p["pod"]: p for p in doc["pods"]}
    lines = r.stdout.splitlines()
    errors = [line for line in lines if line.startswith("::")]
    assert len(errors) == len(FAILING)
    for line in errors:
        m = re.fullmatch(r"::error file=([^,]*),line=(\d+),title=([^:]*)::(.*)", line)
        assert m, line
        pod = m.group(3).replace("%2C", ",").split(" is ")[0]
        assert pod in FAILING
        assert m.group(1) == several.replace(":", "%3A").replace(",", "%2C")
        assert int(m.group(2)) == LINES[pod]
        assert SEVERAL.splitlines()[LINES[pod] - 1].lstrip(" -").startswith(("name:", "metadata: {name:"))
        assert m.group(4) == messages[pod]["message"]
        assert m.group(3) == f"{pod} is {messages[pod]['status']}"
    assert lines[-1] == "kschedx explain (kube-scheduler v1.37.2): 3 of 4 pod(s) cannot be scheduled"


def test_github_escapes_workflow_command_data():
    pod = {"pod": "ns/p", "status": "Unschedulable", "message": "100% full,\nreally: yes\r",
           "source": {"file": "a,b:c.yaml", "line": 3}}
    assert annotation(pod) == ("::error file=a%2Cb%3Ac.yaml,line=3,title=ns/p is Unschedulable::"
                               "100%25 full,%0Areally: yes%0D")


def test_github_without_a_file_annotates_the_run():
    doc = {"mode": "simulate", "pods": [{"pod": "ns/p", "status": "Gated", "message": "waiting"},
                                        {"pod": "ns/q", "status": "Scheduled", "message": None}]}
    assert to_github(doc) == "::error title=ns/p is Gated::waiting\nkschedx simulate: 1 of 2 pod(s) cannot be scheduled\n"


# -- TAP --------------------------------------------------------------------------------
def _tap(text: str):
    """A strict reading of TAP 13: version, plan, numbered points, YAML blocks."""
    lines = text.splitlines()
    assert lines[0] == "TAP version 13"
    plan = re.fullmatch(r"1\.\.(\d+)", lines[1])
    assert plan
    points, i = [], 2
    while i < len(lines):
        if lines[i].startswith("# "):  # a comment (the scheduler reproduced)
            i += 1
            continue
        m = re.fullmatch(r"(ok|not ok) (\d+) - (.*)", lines[i])
        assert m, lines[i]
        assert int(m.group(2)) == len(points) + 1
        assert not re.search(r"(?<!\\)#", m.group(3))  # no accidental directive
        block = None
        i += 1
        if i < len(lines) and lines[i] == "  ---":
            end = lines.index("  ...", i)
            block = yaml.safe_load("\n".join(line[2:] for line in lines[i + 1:end]))
            i = end + 1
        points.append((m.group(1) == "ok", m.group(3), block))
    assert len(points) == int(plan.group(1))
    return points


def test_tap_one_point_per_pod_with_the_message(several):
    r = run("explain", several, "--snapshot", CLUSTER, "-o", "tap")
    assert r.exit_code == 1
    doc = document("explain", several, "--snapshot", CLUSTER)
    points = _tap(r.stdout)
    for (ok, description, block), p in zip(points, doc["pods"]):
        assert description.startswith(p["pod"] + ": ")
        assert ok == (p["pod"] not in FAILING)
        if not ok:
            assert block == {"status": p["status"], "message": p["message"], "file": several,
                             "line": LINES[p["pod"]]}


def test_tap_escapes_hash_and_keeps_one_line():
    doc = {"pods": [{"pod": "ns/a#b", "status": "Scheduled", "selectedNode": "n#1\nx"},
                    {"pod": "ns/c", "status": "Error", "message": "it's: {broken} # really\nyes"}]}
    points = _tap(to_tap(doc))
    assert points[0] == (True, r"ns/a\#b: Scheduled on n\#1 x", None)
    assert points[1][2] == {"status": "Error", "message": "it's: {broken} # really\nyes"}


def test_tap_of_no_pods_is_an_empty_plan():
    assert to_tap({"pods": []}) == "TAP version 13\n1..0\n"


def test_every_ci_format_names_the_scheduler_reproduced(several):
    """--kube-version and --feature-gates show in junit, github and tap."""
    args = ("explain", several, "--snapshot", CLUSTER, "--kube-version", "1.35", "--feature-gates",
            "NodeDeclaredFeatures=true")
    want = "kube-scheduler v1.35.4 with feature gates NodeDeclaredFeatures=true"
    assert run(*args, "-o", "github").stdout.splitlines()[-1].startswith(f"kschedx explain ({want}): ")
    assert run(*args, "-o", "tap").stdout.splitlines()[2] == f"# {want}"
    xml = run(*args, "-o", "junit").stdout
    _validate(xml)
    _, root = _cases(xml)
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert (props["kubernetes"], props["kubeVersion"], props["featureGates"]) == (
        "v1.35.4", "1.35", "NodeDeclaredFeatures=true")


def test_ci_formats_render_the_json_document_exactly(several):
    """Same document, no second scheduling path: rendering the -o json
    document gives the CLI's own output."""
    args = ("explain", several, "--snapshot", CLUSTER, "--tie-break", "name")
    doc = document(*args)
    assert run(*args, "-o", "junit").stdout == to_junit(doc)
    assert run(*args, "-o", "github").stdout == to_github(doc)
    assert run(*args, "-o", "tap").stdout == to_tap(doc)
