"""The human report, built from the result document alone.

Documents here are written by hand (as a later plugin or another mode could
produce them), so the renderer is checked against the schema, not against
whatever the engine happens to produce today.
"""

from __future__ import annotations

import io

from kschedx.render.human import render
from kschedx.render.blocks import ASCII, symbols_for, UNICODE
from kschedx.render.details import details_text


def ok(plugin):
    return {"plugin": plugin, "code": "Success", "reasons": []}


def skip(plugin):
    return {"plugin": plugin, "code": "Skip", "reasons": []}


def fail(plugin, *reasons, code="Unschedulable", details=None):
    d = {"plugin": plugin, "code": code, "reasons": list(reasons)}
    if details is not None:
        d["details"] = details
    return d


def score(plugin, raw, normalized, weight=1, details=None, skipped=False):
    d = {"plugin": plugin, "raw": raw, "normalized": normalized, "weight": weight, "weighted": normalized * weight}
    if skipped:
        d["skipped"] = True
    if details is not None:
        d["details"] = details
    return d


def node(name, filters, scores=None):
    failed = next((f for f in filters if f["code"] not in ("Success", "Skip")), None)
    n = {"name": name, "feasible": failed is None, "filters": filters,
         "firstFailure": failed["plugin"] if failed else None}
    if failed:
        n["status"] = {"code": failed["code"], "plugin": failed["plugin"], "reasons": failed["reasons"]}
    if scores is not None:
        n["scores"] = scores
        n["totalScore"] = sum(s["weighted"] for s in scores)
    return n


def pod(nodes, status="Scheduled", selected=None, top=None, message=None, **extra):
    p = {"pod": "default/web", "uid": "u", "priority": 0, "requests": {"cpu": "1", "memory": "512Mi"},
         "status": status, "selectedNode": selected, "topNodes": top or ([selected] if selected else []),
         "message": message, "preFilter": [], "nodes": nodes, "preemption": None}
    p.update(extra)
    return p


def doc(*pods, not_evaluated=(), tie_break="name"):
    return {"apiVersion": "kschedx/v1", "kind": "SchedulingResult", "mode": "explain",
            "profile": "default-scheduler", "tieBreak": tie_break, "notEvaluated": list(not_evaluated),
            "pods": list(pods)}


def text(d, **kw):
    out = io.StringIO()
    render(d, out=out, color=False, **kw)
    return out.getvalue()


def rich_text(d, **kw):
    out = io.StringIO()
    render(d, out=out, color=True, **kw)
    return out.getvalue()


SCHEDULED = pod(
    [
        node("node-a", [ok("NodeUnschedulable"), ok("TaintToleration"), fail("NodeResourcesFit", "Insufficient cpu")]),
        node("node-b", [ok("NodeUnschedulable"), ok("TaintToleration"), ok("NodeResourcesFit")],
             [score("TaintToleration", 0, 100, 3), score("NodeResourcesFit", 86, 86)]),
        node("node-c", [ok("NodeUnschedulable"), fail("TaintToleration", "node(s) had untolerated taint(s)",
                                                      code="UnschedulableAndUnresolvable"),
                        fail("NodeResourcesFit", "Insufficient cpu")]),
        node("node-d", [ok("NodeUnschedulable"), ok("TaintToleration"), ok("NodeResourcesFit")],
             [score("TaintToleration", 1, 0, 3), score("NodeResourcesFit", 41, 41)]),
    ],
    selected="node-b",
)


def test_verdict_line_comes_first():
    first = text(doc(SCHEDULED)).splitlines()[0]
    assert first.startswith("default/web  ✓ Scheduled → node-b")
    assert "priority 0 · requests cpu 1, memory 512Mi" in first


def test_matrix_marks_the_reported_failure_and_later_ones():
    out = text(doc(SCHEDULED))
    row_c = next(line for line in out.splitlines() if line.strip().startswith("node-c"))
    assert "✗ node(s) had untolerated taint(s)" in row_c
    assert "(✗ Insufficient cpu)" in row_c  # not reached by kube-scheduler
    assert "(1 more plugin: ✓ on every node: NodeUnschedulable)" in out


def test_colours_carry_the_same_marks():
    out = rich_text(doc(SCHEDULED))
    assert "\x1b[1;31m✗ node(s) had untolerated taint(s)" in out  # bold red: the reported failure
    assert "\x1b[2m(✗ Insufficient cpu)" in out  # dim: not reached


def test_score_table_best_first_with_star_and_margin():
    out = text(doc(SCHEDULED))
    table = out[out.index("  Score"):].splitlines()
    assert [line.split()[:3] for line in table[2:4]] == [["node-b", "★", "386"], ["node-d", "41", "0"]]
    assert "TaintToleration ×3" in out
    assert "ties: none · nodes scored: 2 of 4 · filtered out: node-a (NodeResourcesFit); node-c (TaintToleration)" in out
    assert "why node-b: it leads node-d by 345 (TaintToleration +300, NodeResourcesFit +45)" in out


def test_ties_are_marked_and_explained():
    nodes = [
        node(n, [ok("NodeResourcesFit")], [score("NodeResourcesFit", 50, 50)]) for n in ("n1", "n2", "n3")
    ]
    out = text(doc(pod(nodes, selected="n2", top=["n1", "n2", "n3"]), tie_break="random"))
    assert "tie: 3 nodes share the top score 50 (n1, n2, n3); tie-break random chose n2" in out
    assert next(line for line in out.splitlines() if line.strip().startswith("n1")).split()[1] == "="
    assert next(line for line in out.splitlines() if line.strip().startswith("n2")).split()[1] == "★"


def test_unschedulable_shows_the_message_and_no_score_table():
    p = pod([node("node-a", [fail("NodeResourcesFit", "Insufficient cpu")])], status="Unschedulable",
            message="0/1 nodes are available: 1 Insufficient cpu.")
    out = text(doc(p))
    assert "✗ Unschedulable" in out.splitlines()[0]
    assert "  0/1 nodes are available: 1 Insufficient cpu." in out
    assert "Score" not in out


def test_not_evaluated_is_a_warning_that_the_result_is_incomplete():
    out = text(doc(SCHEDULED, not_evaluated=["VolumeBinding", "InterPodAffinity"]))
    assert out.splitlines()[0] == "⚠ incomplete: kschedx cannot evaluate yet: VolumeBinding, InterPodAffinity."


def test_plugins_skipped_everywhere_are_one_line_not_columns():
    nodes = [node(n, [ok("NodeName"), skip("NodePorts"), fail("NodeAffinity", "nope") if n == "b" else ok("NodeAffinity")],
                  None if n == "b" else [score("ImageLocality", 0, 0), score("BalancedAllocation", 0, 0, skipped=True)])
             for n in ("a", "b")]
    out = text(doc(pod(nodes, selected="a")))
    assert "skipped for this pod (PreFilter returned Skip, nothing to check): NodePorts" in out
    assert "not scoring this pod (PreScore returned Skip): BalancedAllocation" in out
    header = next(line for line in out.splitlines() if line.strip().startswith("Filter"))
    assert "NodePorts" not in header
    score_header = next(line for line in out.splitlines() if line.strip().startswith("Score"))
    assert "BalancedAllocation" not in score_header


def test_gated_pod():
    p = pod([], status="Gated", message="waiting for scheduling gates: [example.com/gate]",
            gate={"plugin": "SchedulingGates", "code": "UnschedulableAndUnresolvable",
                  "reasons": ["waiting for scheduling gates: [example.com/gate]"]})
    out = text(doc(p))
    assert "⏸ Gated" in out.splitlines()[0]
    assert "waiting for scheduling gates: [example.com/gate]" in out
    assert "SchedulingGates" in out


def test_error_status():
    p = pod([], status="Error", message='running PreFilter plugin "Foo": boom')
    out = text(doc(p))
    assert "! Error" in out.splitlines()[0]
    assert 'running PreFilter plugin "Foo": boom' in out


def test_pre_filter_rejection_of_every_node():
    st = {"code": "UnschedulableAndUnresolvable", "plugin": "VolumeBinding",
          "reasons": ["pod has unbound immediate PersistentVolumeClaims"]}
    nodes = [{"name": n, "feasible": False, "filters": [], "firstFailure": "VolumeBinding", "status": st}
             for n in ("a", "b")]
    p = pod(nodes, status="Unschedulable", message="0/2 nodes are available: pod has unbound immediate "
            "PersistentVolumeClaims. not found",
            preFilter=[{"plugin": "VolumeBinding", "code": "UnschedulableAndUnresolvable",
                        "reasons": ["pod has unbound immediate PersistentVolumeClaims"]}])
    out = text(doc(p))
    assert "PreFilter VolumeBinding: ✗ UnschedulableAndUnresolvable: pod has unbound immediate" in out
    assert "no Filter plugin ran: PreFilter VolumeBinding rejected the pod for all 2 nodes" in out


def test_pre_filter_result_narrowing():
    nodes = [
        {**node("a", [ok("NodeAffinity")]), "feasible": False, "firstFailure": "NodeAffinity",
         "status": {"code": "UnschedulableAndUnresolvable", "plugin": "",
                    "reasons": ["node(s) didn't satisfy plugin(s) [NodeAffinity]"]}},
        node("b", [ok("NodeAffinity")], [score("ImageLocality", 0, 0)]),
    ]
    p = pod(nodes, selected="b", preFilterResult={"nodeNames": ["b"], "plugins": ["NodeAffinity"]})
    out = text(doc(p))
    assert "PreFilter (NodeAffinity) narrowed the candidates to 1 node: b" in out
    row_a = next(line for line in out.splitlines() if line.strip().startswith("a "))
    assert "✗ not a candidate" in row_a


def test_a_nominated_node_left_out_reports_its_own_filter_failure():
    # kube-scheduler filters the nominated node before the candidates
    # narrow: its NodeAffinity failure is the one reported, not the
    # PreFilterResult's status.
    affinity = "node(s) didn't match Pod's node affinity/selector"
    nodes = [
        {**node("a", [fail("NodeAffinity", affinity, code="UnschedulableAndUnresolvable")]),
         "status": {"code": "UnschedulableAndUnresolvable", "plugin": "",
                    "reasons": ["node(s) didn't satisfy plugin(s) [NodeAffinity]"]}},
        node("b", [ok("NodeAffinity"), fail("NodeResourcesFit", "Insufficient cpu")]),
        node("n", [fail("NodeAffinity", affinity, code="UnschedulableAndUnresolvable")]),
    ]
    p = pod(nodes, status="Unschedulable", message="0/3 nodes are available",
            preFilterResult={"nodeNames": ["b"], "plugins": ["NodeAffinity"]})
    rows = {line.split()[0]: line for line in text(doc(p)).splitlines() if line.strip()[:2] in ("a ", "b ", "n ")}
    assert "✗ not a candidate" in rows["a"] and f"(✗ {affinity})" in rows["a"]
    assert "nominated, filtered first" in rows["n"] and f"✗ {affinity}" in rows["n"]
    assert f"(✗ {affinity})" not in rows["n"] and "not a candidate" not in rows["n"]


def test_preemption_victims_table():
    nodes = [node(n, [fail("NodeResourcesFit", "Insufficient cpu")]) for n in ("a", "b")]
    p = pod(nodes, status="Unschedulable", selected="b",
            message="0/2 nodes are available: 2 Insufficient cpu.",
            preemption={"code": "Success", "message": None, "nominatedNode": "b", "pdbViolations": 1,
                        "victims": [{"pod": "default/batch-7", "priority": 0},
                                    {"pod": "default/batch-8", "priority": -5}]})
    out = text(doc(p))
    assert "✗ Unschedulable now · preemption nominates b" in out.splitlines()[0]
    assert "preemption: nominated node b, evicting 2 pods (1 PodDisruptionBudget violation)" in out
    rows = [line.split() for line in out.splitlines() if "default/batch" in line]
    assert rows == [["default/batch-7", "0", "b"], ["default/batch-8", "-5", "b"]]


def _wide_cluster(n=30):
    nodes = []
    for i in range(n):
        name = f"node-{i:02d}"
        if i < 20:
            nodes.append(node(name, [fail("NodeResourcesFit", "Insufficient cpu")]))
        elif i < 29:
            nodes.append(node(name, [fail("TaintToleration", "node(s) had untolerated taint(s)")]))
        else:
            nodes.append(node(name, [ok("NodeResourcesFit")], [score("NodeResourcesFit", 10, 10)]))
    return pod(nodes, selected="node-29")


def test_wide_cluster_groups_nodes_by_failure():
    out = text(doc(_wide_cluster()))
    assert "Filter: 30 nodes, grouped by the failure kube-scheduler reports" in out
    rows = [line.split() for line in out.splitlines()]
    assert ["20", "NodeResourcesFit", "✗", "Insufficient", "cpu", "node-00,", "node-01,", "node-02,", "…", "(+17)"] in rows
    assert ["1", "✓", "feasible", "node-29"] in rows
    assert "node-15" not in out


def test_wide_output_names_every_node():
    out = text(doc(_wide_cluster()), wide=True)
    assert all(f"node-{i:02d}" in out for i in range(30))


def test_score_table_is_cut_to_the_best_ten_without_wide():
    nodes = [node(f"n{i:02d}", [ok("NodeResourcesFit")], [score("NodeResourcesFit", i, i)]) for i in range(15)]
    p = pod(nodes, selected="n14")
    out = text(doc(p))
    assert "… 5 more scored nodes (-o wide shows all)" in out
    assert " n04 " not in out and " n05 " in out
    assert " n00 " in text(doc(p), wide=True)


def test_node_view_shows_unknown_plugins_and_details_generically():
    n = node("a", [ok("NodeName"), fail("FancyNewFilter", "node(s) lack sparkle", details={"sparkle": {"have": 1, "want": 3}, "tags": ["x", "y"]})])
    m = node("b", [ok("NodeName"), ok("FancyNewFilter")],
             [score("FancyNewScore", 7, 70, 2, details={"because": [{"term": "t1", "matched": True}]})])
    p = pod([n, m], selected="b")
    out_a = text(doc(p), node="a")
    assert "node a: ✗ filtered out by FancyNewFilter: node(s) lack sparkle" in out_a
    assert "sparkle: have=1 want=3" in out_a and "tags: x, y" in out_a
    out_b = text(doc(p), node="b")
    row = next(line for line in out_b.splitlines() if line.strip().startswith("FancyNewScore"))
    assert row.split()[:5] == ["FancyNewScore", "7", "70", "×2", "140"]
    assert "because: term=t1 matched=true" in row
    assert "rank 1 of 1 ★ selected" in out_b


def test_node_view_for_a_pod_that_never_reached_the_nodes():
    p = pod([], status="Gated", message="waiting for scheduling gates: [g]")
    assert "Gated" in text(doc(p), node="a")


def test_several_pods_end_with_a_summary():
    unsched = pod([node("a", [fail("NodeResourcesFit", "Insufficient cpu")])], status="Unschedulable", message="m")
    out = text(doc(SCHEDULED, unsched, pod([], status="Gated", message="g")))
    assert out.splitlines()[-1] == "3 pods: 1 scheduled, 1 unschedulable, 1 gated"


def test_no_pods():
    assert "No pods to evaluate" in text(doc())


def test_details_text():
    assert details_text(None) == ""
    assert details_text({"insufficient": [{"resource": "cpu", "requested": 2}]}) == "insufficient: resource=cpu requested=2"
    assert details_text({"a": {"b": {"c": 1}}}) == "a: b={c=1}"
    assert details_text({"ports": ["TCP/80", "TCP/443"]}) == "ports: TCP/80, TCP/443"


def test_ascii_fallback_for_outputs_that_cannot_carry_unicode():
    assert symbols_for("utf-8") is UNICODE
    assert symbols_for("ascii") is ASCII
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="ascii")
    render(doc(SCHEDULED), out=out, color=False)
    out.flush()
    assert "ok Scheduled -> node-b" in raw.getvalue().decode("ascii")


def test_long_details_go_below_the_table_and_plugins_may_word_their_own(monkeypatch):
    from kschedx.render import details
    from kschedx.result import plugin_details

    many = {f"k{i}": i for i in range(6)}
    n = node("a", [ok("NodeName"), {**ok("DeviceThing"), "details": {"claims": ["c1"]}},
                   fail("LongFilter", "no", details=many)])
    plugin_details.details_form("NodeName")  # the forms read
    monkeypatch.setitem(plugin_details._FORMS, "DeviceThing", "thing")
    monkeypatch.setitem(details.DESCRIBERS, "thing", lambda d: [f"claim {c}: fine" for c in d["claims"]])
    out = text(doc(pod([n], status="Unschedulable", message="m")), node="a")
    row = next(line for line in out.splitlines() if line.strip().startswith("LongFilter"))
    assert row.rstrip().endswith("(below)")
    assert "claim c1: fine" in next(line for line in out.splitlines() if line.strip().startswith("DeviceThing"))
    tail = out[out.index("LongFilter details"):].splitlines()
    assert [line.strip() for line in tail[1:7]] == [f"k{i}: {i}" for i in range(6)]


def test_the_node_story_words_each_plugin_as_its_details_do():
    """One wording of a plugin's details for every renderer: the --node
    story words NodeAffinity's score details as render/details.py does."""
    details = {"addedAffinityWeight": 80, "podAffinityWeight": 20}
    n = node("a", [ok("NodeAffinity")], [score("NodeAffinity", 100, 100, 2, details=details)])
    out = text(doc(pod([n], selected="a")), node="a")
    assert "preferred terms matched: scheduler's addedAffinity +80, the pod's own +20" in out
    assert "addedAffinityWeight" not in out


def _preempting_pod(candidates):
    return pod([node("n1", [fail("NodeResourcesFit", "Insufficient cpu")]),
                node("n2", [fail("NodeResourcesFit", "Insufficient cpu")])],
               status="Unschedulable", message="0/2 nodes are available: 2 Insufficient cpu.",
               preemption={"code": "Success", "nominatedNode": "n2", "pdbViolations": 0,
                           "victims": [{"pod": "default/low", "priority": 1, "node": "n2"}],
                           "sampling": {"potentialNodes": 2, "offset": 0, "numCandidates": 2, "evaluatedNodes": 2},
                           "candidates": candidates, "dryRunFailures": []})


CANDIDATES = [
    {"node": "n2", "selected": True, "victims": ["default/low"], "numVictims": 1, "pdbViolations": 0,
     "highestPriority": 1, "prioritySum": 1, "earliestStartTime": "2025-01-01T00:00:00Z", "lostOn": None},
    {"node": "n1", "selected": False, "victims": ["default/guarded"], "numVictims": 1, "pdbViolations": 1,
     "highestPriority": 1, "prioritySum": 1, "earliestStartTime": None, "lostOn": "fewest PDB violations"},
]


def test_wide_shows_every_preemption_candidate_and_why_it_lost():
    """README: with -o wide, every candidate node and the criterion on which it lost."""
    out = text(doc(_preempting_pod(CANDIDATES)), wide=True)
    assert "preemption candidates (2 nodes)" in out
    candidates = out.split("preemption candidates")[1]
    row = next(line for line in candidates.splitlines() if line.strip().startswith("n1 "))
    assert "lost: fewest PDB violations" in row and "default/guarded" in row
    assert "★ nominated" in out
    assert "dry runs: 2 of 2 nodes" in out


def test_human_points_to_wide_for_the_candidates():
    out = text(doc(_preempting_pod(CANDIDATES)))
    assert "lost:" not in out
    assert "2 candidate nodes: -o wide shows each and why n2 was chosen" in out


def test_wide_shows_why_preemption_found_no_candidate():
    p = pod([node("n1", [fail("NodeResourcesFit", "Insufficient cpu")])], status="Unschedulable",
            message="0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
                    "1 No preemption victims found for incoming pod.",
            preemption={"code": "Unschedulable", "nominatedNode": None, "victims": [], "candidates": [],
                        "sampling": {"potentialNodes": 1, "offset": 0, "numCandidates": 1, "evaluatedNodes": 1},
                        "dryRunFailures": [{"node": "n1", "code": "Unschedulable",
                                            "reasons": ["No preemption victims found for incoming pod"]}]})
    out = text(doc(p), wide=True)
    assert "no candidate because" in out
    assert "n1" in out.split("no candidate because")[1]


WIDE_MATRIX = pod(
    [node(f"worker-{i}", [ok("NodeUnschedulable"), ok("TaintToleration"),
                          fail("NodeAffinity", "node(s) didn't match Pod's node affinity/selector",
                               code="UnschedulableAndUnresolvable"),
                          fail("NodeResourcesFit", "Insufficient cpu", "Insufficient memory")]) for i in (1, 2)]
    + [node("gpu-1", [fail("NodeUnschedulable", "node(s) were unschedulable"),
                      fail("TaintToleration", "node(s) had untolerated taint(s)"), ok("NodeAffinity"),
                      ok("NodeResourcesFit")]),
       node("gpu-2", [ok("NodeUnschedulable"), ok("TaintToleration"), ok("NodeAffinity"), ok("NodeResourcesFit")],
            [score("TaintToleration", 0, 100, 3)])],
    selected="gpu-2",
)


def _plain_lines(s: str) -> list[str]:
    import re

    return [re.sub(r"\x1b\[[0-9;]*m", "", line).rstrip() for line in s.splitlines()]


def test_a_matrix_too_wide_for_the_terminal_is_drawn_row_by_row(monkeypatch):
    """At 80 columns a 4-plugin matrix would fold plugin names mid-word: each
    node is one row of "plugin verdict; ..." instead, passes said once."""
    monkeypatch.setenv("COLUMNS", "80")
    lines = _plain_lines(rich_text(doc(WIDE_MATRIX)))
    assert all(len(line) <= 80 for line in lines)
    assert not any("NodeUnschedulab" in line and "NodeUnschedulable" not in line for line in lines)
    row = next(line for line in lines if line.strip().startswith("worker-1"))
    assert "NodeAffinity ✗ node(s)" in row and "TaintToleration" not in row
    assert next(line for line in lines if line.strip().startswith("gpu-2")).split() == ["gpu-2", "✓"]


def test_a_matrix_that_fits_stays_a_matrix(monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    lines = _plain_lines(rich_text(doc(WIDE_MATRIX)))
    header = next(line for line in lines if line.strip().startswith("Filter"))
    assert header.split() == ["Filter", "NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodeResourcesFit"]


def test_a_score_column_of_zeros_is_one_line():
    """DynamicResources scores 0 for a pod without claims: one line, not a column."""
    scored = [node(n, [ok("NodeUnschedulable")],
                   [score("TaintToleration", 0, 100, 3), score("DynamicResources", 0, 0, 2),
                    score("ImageLocality", v, v)]) for n, v in (("node-a", 7), ("node-b", 0))]
    out = text(doc(pod(scored, selected="node-a")))
    header = next(line for line in out.splitlines() if line.strip().startswith("Score"))
    assert "DynamicResources" not in header and "ImageLocality" in header
    assert "  0 on every node: DynamicResources" in out
    assert "DynamicResources ×2" in text(doc(pod(scored, selected="node-a")), wide=True)


def test_an_ascii_only_output_never_fails():
    """PYTHONIOENCODING=ascii: marks in any renderer (the DRA device story
    writes its own) come out as ASCII, other characters as '?'."""
    stream = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    details = {"claims": [{"claim": "default/c", "requests": [{
        "request": "gpu", "deviceClass": "gpu.example.com", "allocationMode": "ExactCount", "count": 1,
        "eligible": 1, "candidates": [{"device": "d/p/gpu-0", "reason": None, "allocated": True},
                                      {"device": "d/p/gpu-1", "reason": "taken by café"}]}]}]}
    p = pod([node("n1", [fail("DynamicResources", "cannot allocate all claims", details=details)])],
            status="Unschedulable", message="0/1 nodes are available: 1 cannot allocate all claims.")
    render(doc(p), out=stream, color=False, node="n1")
    stream.flush()
    out = stream.buffer.getvalue().decode("ascii")
    assert "ok d/p/gpu-0: allocated" in out and "x d/p/gpu-1: taken by caf?" in out


def test_a_random_tie_says_how_to_make_it_reproducible():
    scored = [node(n, [ok("NodeUnschedulable")], [score("TaintToleration", 0, 100, 3)]) for n in ("a", "b")]
    random = text(doc(pod(scored, selected="b", top=["a", "b"]), tie_break="random"))
    assert "tie-break random chose b (at random, as kube-scheduler: --tie-break name or --seed N" in random
    by_name = text(doc(pod(scored, selected="a", top=["a", "b"]), tie_break="name"))
    assert "tie-break name chose a" in by_name and "--seed" not in by_name


def test_an_unschedulable_pod_points_to_the_node_story():
    p = pod([node("n1", [fail("NodeResourcesFit", "Insufficient cpu", details={"insufficient": []})])],
            status="Unschedulable", message="0/1 nodes are available: 1 Insufficient cpu.")
    assert "--node NAME shows why in numbers" in text(doc(p))
    assert "--node NAME shows why in numbers" not in text(doc(SCHEDULED))


def test_terminal_lines_carry_no_trailing_spaces(monkeypatch):
    """Rich pads wrapped lines to their block's width; copy-paste would carry them."""
    monkeypatch.setenv("COLUMNS", "60")
    out = rich_text(doc(WIDE_MATRIX))
    assert ANSI_ESC in out
    for line in out.splitlines():
        assert not line.replace("\x1b[0m", "").endswith(" "), repr(line)


ANSI_ESC = "\x1b["


def test_rich_draws_a_shared_body_once_and_the_same(monkeypatch):
    # Pods that take an identical earlier pod's result share its body's
    # blocks: on a terminal each block is drawn once, and the report is the
    # one Rich draws from all the blocks at once.
    from kschedx.commands.explain import explain, explain_into
    from kschedx.render import human
    from kschedx.render.human import HumanSink, render_rich
    from kschedx.render.layout import build
    from test_reuse import groups_cluster, load

    monkeypatch.setenv("COLUMNS", "150")
    objs = groups_cluster(groups=3, replicas=4, nodes=70)
    whole = io.StringIO()
    render_rich(build(explain(load(objs), tie_break="name")), whole)
    drawn = []
    rich_text = human.rich_text

    def counted(blocks, console):
        drawn.extend(blocks)
        return rich_text(blocks, console)

    monkeypatch.setattr(human, "rich_text", counted)
    for jobs in (1, 2):
        drawn.clear()
        out = io.StringIO()
        explain_into(HumanSink(out=out, color=True), load(objs), tie_break="name", jobs=jobs)
        assert out.getvalue() == whole.getvalue()
        tables = [b for b in drawn if type(b).__name__ == "Table"]
        assert len(tables) == len({id(b) for b in tables}) < 12 * 2  # a group's tables once


def test_rich_draws_a_block_again_at_another_width():
    from rich.console import Console

    from kschedx.render.human import HumanSink, rich_text
    from kschedx.render.blocks import Line, Span, Table

    blocks = [Line([Span("word " * 30)]), Table(["a", "b"], rows=[[[Span("x " * 40)], [Span("y")]]])]
    sink = HumanSink(out=io.StringIO(), color=True)
    sink._console = Console(file=io.StringIO(), force_terminal=True, width=120)
    wide = sink._rich_text(blocks)
    sink._console.width = 40
    narrow = sink._rich_text(blocks)
    assert narrow != wide
    assert narrow == rich_text(blocks, Console(file=io.StringIO(), force_terminal=True, width=40, highlight=False,
                                               markup=False, emoji=False))


def test_the_best_ten_of_many_ties_are_taken_by_name():
    # Thirty nodes tied at the top, ten shown: the first ten names, as a full sort gives.
    nodes = [node(f"n{i:02d}", [ok("NodeResourcesFit")], [score("NodeResourcesFit", 5, 50)]) for i in range(29, -1, -1)]
    out = text(doc(pod(nodes, selected="n07", top=[f"n{i:02d}" for i in range(30)])))
    rows = [line.split()[0] for line in out.splitlines() if line.strip().startswith("n") and "50" in line]
    assert rows == [f"n{i:02d}" for i in range(10)]
    assert "… 20 more scored nodes" in out


def test_nodes_scored_by_other_plugins_take_the_columns_in_rank_order():
    # Nodes whose score lists differ (a document from elsewhere): the
    # columns in order of first appearance from the best node down, each
    # weight as the best node with it has it, a column all zero or all
    # skipped on every node that has it left out.
    nodes = [node("low", [ok("A")], [score("Late", 0, 0, 4), score("Fit", 1, 1), score("Zero", 0, 0, 2)]),
             node("top", [ok("A")], [score("Fit", 9, 90), score("Skipped", 0, 0, 3, skipped=True)])]
    nodes += [node(f"m{i:02d}", [ok("A")], [score("Fit", 2, 20), score("Zero", 0, 0, 2)]) for i in range(12)]
    out = text(doc(pod(nodes, selected="top")))
    header = next(line for line in out.splitlines() if line.strip().startswith("Score"))
    assert header.split()[2:] == ["Fit", "×1"]
    assert "0 on every node: Zero, Late" in out
    assert "not scoring this pod (PreScore returned Skip): Skipped" in out
    wide = text(doc(pod(nodes, selected="top")), wide=True)
    header = next(line for line in wide.splitlines() if line.strip().startswith("Score"))
    assert header.split()[2:] == ["Fit", "×1", "Skipped", "×3", "Zero", "×2", "Late", "×4"]


def test_score_lists_of_one_length_in_another_order_are_read_by_plugin():
    nodes = [node("a", [ok("A")], [score("Fit", 9, 90), score("Zero", 0, 0, 2)]),
             node("b", [ok("A")], [score("Zero", 0, 0, 2), score("Fit", 1, 10)])]
    nodes += [node(f"m{i:02d}", [ok("A")], [score("Fit", 2, 20), score("Zero", 0, 0, 2)]) for i in range(12)]
    out = text(doc(pod(nodes, selected="a")))
    header = next(line for line in out.splitlines() if line.strip().startswith("Score"))
    assert header.split()[2:] == ["Fit", "×1"]
    assert "0 on every node: Zero" in out


def test_the_best_rows_are_a_full_sorts_first_rows():
    from hypothesis import given, settings, strategies as st

    from kschedx.render.report_scores import _best, _rank

    @settings(max_examples=200, deadline=None)
    @given(totals=st.lists(st.none() | st.integers(-3, 5), max_size=40), n=st.integers(1, 12))
    def check(totals, n):
        scored = [{"name": f"n{i % 7}-{i}", "totalScore": t} for i, t in enumerate(totals)]
        assert _best(list(scored), n) == sorted(scored, key=_rank)[:n]

    check()
