"""Placeholder human renderer: replaced by the Rich / plain renderers."""

from __future__ import annotations

import json
import sys


def render(doc, wide=False, node=None):
    from .simulate import preemption_text

    for p in doc["pods"]:
        sys.stdout.write(f"{p['pod']}: {p['status']} {p.get('selectedNode') or ''} {p.get('message') or ''}\n")
        sys.stdout.write(preemption_text(p, wide))
