"""Every fix `explain --fix` proposes on the golden corpus, applied to the
case's objects as written (kschedx's own JSON Patch) and explained again,
really places the pod: Scheduled, or for a priority fix, preemption
nominating the node it named (and the pod Scheduled once its victims are
gone)."""

from __future__ import annotations

import pytest

from fixhelp import apply_fix, explain
from golden_compare import GOLDEN, case_names
from kschedx.sources.fixtures import read_objects


def _objects(name):
    return [obj for obj, _ in read_objects([str(GOLDEN / "cases" / f"{name}.yaml")])]


def _pod(doc, key):
    (p,) = [p for p in doc["pods"] if p["pod"] == key]
    return p


@pytest.mark.parametrize("name", case_names())
def test_every_proposed_fix_places_the_pod(name):
    objects = _objects(name)
    doc = explain(objects)
    for p in doc["pods"]:
        if p["status"] != "Unschedulable":
            assert "fixes" not in p
            continue
        assert isinstance(p["fixes"], list)
        for fix in p["fixes"]:
            after = _pod(explain(apply_fix(objects, fix), fix=False), p["pod"])
            what = f"{name}: {p['pod']}: {fix['description']}"
            if fix["kind"] == "raise-priority":
                assert (after["preemption"] or {}).get("nominatedNode") == fix["verified"]["nominatedNode"], what
                victims = {(v["pod"]) for v in fix["verified"]["victims"]}
                assert {v["pod"] for v in after["preemption"]["victims"]} == victims, what
                gone = apply_fix(objects, fix)
                gone = [o for o in gone if not (o["kind"] == "Pod" and
                                                f"{o['metadata'].get('namespace') or 'default'}/{o['metadata']['name']}"
                                                in victims)]
                assert _pod(explain(gone, fix=False), p["pod"])["status"] == "Scheduled", what
            else:
                assert after["status"] == "Scheduled", f"{what}: {after['message']}"
