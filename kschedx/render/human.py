"""Placeholder human renderer: replaced by the Rich / plain renderers."""

from __future__ import annotations

import json
import sys

from .dra import dra_lines


def render(doc, wide=False, node=None):
    for p in doc["pods"]:
        sys.stdout.write(f"{p['pod']}: {p['status']} {p.get('selectedNode') or ''} {p.get('message') or ''}\n")
        if node is None:
            continue
        for n in p["nodes"]:
            if n["name"] != node:
                continue
            for f in n["filters"]:
                reasons = ", ".join(f["reasons"])
                sys.stdout.write(f"  {f['plugin']:<32} {f['code']}{': ' + reasons if reasons else ''}\n")
                if f["plugin"] == "DynamicResources" and f.get("details"):
                    for line in dra_lines(f["details"]):
                        sys.stdout.write(line + "\n")
            for s in n.get("scores") or ():
                sys.stdout.write(f"  score {s['plugin']:<26} {s['raw']} -> {s['normalized']} x{s['weight']} = {s['weighted']}\n")
