"""Placeholder human renderer: replaced by the Rich / plain renderers."""

from __future__ import annotations

import json
import sys


def render(doc, wide=False, node=None):
    for p in doc["pods"]:
        sys.stdout.write(f"{p['pod']}: {p['status']} {p.get('selectedNode') or ''} {p.get('message') or ''}\n")
