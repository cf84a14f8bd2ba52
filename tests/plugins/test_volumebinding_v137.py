"""VolumeBinding with StorageCapacityScoring, on by default from v1.37:
upstream scorer_test.go TestScore (v1.37.2, the default shape being the real
default [{0, 10}, {100, 0}]) and volume_binding_test.go TestVolumeBinding's
capacity rows (v1.37.2: scored when the gate is on, PreScore Skip when off)."""

from __future__ import annotations

import pytest

from builders import framework, pvc
from builders import pod_info as pending
from builders import volume_pod as pod
from kschedx.framework.cycle_state import CycleState
from kschedx.features import Features
from kschedx.plugins.volumebinding.volume_binding import build_scorer
from test_volumebinding import CLASSES, ZONAL_NODES, local_pv, upstream_node, verdict, zonal_pv

VERSION = "1.37"
DEFAULT_SHAPE = [(0, 100), (100, 0)]  # [{0, 10}, {100, 0}] scaled by MaxNodeScore / MaxCustomPriorityScore
HDD, SSD = "hdd", "ssd"


@pytest.mark.parametrize("shape, cases", [
    ("default, single class", [({HDD: (0, 100)}, 100), ({HDD: (30, 100)}, 70), ({HDD: (50, 100)}, 50),
                               ({HDD: (100, 100)}, 0)]),
    ("default, multiple classes", [({HDD: (0, 100), SSD: (0, 100)}, 100), ({HDD: (0, 100), SSD: (30, 100)}, 85),
                                   ({HDD: (30, 100), SSD: (30, 100)}, 70), ({HDD: (30, 100), SSD: (60, 100)}, 55),
                                   ({HDD: (50, 100), SSD: (50, 100)}, 50), ({HDD: (50, 100), SSD: (100, 100)}, 25),
                                   ({HDD: (100, 100), SSD: (100, 100)}, 0)]),
    ("custom, multiple classes", [({HDD: (0, 100), SSD: (0, 100)}, 0), ({HDD: (0, 100), SSD: (30, 100)}, 0),
                                  ({HDD: (30, 100), SSD: (30, 100)}, 0), ({HDD: (30, 100), SSD: (60, 100)}, 5),
                                  ({HDD: (50, 100), SSD: (100, 100)}, 25), ({HDD: (90, 100), SSD: (90, 100)}, 40),
                                  ({HDD: (100, 100), SSD: (100, 100)}, 50)]),
])
def test_score(shape, cases):
    scorer = build_scorer(DEFAULT_SHAPE if shape.startswith("default") else [(50, 0), (80, 30), (100, 50)])
    for classes, want in cases:
        assert scorer({k: list(v) for k, v in classes.items()}) == want, classes


def _scores(nodes, pvcs, pvs, gate: bool):
    features = Features(VERSION, {"StorageCapacityScoring": gate})
    fw = framework(*nodes, *CLASSES, *pvcs, *pvs, pod("pod-a", claims=[p["metadata"]["name"] for p in pvcs]),
                   features=features)
    pl = fw.profile.by_name["VolumeBinding"]
    state = CycleState()
    pi = pending(fw, "pod-a")
    pl.pre_filter(state, pi, fw.snapshot.node_infos)
    feasible = [ni for ni in fw.snapshot.node_infos if pl.filter(state, pi, ni) is None]
    pre = pl.pre_score(state, pi, feasible)
    if pre is not None:
        return verdict(pre)
    return [pl.score(state, pi, ni) for ni in feasible]


LOCAL = ([upstream_node("node-a"), upstream_node("node-b"), upstream_node("node-c")],
         [pvc("pvc-a", sc="wait-sc", request="50Gi", modes=())],
         [local_pv("pv-a-0", "wait-sc", "200Gi", "node-a"), local_pv("pv-a-1", "wait-sc", "200Gi", "node-a"),
          local_pv("pv-b-0", "wait-sc", "100Gi", "node-b"), local_pv("pv-b-1", "wait-sc", "100Gi", "node-b")])
ZONAL = (ZONAL_NODES, [pvc("pvc-a", sc="wait-sc", request="50Gi", modes=())],
         [zonal_pv("pv-a-0", "200Gi", "region-a", "zone-a"), zonal_pv("pv-a-1", "200Gi", "region-a", "zone-a"),
          zonal_pv("pv-b-0", "100Gi", "region-b", "zone-b"), zonal_pv("pv-b-1", "100Gi", "region-b", "zone-b")])


@pytest.mark.parametrize("name, case, gate, want", [
    ("local volumes with close capacity are preferred", LOCAL, True, [75, 50]),
    ("local volumes with close capacity are preferred (StorageCapacityScoring disabled)", LOCAL, False,
     ("Skip", [])),
    ("zonal volumes with close capacity are preferred", ZONAL, True, [75, 75, 50, 50]),
    ("zonal volumes with close capacity are preferred (StorageCapacityScoring disabled)", ZONAL, False,
     ("Skip", [])),
])
def test_volume_binding_capacity_rows(name, case, gate, want):
    assert _scores(*case, gate) == want


def test_the_default_args_carry_the_shape_from_1_37():
    from kschedx.config.pluginargs import default_plugin_args
    from kschedx.features import default_features

    assert default_plugin_args("VolumeBinding", None, default_features("1.37"))["shape"] == [
        {"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
    assert "shape" not in default_plugin_args("VolumeBinding", None, default_features("1.36"))
