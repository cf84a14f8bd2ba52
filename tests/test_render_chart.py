"""simulate's utilization chart: bars before -> after per node, per node group
above 40 nodes, told apart by glyphs (readable without colour), Rich on a
terminal and plain text elsewhere."""

from __future__ import annotations

import io
import json
from pathlib import Path

from click.testing import CliRunner
from rich.console import Console

from kschedx.result.node_group import node_group
from kschedx.cli.main import main
from kschedx.render import chart
from kschedx.render.simulate import render_simulate

ROOT = Path(__file__).resolve().parent.parent


def _util(name, before_cpu, after_cpu, *, group=None, alloc_cpu=4000, pods=(0, 0)):
    gib = 1 << 30
    return {"node": name, "nodeGroup": group or node_group(name, {}),
            "allocatable": {"cpu": alloc_cpu, "memory": 16 * gib, "pods": 110},
            "before": {"cpu": before_cpu, "memory": 4 * gib, "pods": pods[0]},
            "after": {"cpu": after_cpu, "memory": 4 * gib, "pods": pods[1]}}


def test_segments_show_kept_added_freed_and_free():
    assert chart.Usage(1000, 3000, 4000).segments(20) == [("kept", 5), ("added", 10), ("free", 5)]
    assert chart.Usage(3000, 1000, 4000).segments(20) == [("kept", 5), ("freed", 10), ("free", 5)]
    assert chart.Usage(0, 0, 4000).segments(20) == [("free", 20)]
    assert chart.Usage(1, 1, 4000).segments(20) == [("kept", 1), ("free", 19)]  # a sliver shows
    assert chart.Usage(5000, 5000, 4000).segments(20) == [("kept", 20)]  # over-committed: full, not more
    assert chart.Usage(0, 10, 0).segments(20) == [("free", 20)]  # no allocatable: nothing to draw


def test_plain_bars_use_distinct_ascii_glyphs():
    assert chart.plain_bar(chart.Usage(1000, 3000, 4000)) == "#####++++++++++....."
    assert chart.plain_bar(chart.Usage(3000, 1000, 4000)) == "#####----------....."


def test_per_node_up_to_40_nodes_and_only_changed_rows():
    doc = {"utilization": [_util(f"n{i}", 1000, 2000 if i == 3 else 1000) for i in range(40)]}
    rows, grouped = chart.rows(doc)
    assert not grouped and [r.label for r in rows] == ["n3"]
    assert len(chart.rows(doc, wide=True)[0]) == 40


def test_node_groups_above_40_nodes():
    util = [_util(f"worker-a{i}", 1000, 2000 if i < 5 else 1000) for i in range(30)]
    util += [_util(f"gpu-{i}", 0, 0, group="karpenter.sh/nodepool=gpu") for i in range(11)]
    rows, grouped = chart.rows({"utilization": util}, wide=True)
    assert grouped
    assert [r.label for r in rows] == ["karpenter.sh/nodepool=gpu (11 nodes)", "worker-a* (30 nodes)"]
    workers = rows[1]
    assert (workers.cpu.before, workers.cpu.after, workers.cpu.allocatable) == (30000, 35000, 120000)
    assert workers.nodes == 30
    # Unchanged groups are left out unless -o wide.
    assert [r.label for r in chart.rows({"utilization": util})[0]] == ["worker-a* (30 nodes)"]
    lines = chart.plain_lines({"utilization": util})
    assert "per node group (sums)" in lines[0] and lines[2].startswith("node group")


def test_node_group_names():
    assert node_group("ip-10-0-1-10", {"eks.amazonaws.com/nodegroup": "ng-1"}) == "eks.amazonaws.com/nodegroup=ng-1"
    assert node_group("gke-a-pool-1-abcd", {"cloud.google.com/gke-nodepool": "pool-1",
                                            "node.kubernetes.io/instance-type": "e2"}) == "cloud.google.com/gke-nodepool=pool-1"
    assert node_group("worker-a12", {}) == "worker-a*"
    assert node_group("node.7", {}) == "node*"
    assert node_group("control-plane", {}) == "control-plane"


def _simulate_doc():
    r = CliRunner().invoke(main, ["simulate", str(ROOT / "fixtures/simulate/deploy.yaml"), "--snapshot",
                                  str(ROOT / "fixtures/simulate/cluster.yaml"), "--tie-break", "name", "-o", "json"])
    return json.loads(r.stdout)


def test_plain_chart_in_simulate_output():
    out = io.StringIO()
    render_simulate(_simulate_doc(), out=out, color=False)
    text = out.getvalue()
    assert "# requested before  + added  - freed  . free" in text
    row = next(line for line in text.splitlines() if line.startswith("node-a "))
    assert "########++++++++++++ 37% -> 100% (3 -> 8 of 8)" in row
    assert "█" not in text and "\x1b[" not in text  # no terminal: plain ASCII, no colour codes


def test_rich_chart_reads_without_colour():
    doc = _simulate_doc()
    console = Console(file=io.StringIO(), width=140)  # a file: glyphs only, no colour codes
    console.print(chart.rich_table(doc, wide=True, width=140))
    text = console.file.getvalue()
    assert "█ requested before  ▒ added  ╳ freed  · free" in text
    row = next(line for line in text.splitlines() if "node-a" in line)
    assert "████████▒▒▒▒▒▒▒▒▒▒▒▒  37% -> 100%" in row and "(12Gi -> 22Gi of 32Gi)" in row
    node_c = next(line for line in text.splitlines() if "node-c" in line)
    assert "····················  0% -> 0%" in node_c


def test_rich_chart_fits_a_narrow_terminal():
    doc = _simulate_doc()
    console = Console(file=io.StringIO(), width=80)
    console.print(chart.rich_table(doc, width=80))
    lines = console.file.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert any("node-a" in line and "37% -> 100%" in line for line in lines)


def test_colour_on_a_terminal():
    doc = _simulate_doc()
    out = io.StringIO()
    out.isatty = lambda: True  # a terminal, NO_COLOR unset
    render_simulate(doc, out=out, color=True)
    assert "▒" in out.getvalue()
