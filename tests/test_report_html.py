"""--report FILE.html: one self-contained page built from the result document,
written atomically; loaded in a real headless Chromium (skipped, saying why,
where none is installed)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import chromium
from kschedx.cli.main import main
from kschedx.commands.explain import explain
from kschedx.commands.load import load_workload
from kschedx.commands.simulate import simulate
from kschedx.render import html as report

ROOT = Path(__file__).resolve().parent.parent
CLUSTER = str(ROOT / "fixtures" / "cluster")
PODS = ROOT / "fixtures" / "pods"
SIM = ROOT / "fixtures" / "simulate"

CHROMIUM = chromium.find_chromium()
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium on PATH (chromium, chromium-browser, google-chrome): install Debian's chromium "
           "package (apt-get install chromium; .ci/run does) to load the HTML report in a real browser")


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def explain_report(tmp_path, *pods) -> tuple[str, object]:
    path = str(tmp_path / "report.html")
    r = run("explain", *(pods or sorted(str(p) for p in PODS.glob("*.yaml"))), "--snapshot", CLUSTER,
            "--tie-break", "name", "--report", path)
    return path, r


def embedded_data(page: str) -> dict:
    m = re.search(r'<script type="application/json" id="kschedx-data">(.*?)</script>', page, re.S)
    return json.loads(m.group(1))


def synthetic_doc(nodes: int) -> dict:
    """One unschedulable pod on `nodes` nodes: a third fail TaintToleration
    (every other one also NodeResourcesFit, not reached), a third
    NodeResourcesFit, the rest NodeAffinity."""
    plugins = ["NodeUnschedulable", "NodeAffinity", "TaintToleration", "NodeResourcesFit"]
    out = []
    for i in range(nodes):
        failing = {0: ["TaintToleration"] + (["NodeResourcesFit"] if i % 2 else []), 1: ["NodeResourcesFit"],
                   2: ["NodeAffinity"]}[i % 3]
        filters = []
        for p in plugins:
            if p in failing:
                reasons = {"NodeResourcesFit": ["Insufficient cpu"], "TaintToleration":
                           ["node(s) had untolerated taint(s)"], "NodeAffinity":
                           ["node(s) didn't match Pod's node affinity/selector"]}[p]
                filters.append({"plugin": p, "code": "Unschedulable", "reasons": reasons})
            else:
                filters.append({"plugin": p, "code": "Success", "reasons": []})
        first = next(p for p in plugins if p in failing)
        out.append({"name": f"node-{i:05d}", "feasible": False, "filters": filters, "firstFailure": first})
    pod = {"pod": "default/big", "uid": "u", "priority": 0, "requests": {"cpu": "64"},
           "status": "Unschedulable", "selectedNode": None, "topNodes": [], "message": f"0/{nodes} nodes are available",
           "preFilter": [], "nodes": out, "preemption": None}
    return {"apiVersion": "kschedx/v1", "kind": "SchedulingResult", "mode": "explain", "profile": "default-scheduler",
            "tieBreak": "name", "reference": {"kubernetes": "v1.35.4"}, "notEvaluated": [], "pods": [pod]}


# -- the file ---------------------------------------------------------------------------
def test_report_is_written_and_the_exit_code_and_output_are_unchanged(tmp_path):
    path, r = explain_report(tmp_path)
    assert r.exit_code == 1  # too-big.yaml is unschedulable, canary.yaml gated
    plain = run("explain", *sorted(str(p) for p in PODS.glob("*.yaml")), "--snapshot", CLUSTER,
                "--tie-break", "name")
    assert r.stdout == plain.stdout
    assert f"report written to {path}" in r.stderr
    page = Path(path).read_text(encoding="utf-8")
    assert "✗ Unschedulable" in page and "ml/etl-nightly-29012740-x7vbn" in page
    assert "0/5 nodes are available: 1 node(s) had untolerated taint(s)" in page
    assert os.stat(path).st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_report_says_why_the_winner_won_as_the_human_output_does(tmp_path):
    path, _ = explain_report(tmp_path, str(PODS / "web.yaml"))
    human = run("explain", str(PODS / "web.yaml"), "--snapshot", CLUSTER, "--tie-break", "name").stdout
    [why] = [line.strip() for line in human.splitlines() if line.strip().startswith("why worker-a2")]
    assert f"<p>{why}</p>" in Path(path).read_text(encoding="utf-8")


def test_report_needs_no_network(tmp_path):
    path, _ = explain_report(tmp_path)
    page = Path(path).read_text(encoding="utf-8")
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    for attr, value in re.findall(r'\b(src|href|action)="([^"]*)"', page):
        assert value.startswith(("#", "data:")), (attr, value)
    assert not re.search(r"@import|url\(", page)


def test_report_holds_the_same_document_as_json(tmp_path):
    path, _ = explain_report(tmp_path)
    doc = json.loads(run("explain", *sorted(str(p) for p in PODS.glob("*.yaml")), "--snapshot", CLUSTER,
                         "--tie-break", "name", "-o", "json").stdout)
    assert Path(path).read_text(encoding="utf-8") == report.to_html(doc)


def test_a_report_path_that_cannot_be_written_is_exit_3_before_any_work(tmp_path):
    """The same rule as `snapshot -o` and as a write that fails late: exit 3."""
    r = CliRunner().invoke(main, ["explain", str(PODS / "web.yaml"), "--snapshot", CLUSTER,
                                  "--report", str(tmp_path / "missing" / "r.html")])
    assert r.exit_code == 3
    assert r.stderr.strip().splitlines() == [
        f"kschedx: error: cannot write {tmp_path / 'missing' / 'r.html'}: no such directory: "
        f"{tmp_path / 'missing'}"]
    assert r.stdout == ""  # nothing evaluated
    r = CliRunner().invoke(main, ["simulate", str(PODS / "web.yaml"), "--snapshot", CLUSTER,
                                  "--report", str(tmp_path)])
    assert r.exit_code == 3 and "it is a directory" in r.stderr


def test_a_failed_write_leaves_no_file_and_keeps_the_old_one(tmp_path, monkeypatch):
    path = tmp_path / "report.html"
    path.write_text("previous report")

    def broken(doc):
        raise RuntimeError("renderer broke")

    monkeypatch.setattr(report, "to_html", broken)
    r = CliRunner().invoke(main, ["explain", str(PODS / "web.yaml"), "--snapshot", CLUSTER,
                                  "--report", str(path)])
    assert r.exit_code == 70
    assert path.read_text() == "previous report"
    assert sorted(os.listdir(tmp_path)) == ["report.html"]  # no partial file left behind


def test_names_cannot_break_out_of_the_page():
    doc = synthetic_doc(3)
    evil = '</script><script>alert(1)</script><b>"x"'
    doc["pods"][0]["pod"] = "default/" + evil
    doc["pods"][0]["nodes"][0]["name"] = evil
    page = report.to_html(doc)
    assert "<script>alert(1)" not in page
    assert "&lt;/script&gt;&lt;script&gt;alert(1)" in page
    data = embedded_data(page)
    names = [n[0] for g in data["pods"][0]["groups"] for n in g["nodes"]]
    assert evil in names


def test_thousands_of_nodes_are_grouped_by_first_failure():
    doc = synthetic_doc(3000)
    plugins, skipped = report.filter_plugins(doc["pods"][0])
    assert plugins == ["NodeUnschedulable", "NodeAffinity", "TaintToleration", "NodeResourcesFit"] and not skipped
    groups = report.heat_groups(doc["pods"][0], plugins)
    assert [(g["first"], g["reasons"], len(g["nodes"])) for g in groups] == [
        ("NodeAffinity", ["node(s) didn't match Pod's node affinity/selector"], 1000),
        ("NodeResourcesFit", ["Insufficient cpu"], 1000),
        ("TaintToleration", ["node(s) had untolerated taint(s)"], 1000),
    ]
    taint = groups[2]
    assert taint["failing"] == [0, 0, 1000, 500]  # half of them also fail NodeResourcesFit
    assert taint["nodes"][1] == ["node-00003", "SSUU", {"2": "node(s) had untolerated taint(s)",
                                                        "3": "Insufficient cpu"}]
    page = report.to_html(doc)
    assert page.count('<tr class="group"') == 3
    assert "<tr class=\"node\"" not in page  # node rows are drawn by the page on demand


def two_pods_over_budget(monkeypatch) -> dict:
    """A scheduled pod and a failing one, each on 300 nodes, with room for
    300 node rows: the failing pod's nodes are kept."""
    monkeypatch.setattr(report, "NODE_ROWS_BUDGET", 300)
    doc = synthetic_doc(300)
    ok = json.loads(json.dumps(doc["pods"][0]))
    ok.update(pod="default/fits", status="Scheduled", selectedNode="node-00000", message=None)
    doc["pods"].insert(0, ok)
    return doc


def test_past_the_node_row_budget_failing_pods_keep_their_nodes(monkeypatch):
    data = embedded_data(report.to_html(two_pods_over_budget(monkeypatch)))
    fits, big = data["pods"]
    assert all(g["nodes"] == [] and g["omitted"] for g in fits["groups"])
    assert sum(g["omitted"] for g in fits["groups"]) == 300
    assert sum(len(g["nodes"]) for g in big["groups"]) == 300 and not any("omitted" in g for g in big["groups"])


def test_simulate_report_shows_placements_and_utilization(tmp_path):
    path = str(tmp_path / "sim.html")
    r = run("simulate", str(SIM / "deploy.yaml"), "--snapshot", str(SIM / "cluster.yaml"), "--tie-break", "name",
            "--report", path)
    doc = json.loads(run("simulate", str(SIM / "deploy.yaml"), "--snapshot", str(SIM / "cluster.yaml"),
                         "--tie-break", "name", "-o", "json", "--detail", "failures").stdout)
    page = Path(path).read_text(encoding="utf-8")
    assert page == report.to_html(doc)  # a report keeps per-node verdicts of unplaced pods
    assert 'class="heat"' in page
    assert r.exit_code == (1 if any(report.pod_fails(p) for p in doc["pods"]) else 0)
    assert page.count('<tr data-changed=') == len(doc["utilization"])
    util = page[page.index('id="util-table"'):]
    for u in doc["utilization"]:
        assert f'<th scope="row">{u["node"]}</th>' in util
    assert len(re.findall(r'<a href="#pod-\d+">', page)) == len(doc["pods"])


def test_detail_failures_keeps_the_verdicts_of_unplaced_pods_only():

    def doc(detail):
        w = load_workload([str(SIM / "cluster.yaml")], [str(SIM / "deploy.yaml")])
        return simulate(w, tie_break="name", detail=detail)

    full, failures = doc("full"), doc("failures")
    assert failures["detail"] == "failures"
    placed = [p for p in full["pods"] if p["placedNode"]]
    unplaced = [p for p in full["pods"] if not p["placedNode"]]
    assert placed and unplaced
    by_name = {p["pod"]: p for p in failures["pods"]}
    for p in placed:
        assert by_name[p["pod"]]["nodes"] == []
    for p in unplaced:
        assert by_name[p["pod"]]["nodes"] == p["nodes"] != []
    strip = [{k: v for k, v in p.items() if k != "nodes"} for p in full["pods"]]
    assert strip == [{k: v for k, v in p.items() if k != "nodes"} for p in failures["pods"]]


# Golden cases with PreFilter rejections, PreFilterResult, Error status,
# preemption and gates: every shape of verdict the page draws.
VARIED_CASES = ("case-1-106", "case-1-114", "dra-2-3", "case-1-100", "case-1-10")


def golden_doc(name: str, mode: str = "explain") -> dict:

    w = load_workload([str(ROOT / "tests" / "golden" / "cases" / f"{name}.yaml")])
    return explain(w, tie_break="name") if mode == "explain" else simulate(w, tie_break="name")


@pytest.mark.parametrize("name", VARIED_CASES)
def test_every_kind_of_verdict_renders(name):
    doc = golden_doc(name)
    page = report.to_html(doc)
    for p in doc["pods"]:
        assert report.escape(p["pod"]) in page
        if p.get("message"):
            assert report.escape(p["message"]) in page
    assert len(embedded_data(page)["pods"]) == len(doc["pods"])


def _node_exporter_doc() -> dict:
    """A DaemonSet pod: its PreFilterResult (NodeAffinity, matchFields
    metadata.name) leaves 8 of 9 nodes out."""
    r = run("explain", "--snapshot", str(ROOT / "tests" / "golden" / "cases" / "case-1-53.yaml"),
            "-l", "app=node-exporter", "--tie-break", "name", "-o", "json")
    doc = json.loads(r.stdout)
    assert [p["preFilterResult"]["plugins"] for p in doc["pods"]] == [["NodeAffinity"]]
    return doc


def test_nodes_prefilter_left_out_are_grouped_under_the_reported_status():
    doc = _node_exporter_doc()
    pod = doc["pods"][0]
    plugins, _ = report.filter_plugins(pod)
    groups = report.heat_groups(pod, plugins)
    # As the human report and the FailedScheduling message say: the
    # PreFilterResult's status, no Filter plugin's reasons.
    assert [(g["first"], g["reasons"], g["reported"], len(g["nodes"])) for g in groups] == [
        (None, [], None, 1),
        ("NodeAffinity", ["node(s) didn't satisfy plugin(s) [NodeAffinity]"], None, 8),
    ]
    page = report.to_html(doc)
    assert "8 nodes · NodeAffinity · node(s) didn&#x27;t satisfy plugin(s) [NodeAffinity]" in page
    assert "node affinity/selector</th>" not in page
    # No Filter cell is the failure reported: PreFilter left the nodes out.
    assert "(the failure reported)" not in page and 'class="first"' not in page
    assert 'title="NodeAffinity: fails on 8 of 8 node(s)"' in page
    assert [g["reported"] for g in embedded_data(page)["pods"][0]["groups"]] == [None, None]


def test_the_pod_header_says_prefilter_narrowed_the_candidates():
    page = report.to_html(_node_exporter_doc())
    assert ('<p class="prefilter">PreFilter (NodeAffinity) narrowed the candidates to 1 node: '
            'ip-10-0-28-218.ec2.internal</p>') in page
    # A pod without a PreFilterResult has no such line.
    assert 'class="prefilter"' not in report.to_html(synthetic_doc(3))


def test_a_filter_failure_stays_the_reported_one():
    # Groups whose nodes a Filter plugin rejected keep that plugin's cell marked.
    doc = synthetic_doc(6)
    page = report.to_html(doc)
    assert page.count("(the failure reported)") == 3
    assert sorted(g["reported"] for g in embedded_data(page)["pods"][0]["groups"]) == \
        ["NodeAffinity", "NodeResourcesFit", "TaintToleration"]


# -- in a real browser -------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser():
    b = chromium.Browser(CHROMIUM)
    try:
        yield b
    finally:
        b.close()


def _non_blank(png: bytes) -> tuple[int, float]:
    """(distinct colours, share of non-white pixels) of a screenshot."""
    width, height, rows = chromium.png_pixels(png)
    colours, ink = set(), 0
    for row in rows:
        for x in range(0, len(row), 3):
            px = row[x:x + 3]
            colours.add(px)
            ink += px != b"\xff\xff\xff"
    return len(colours), ink / (width * height)


@needs_chromium
def test_explain_report_in_chromium(tmp_path, browser):
    path, _ = explain_report(tmp_path)
    browser.events.clear()
    browser.load(path)
    verdicts = browser.evaluate(
        "Array.from(document.querySelectorAll('details.pod > summary')).map(s => s.innerText)")
    assert any("ml/etl-nightly-29012740-x7vbn" in v and "✗ Unschedulable" in v for v in verdicts)
    assert any("shop/web-6d4cf56db6-8xq2v" in v and "Scheduled on worker-a2" in v for v in verdicts)
    # The failing pod's section is open, its FailedScheduling message shown.
    shown = browser.evaluate("document.querySelector('details.pod.fail[open] pre.message').innerText")
    assert shown.startswith("0/5 nodes are available: ")
    colours, ink = _non_blank(browser.screenshot())
    assert colours > 20 and ink > 0.02, (colours, ink)
    assert browser.problems() == []
    assert all(u.startswith("file://") for u in browser.requests()), browser.requests()


@needs_chromium
def test_every_kind_of_verdict_loads_in_chromium(tmp_path, browser):
    for name in VARIED_CASES:
        doc = golden_doc(name)
        path = tmp_path / f"{name}.html"
        path.write_text(report.to_html(doc), encoding="utf-8")
        browser.events.clear()
        browser.load(str(path))
        shown = browser.evaluate("Array.from(document.querySelectorAll('details.pod')).map(d => d.innerText)")
        assert len(shown) == len(doc["pods"])
        for text, p in zip(shown, doc["pods"]):
            assert p["pod"] in text and report.verdict(p)[1] in text
        # Every group expands without an error.
        browser.evaluate("document.querySelectorAll('details.pod').forEach(d => d.open = true);"
                         "document.querySelectorAll('tr.group').forEach(r => r.click())")
        assert browser.problems() == [], name


@needs_chromium
def test_heat_map_groups_expand_in_chromium(tmp_path, browser):
    path = tmp_path / "big.html"
    path.write_text(report.to_html(synthetic_doc(2500)), encoding="utf-8")
    browser.events.clear()
    browser.load(str(path))
    count = "document.querySelectorAll('table.heat tr.node').length"
    assert browser.evaluate(count) == 0
    group = "Array.from(document.querySelectorAll('tr.group')).find(r => r.cells[0].innerText.includes('TaintTol'))"
    browser.evaluate(f"{group}.click()")
    assert browser.evaluate(count) == 200
    assert browser.evaluate(f"{group}.getAttribute('aria-expanded')") == "true"
    first = browser.evaluate("Array.from(document.querySelector('tr.node').cells).map(c => c.className)")
    assert first == ["", "pass", "pass", "first", "pass"]  # node-00000: TaintToleration only
    second = browser.evaluate("Array.from(document.querySelectorAll('tr.node')[1].cells).map(c => c.className)")
    assert second == ["", "pass", "pass", "first", "also"]  # node-00003: NodeResourcesFit too, not reached
    title = browser.evaluate("document.querySelectorAll('tr.node')[1].cells[4].title")
    assert title == "NodeResourcesFit: ✗ Unschedulable — Insufficient cpu"
    browser.evaluate("document.querySelector('tr.more button').click()")
    assert browser.evaluate(count) == 400
    browser.evaluate(f"{group}.click()")
    assert browser.evaluate(count) == 0
    assert browser.problems() == []


@needs_chromium
def test_nodes_prefilter_left_out_mark_no_filter_cell_in_chromium(tmp_path, browser):
    path = tmp_path / "daemonset.html"
    path.write_text(report.to_html(_node_exporter_doc()), encoding="utf-8")
    browser.events.clear()
    browser.load(str(path))
    group = "Array.from(document.querySelectorAll('tr.group')).find(r => r.cells[0].innerText.includes('8 nodes'))"
    browser.evaluate(f"{group}.click()")
    classes = browser.evaluate("Array.from(document.querySelectorAll('tr.node')).map(r => "
                               "Array.from(r.cells).map(c => c.className).join(' '))")
    assert len(classes) == 8 and all("first" not in c and "also" in c for c in classes)
    assert browser.problems() == []


@needs_chromium
def test_a_group_whose_nodes_were_left_out_says_so_in_chromium(tmp_path, browser, monkeypatch):
    path = tmp_path / "budget.html"
    path.write_text(report.to_html(two_pods_over_budget(monkeypatch)), encoding="utf-8")
    browser.events.clear()
    browser.load(str(path))
    browser.evaluate("document.querySelector('#pod-0').open = true")
    browser.evaluate("document.querySelector('#pod-0 tr.group').click()")
    note = browser.evaluate("document.querySelector('#pod-0 tr.more').innerText")
    assert note.startswith("node list left out of this report (")
    assert browser.evaluate("document.querySelectorAll('#pod-0 tr.node').length") == 0
    assert browser.problems() == []


@needs_chromium
def test_simulate_report_sorts_and_filters_in_chromium(tmp_path, browser):
    path = str(tmp_path / "sim.html")
    run("simulate", str(SIM / "deploy.yaml"), "--snapshot", str(SIM / "cluster.yaml"), "--tie-break", "name",
        "--report", path)
    browser.events.clear()
    browser.load(path)
    names = "Array.from(document.querySelectorAll('#util-table tbody tr')).filter(r => !r.hidden)" \
            ".map(r => r.cells[0].innerText)"
    assert browser.evaluate(names) == ["node-a", "node-b", "node-c"]
    browser.evaluate("document.querySelectorAll('#util-table th')[2].click()")  # memory, ascending
    browser.evaluate("document.querySelectorAll('#util-table th')[2].click()")  # descending
    after = browser.evaluate(
        "Array.from(document.querySelectorAll('#util-table tbody tr')).map(r => parseFloat(r.cells[2].dataset.sort))")
    assert after == sorted(after, reverse=True)
    browser.evaluate("const c = document.querySelector('input.changed'); c.checked = true; "
                     "c.dispatchEvent(new Event('change'))")
    assert browser.evaluate(names) == ["node-a", "node-b"] or browser.evaluate(names) == ["node-b", "node-a"]
    browser.evaluate("const f = document.querySelector('input.filter[data-table=\"util-table\"]'); "
                     "f.value = 'node-b'; f.dispatchEvent(new Event('input'))")
    assert browser.evaluate(names) == ["node-b"]
    rows = "Array.from(document.querySelectorAll('#placement-table tbody tr')).filter(r => !r.hidden).length"
    total = browser.evaluate(rows)
    browser.evaluate("const p = document.querySelector('input.filter[data-table=\"placement-table\"]'); "
                     "p.value = 'unschedulable'; p.dispatchEvent(new Event('input'))")
    assert 0 < browser.evaluate(rows) < total
    assert browser.problems() == []


# -- CI installs the browser, or says why not ----------------------------------------------
def _fake_tools(tmp_path, **scripts) -> dict:
    """An environment whose PATH holds only the given fake commands."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True)
    for name, body in scripts.items():
        tool = bin_dir / name
        tool.write_text(f"#!/bin/sh\n{body}\n")
        tool.chmod(0o755)
    return {"PATH": str(bin_dir), "HOME": str(tmp_path)}


def _install(env):
    import shutil
    import subprocess

    return subprocess.run([shutil.which("bash"), str(ROOT / ".ci" / "install-chromium")], env=env,
                          capture_output=True, text=True, timeout=60)


def test_ci_installs_chromium_when_missing(tmp_path):
    log = tmp_path / "apt.log"
    env = _fake_tools(tmp_path, id="echo 0", **{"apt-get": f'echo "$@" >> {log}'})
    r = _install(env)
    assert r.returncode == 0 and "installing chromium" in r.stdout
    assert log.read_text().splitlines() == ["update -qq", "install -y -qq chromium"]


def test_ci_warns_and_goes_on_when_chromium_cannot_be_installed(tmp_path):
    env = _fake_tools(tmp_path, id="echo 0", **{"apt-get": "exit 100"})
    r = _install(env)
    assert r.returncode == 0
    assert "warning: could not install chromium; the HTML report browser tests will be skipped" in r.stderr
    r = _install(_fake_tools(tmp_path / "user", id="echo 1000"))
    assert r.returncode == 0 and "needs root and apt-get" in r.stderr


def test_ci_leaves_an_installed_chromium_alone(tmp_path):
    env = _fake_tools(tmp_path, chromium="true", id="echo 0", **{"apt-get": "exit 100"})
    r = _install(env)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
