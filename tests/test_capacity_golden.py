"""capacity agrees with upstream: on every golden case, for every pending pod,
the copies capacity counts are the copies `simulate` (which agrees with
kube-scheduler v1.35.4 placement by placement, test_golden_simulate.py)
places when the same copies are given to it one after another as POD_FILE
pods: the same count, the same nodes, and the same FailedScheduling message
for the first copy that does not fit.

Copies are capped (MAX_COPIES) to keep the corpus fast."""

from __future__ import annotations

import copy
from collections import Counter

import pytest
import yaml

from golden_compare import GOLDEN, case_names
from kschedx.commands.load import load_workload
from kschedx.commands.simulate import simulate
from kschedx.commands import capacity as cap

MAX_COPIES = 4


def _raw_pods(case_path):
    with open(case_path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    objects = [item for d in docs for item in (d.get("items") or () if d.get("kind", "").endswith("List") else [d])]
    return {(d["metadata"].get("namespace") or "default", d["metadata"]["name"]): d
            for d in objects if d.get("kind") == "Pod"}


def _copies_file(tmp_path, raw: dict, n: int) -> str:
    """n copies of the pod as a user would write them: NAME-capacity-i, no
    uid, pending and nominated nowhere."""
    docs = []
    for i in range(1, n + 1):
        c = copy.deepcopy(raw)
        meta = c["metadata"]
        meta["name"] = f"{meta['name']}-capacity-{i}"
        meta.pop("uid", None)
        c["status"] = {k: v for k, v in (c.get("status") or {}).items()
                       if k not in ("nominatedNodeName", "resourceClaimStatuses", "conditions")}
        docs.append(c)
    path = tmp_path / "copies.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def _simulated(case_path, tmp_path, raw, n):
    workload = load_workload([case_path], [_copies_file(tmp_path, raw, n)])
    return simulate(workload, tie_break="name", detail="placements")["pods"]


@pytest.mark.parametrize("name", case_names())
def test_capacity_matches_simulate_of_the_same_copies(name, tmp_path):
    case_path = str(GOLDEN / "cases" / f"{name}.yaml")
    raw_pods = _raw_pods(case_path)
    workload = load_workload([case_path])
    if not workload.pods:
        pytest.skip("no pending pod")
    for preempt in (False, True):
        options = cap.Options(max=MAX_COPIES, allow_preemption=preempt)
        doc = cap.capacity(load_workload([case_path]), options, tie_break="name")
        for t in doc["templates"]:
            ns, _, pod_name = t["template"].partition("/")
            n = t["count"]
            pods = _simulated(case_path, tmp_path, raw_pods[(ns, pod_name)], min(n + 1, MAX_COPIES))
            placed = 0
            for p in pods:
                if not p["placedNode"] or (not preempt and p["status"] != "Scheduled"):
                    break
                placed += 1
            where = f"{name} {t['template']} preemption={'on' if preempt else 'off'}"
            assert placed == n, where
            assert Counter(p["placedNode"] for p in pods[:n]) == Counter(t["perNode"]), where
            if n < MAX_COPIES:
                assert t["stop"] != cap.STOP_MAX, where
                assert pods[n]["message"] == t["message"], where
                assert pods[n]["status"] == t["status"], where
            else:
                assert t["stop"] == cap.STOP_MAX, where
