"""Placeholder human renderer: replaced by the Rich / plain renderers."""

from __future__ import annotations

import sys

from .details import detail_lines


def render(doc, wide=False, node=None):
    for p in doc["pods"]:
        sys.stdout.write(f"{p['pod']}: {p['status']} {p.get('selectedNode') or ''} {p.get('message') or ''}\n")
        if node is not None:
            _node_story(p, node)


def _node_story(pod: dict, name: str) -> None:
    """`--node`: every filter with its reasons and details, every score."""
    for st in pod.get("preFilter") or ():
        if st["code"] != "Skip":
            sys.stdout.write(f"  PreFilter {st['plugin']}: {st['code']} {'; '.join(st['reasons'])}\n")
            for line in detail_lines(st["plugin"], st.get("details")):
                sys.stdout.write(f"      {line}\n")
    n = next((n for n in pod.get("nodes") or () if n["name"] == name), None)
    if n is None:
        return
    sys.stdout.write(f"  node {name}: {'feasible' if n['feasible'] else 'first failure ' + str(n['firstFailure'])}\n")
    for f in n.get("filters") or ():
        mark = {"Success": "ok", "Skip": "skip"}.get(f["code"], "FAIL")
        reasons = f" {'; '.join(f['reasons'])}" if f["reasons"] else ""
        sys.stdout.write(f"    {mark:4} {f['plugin']}{reasons}\n")
        for line in detail_lines(f["plugin"], f.get("details")):
            sys.stdout.write(f"           {line}\n")
    for s in n.get("scores") or ():
        if s.get("skipped"):
            sys.stdout.write(f"    score {s['plugin']}: skipped\n")
        else:
            sys.stdout.write(f"    score {s['plugin']}: {s['raw']} -> {s['normalized']} x{s['weight']} = {s['weighted']}\n")
