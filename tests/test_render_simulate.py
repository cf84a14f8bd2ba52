"""Plain renderings of preemption and simulate results."""

from __future__ import annotations

import io

from kschedx.commands.explain import explain
from kschedx.commands.load import load_workload
from kschedx.commands.simulate import simulate
from kschedx.render.simulate import preemption_text, render_simulate
from golden_compare import GOLDEN


def test_preemption_text_names_victims_and_losing_candidates():
    w = load_workload([str(GOLDEN / "cases" / "hand-08-preemption-pdb.yaml")])
    p = explain(w, tie_break="name")["pods"][0]
    text = preemption_text(p, wide=False)
    assert "nominated n2" in text and "default/batch" in text and "0 PodDisruptionBudget violation(s)" in text
    wide = preemption_text(p, wide=True)
    assert "n1" in wide and "fewest PDB violations" in wide and "offset 0" in wide


def test_preemption_text_is_empty_without_nomination_unless_wide():
    w = load_workload([str(GOLDEN / "cases" / "hand-05-preemption.yaml")])
    polite = explain(w, tie_break="name")["pods"][1]
    assert preemption_text(polite) == ""


def test_render_simulate_tables():
    w = load_workload([str(GOLDEN / "cases" / "hand-05-preemption.yaml")])
    doc = simulate(w, tie_break="name", detail="placements")
    out = io.StringIO()
    render_simulate(doc, out=out)
    text = out.getvalue()
    assert "simulated 2 pod(s): 1 placed (1 by preemption, 1 victim(s))" in text
    assert "default/low-2" in text and "preempted 1 pod(s)" in text
    assert "n1" in text and "-> " in text
    assert all(p["nodes"] == [] for p in doc["pods"]) and doc["detail"] == "placements"


def test_simulate_wide_lists_preemption_candidates():
    w = load_workload([str(GOLDEN / "cases" / "hand-08-preemption-pdb.yaml")])
    doc = simulate(w, tie_break="name", detail="placements")
    narrow, wide = io.StringIO(), io.StringIO()
    render_simulate(doc, out=narrow)
    render_simulate(doc, wide=True, out=wide)
    assert "lost: fewest PDB violations" not in narrow.getvalue()
    text = wide.getvalue()
    assert "preemption candidates for" in text
    assert "nominated" in text and "lost: fewest PDB violations" in text


SIMULATE = GOLDEN.parent.parent / "fixtures" / "simulate"


def _simulate_text(wide=False):
    w = load_workload([str(SIMULATE / "cluster.yaml")], [str(SIMULATE / "deploy.yaml")])
    doc = simulate(w, tie_break="name", detail="placements")
    out = io.StringIO()
    render_simulate(doc, wide=wide, out=out)
    return doc, out.getvalue()


def test_pending_pods_messages_are_whole_and_given_once():
    """The end of a FailedScheduling message says what preemption found: it is
    never cut, and six identical messages are printed once."""
    doc, text = _simulate_text()
    message = next(p["message"] for p in doc["pods"] if not p.get("placedNode"))
    assert message.endswith("No preemption victims found for incoming pod.")
    assert f"[1] 6 pods: {message}" in text
    assert text.count(message) == 1
    assert sum(1 for line in text.splitlines() if line.rstrip().endswith("unschedulable  [1]")) == 6


def test_wide_keeps_each_message_in_its_row():
    doc, text = _simulate_text(wide=True)
    message = next(p["message"] for p in doc["pods"] if not p.get("placedNode"))
    assert text.count(message) == 6 and "[1]" not in text


def test_simulate_says_what_was_expanded_and_the_absolute_usage():
    _, text = _simulate_text()
    assert text.splitlines()[0] == "kube-scheduler v1.37.2"
    assert "Deployment/shop/web expanded into 30 pod(s)" in text.splitlines()[2]
    row = next(line for line in text.splitlines() if line.startswith("node-a "))
    assert "(3 -> 8 of 8)" in row and "(12Gi -> 22Gi of 32Gi)" in row and "1 -> 11 of 110" in row


def test_a_sliver_of_use_is_not_zero_percent():
    from kschedx.render.units import percent

    assert percent(0, 1000) == "0%" and percent(1, 1000) == "<1%" and percent(10, 1000) == "1%"


def _placements_line(doc) -> str:
    """The sentence under the HTML report's Placements heading."""
    import html
    import re

    from kschedx.render.html import to_html

    return html.unescape(re.search(r"<h2>Placements</h2><p>(.*?)</p>", to_html(doc)).group(1))


def test_headline_counts_pods_no_profile_serves(tmp_path):
    """Every pod is in the headline's counts: a pod of a schedulerName no
    profile serves is named, as in the placement table, in the terminal and
    in the HTML report alike."""
    import yaml

    from kschedx.framework.configured import load_config

    files = []
    for name, scheduler in (("a", None), ("b", "batch-scheduler"), ("c", "someone-else")):
        pod = yaml.safe_load(open(GOLDEN.parent.parent / "fixtures" / "pods" / "web.yaml"))
        pod["metadata"]["name"] = name
        if scheduler:
            pod["spec"]["schedulerName"] = scheduler
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(pod))
        files.append(str(tmp_path / f"{name}.yaml"))
    config = load_config(str(GOLDEN.parent.parent / "fixtures" / "config" / "two-profiles.yaml"))
    doc = simulate(load_workload([str(GOLDEN.parent.parent / "fixtures" / "cluster")], files),
                   tie_break="name", detail="placements", config=config)
    assert doc["summary"]["noProfile"] == 1 and doc["summary"]["placed"] == 2
    out = io.StringIO()
    render_simulate(doc, out=out)
    sentence = "3 pod(s): 2 placed (0 by preemption, 0 victim(s)), 0 unschedulable, 0 gated, 1 noprofile"
    assert f"simulated {sentence}\n" in out.getvalue()
    assert _placements_line(doc) == sentence


def test_headline_leaves_out_zero_errors_and_no_profile():
    _, text = _simulate_text()
    assert "simulated 30 pod(s): 24 placed (0 by preemption, 0 victim(s)), 6 unschedulable, 0 gated\n" in text


def test_chart_and_report_print_the_same_percentages():
    """node-a goes from 3 to 8 of 8 cpu and 12Gi to 22Gi of 32Gi: 37% and 68%
    (floored, as kubectl describe node does) in the terminal and the report."""
    doc, text = _simulate_text()
    row = next(line for line in text.splitlines() if line.startswith("node-a "))
    assert "37% -> 100%" in row and "37% -> 68%" in row
    from kschedx.render.html import to_html

    page = to_html(doc)
    assert '<span class="pct">37% → 100%</span>' in page and '<span class="pct">37% → 68%</span>' in page
    assert "38%" not in page and "69%" not in page


def test_every_usage_reads_the_same_in_chart_and_report():
    import re

    from kschedx.render.chart import Usage
    from kschedx.render.html import _usage_cell

    for before, after, alloc in ((3000, 8000, 8000), (1, 999, 1000), (2, 3, 3), (0, 5, 0), (7, 7, 9)):
        cell = _usage_cell("cpu", before, after, alloc)
        shown = re.search(r'<span class="pct">(.*?)</span>', cell).group(1)
        assert shown.replace(" → ", " -> ") == Usage(before, after, alloc).percent()


def test_cpu_amounts_side_by_side_share_one_unit():
    """150 cores before, 150.5 after: not `150 -> 150500m`, which reads as a
    thousandfold jump."""
    from kschedx.render import units
    from kschedx.render.chart import Row, Usage

    row = Row("node* (150 nodes)", 150, Usage(150000, 150500, 720000), Usage(0, 0, 1 << 40), (0, 0, 0))
    assert row.amounts("cpu") == "(150000m -> 150500m of 720000m)"
    assert Row("n", 1, Usage(3000, 8000, 8000), Usage(0, 0, 1), (0, 0, 0)).amounts("cpu") == "(3 -> 8 of 8)"
    assert units.amounts("memory", 50 << 30, 80 << 30) == ("50Gi", "80Gi")
