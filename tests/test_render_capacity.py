"""capacity's human report: count, limit and the per-node chart, the same
with and without colour, grouped above 40 nodes (all nodes with -o wide)."""

from __future__ import annotations

import io
import re

from kschedx.render import capacity as view


def _util(name, copies, before, after, alloc=4000, group=None):
    return {"node": name, "nodeGroup": group or name, "copies": copies,
            "allocatable": {"cpu": alloc, "memory": 8 << 30, "pods": 110},
            "before": {"cpu": before, "memory": 0, "pods": 1}, "after": {"cpu": after, "memory": 0, "pods": 1 + copies}}


def _doc(util, limited=True):
    count = sum(u["copies"] for u in util)
    limit = {"plugin": "NodeResourcesFit", "resource": "cpu", "reason": "Insufficient cpu", "nodes": len(util),
             "totalNodes": len(util), "reasons": [{"plugin": "NodeResourcesFit", "reason": "Insufficient cpu",
                                                   "nodes": len(util), "resource": "cpu"}]}
    return {"apiVersion": "kschedx/v1", "kind": "CapacityResult", "options": {"min": 1},
            "templates": [{"template": "shop/web", "workload": None, "priority": 0, "requests": {"cpu": "1"},
                           "count": count, "perNode": {u["node"]: u["copies"] for u in util if u["copies"]},
                           "stop": "Unschedulable", "status": "Unschedulable",
                           "message": f"0/{len(util)} nodes are available: {len(util)} Insufficient cpu.",
                           "limitedBy": limit if limited else None, "chartResource": "cpu", "utilization": util}]}


def _plain(doc, wide=False) -> str:
    out = io.StringIO()
    view.render_human(doc, out=out, wide=wide, color=False)
    return out.getvalue()


def test_plain_chart_bars_per_node():
    text = _plain(_doc([_util("a", 2, 2000, 4000), _util("b", 1, 0, 1000)]))
    assert "shop/web  3 copies fit" in text
    assert "limited by: NodeResourcesFit, cpu, on 2 of 2 nodes" in text
    assert "0/2 nodes are available: 2 Insufficient cpu." in text
    [a] = [line for line in text.splitlines() if line.strip().startswith("a ")]
    # copies: the node with most copies gets the full bar; cpu: half kept, half added.
    assert "o" * view.COPY_BAR_WIDTH + " 2" in a
    assert "#" * 10 + "+" * 10 + " 50% -> 100%" in a
    assert "2 -> 4 of 4" in a
    [b] = [line for line in text.splitlines() if line.strip().startswith("b ")]
    assert "o" * 5 + " 1" in b and "+" * 5 + "." * 15 + " 0% -> 25%" in b
    assert "\x1b[" not in text


def test_more_than_40_nodes_are_grouped_unless_wide():
    util = [_util(f"pool-a-{i}", 1, 0, 1000, group="pool-a") for i in range(30)]
    util += [_util(f"pool-b-{i}", 0, 4000, 4000, group="pool-b") for i in range(20)]
    text = _plain(_doc(util))
    assert "pool-a (30 nodes)" in text and "pool-b (20 nodes)" in text
    assert "per node group (sums)" in text
    assert "pool-a-7" not in text.split("copies placed")[1]
    wide = _plain(_doc(util), wide=True)
    assert all(f"pool-b-{i} " in wide for i in range(20))


def test_rich_output_says_the_same_with_other_glyphs():
    doc = _doc([_util("a", 2, 2000, 4000), _util("b", 1, 0, 1000)])
    out = io.StringIO()
    view.render_human(doc, out=out, color=True)
    rich = re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue())
    assert "■ copies" in rich and "█ requested before" in rich and "▒ added" in rich
    assert "limited by: NodeResourcesFit, cpu, on 2 of 2 nodes" in rich
    assert "50% -> 100%" in rich


def test_stopped_by_max_has_no_limit_line():
    doc = _doc([_util("a", 2, 0, 2000)], limited=False)
    t = doc["templates"][0]
    t.update(stop="Max", status=None, message=None)
    text = _plain(doc)
    assert "--max reached" in text and "limited by" not in text
