"""The smaller plugin changes of v1.37, each beside v1.36's outcome: upstream
image_locality_test.go TestImageLocalityPriority (v1.37.2: image volumes in
the threshold), node_name_test.go TestNodeName_PreFilter (v1.37.2),
nodedeclaredfeatures (component-helpers v0.37.2 volumebindmountoptions
feature_test.go: a volume mount with bindMountOptions needs
VolumeBindMountOptions), and the PreFilter that NodeUnschedulable and
TaintToleration gain (Success for every pending pod: only a deferred resize,
an alpha gate kschedx refuses, skips)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from builders import container, framework_for, handle_at, image, make_node, make_pod, run_score
from kschedx.features import Features, default_features
from kschedx.framework.cycle_state import CycleState
from kschedx.plugins.imagelocality import ImageLocality
from kschedx.plugins.nodedeclaredfeatures import STATE_KEY, NodeDeclaredFeatures
from kschedx.plugins.nodename import NodeName
from kschedx.plugins.nodeunschedulable import NodeUnschedulable
from kschedx.plugins.registry import declarations
from kschedx.plugins.tainttoleration import TaintToleration
from kschedx.state.types import PodInfo

VERSION = "1.37"
MB = 1024 * 1024


# -- ImageLocality -------------------------------------------------------------------------------
def _pod(*images, volumes=()):
    p = make_pod(containers=[container(f"c{i}", image=im) for i, im in enumerate(images)])
    if volumes:
        p["spec"]["volumes"] = [{"name": f"v{i}", "image": {"reference": ref}} for i, ref in enumerate(volumes)]
    return p


NODE_300_600_900 = [image(300 * MB, "gcr.io/300:latest"), image(600 * MB, "gcr.io/600:latest"),
                    image(900 * MB, "gcr.io/900:latest")]
NODE_400_30 = [image(400 * MB, "gcr.io/400:latest"), image(30 * MB, "gcr.io/30:latest")]


@pytest.mark.parametrize("name, pod, v137, v136", [
    # 100 * (300M * 1/2 - 23M) / (1000M * 2 - 23M) = 6 (1.36: one container's threshold, 12).
    ("pod with an image volume", _pod("gcr.io/30", volumes=["gcr.io/300"]), [("node1", 6), ("node2", 0)],
     [("node1", 12), ("node2", 0)]),
    ("same images as ImageVolume pod but as regular container images", _pod("gcr.io/30", "gcr.io/300"),
     [("node1", 6), ("node2", 0)], [("node1", 6), ("node2", 0)]),
])
def test_image_locality_priority(name, pod, v137, v136):
    nodes = [("node1", NODE_300_600_900), ("node2", NODE_400_30)]
    for version, want in (("1.37", v137), ("1.36", v136)):
        fw = framework_for([make_node(n, images=imgs) for n, imgs in nodes], version=version)
        assert run_score(ImageLocality(fw), pod, [fw.snapshot.get(n) for n, _ in nodes]) == want, version


# -- NodeName, NodeUnschedulable, TaintToleration: 1.37's PreFilter --------------------------------
@pytest.mark.parametrize("node_name, want", [
    ("node-a", {"node-a"}),  # assigned pod with nodeName set, prefilter restricts to assigned node
    (None, None),  # unassigned pod without nodeName set, prefilter returns nil
])
def test_node_name_pre_filter(node_name, want):
    result, status = NodeName(handle_at(VERSION)).pre_filter(CycleState(), PodInfo(make_pod(node=node_name)), [])
    assert status is None
    assert (result.node_names if result is not None else None) == want


@pytest.mark.parametrize("version, with_pre_filter", [("1.35", False), ("1.36", False), ("1.37", True)])
def test_pre_filter_points_of_1_37(version, with_pre_filter):
    reg = declarations(default_features(version))
    for plugin in (NodeName, NodeUnschedulable, TaintToleration):
        assert ("preFilter" in reg[plugin.name].points_for(default_features(version))) is with_pre_filter
        assert plugin(handle_at(VERSION)).pre_filter(CycleState(), PodInfo(make_pod()), []) == (None, None)


# -- NodeDeclaredFeatures: VolumeBindMountOptions --------------------------------------------------
def _mounting(options, group="containers"):
    c = container("c")
    c["volumeMounts"] = [{"name": "data", "mountPath": "/data", **({"bindMountOptions": options} if options else {})}]
    p = make_pod("p")
    p["spec"][group] = [c]
    return p


@pytest.mark.parametrize("pod, v137", [
    (_mounting(["nosuid"]), ("VolumeBindMountOptions",)),
    (_mounting(["nosuid"], "initContainers"), ("VolumeBindMountOptions",)),
    (_mounting(["nosuid"], "ephemeralContainers"), ("VolumeBindMountOptions",)),
    (_mounting(None), None),
])
def test_volume_bind_mount_options_inferred_from_1_37(pod, v137):
    for features, want in ((Features("1.37"), v137), (Features("1.36"), None)):
        pl = NodeDeclaredFeatures(SimpleNamespace(features=features))
        state = CycleState()
        pl.pre_filter(state, PodInfo(pod), [])
        assert state.read(STATE_KEY) == want, features.version
