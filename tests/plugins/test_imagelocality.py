"""ImageLocality Score (upstream image_locality_test.go TestImageLocalityPriority,
TestNormalizedImageName), and the images of image volumes counted from 1.36
(kubernetes/kubernetes#130231; its test rows not readable, the cases below are
worked out from v1.36.2's sumImageScores and calculatePriority)."""

import hashlib

import pytest
from builders import container, framework_for, image, make_node, make_pod, run_score

from kschedx.features import default_features
from kschedx.plugins.imagelocality import ImageLocality, normalized_image_name

# The version this module holds its plugins to: named, so that a newer
# version (the default) does not change what these tables mean.
VERSION = "1.35"

MB = 1024 * 1024

NODE_40_300_2000 = [image(40 * MB, "gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"),
                    image(300 * MB, "gcr.io/300:latest", "gcr.io/300:v1"), image(2000 * MB, "gcr.io/2000:latest")]
NODE_250_10 = [image(250 * MB, "gcr.io/250:latest"), image(10 * MB, "gcr.io/10:latest", "gcr.io/10:v1")]
NODE_600_40_900 = [image(600 * MB, "gcr.io/600:latest"), image(40 * MB, "gcr.io/40:latest"),
                   image(900 * MB, "gcr.io/900:latest")]
NODE_300_600_900 = [image(300 * MB, "gcr.io/300:latest"), image(600 * MB, "gcr.io/600:latest"),
                    image(900 * MB, "gcr.io/900:latest")]
NODE_4000_30 = [image(4000 * MB, "gcr.io/4000:latest"), image(30 * MB, "gcr.io/30:latest")]
NODE_20_30_40 = [image(20 * MB, "gcr.io/20:latest"), image(30 * MB, "gcr.io/30:latest"), image(40 * MB, "gcr.io/40:latest")]


def pod(*images, init=()):
    return make_pod(containers=[container(f"c{i}", image=im) for i, im in enumerate(images)],
                    init_containers=[container(f"i{i}", image=im) for i, im in enumerate(init)] or None)


CASES = [
    ("two images spread on two nodes, prefer the larger image one", pod("gcr.io/40", "gcr.io/250"),
     [("node1", NODE_40_300_2000), ("node2", NODE_250_10)], [("node1", 0), ("node2", 5)]),
    ("two images on one node, prefer this node", pod("gcr.io/40", "gcr.io/300"),
     [("node1", NODE_40_300_2000), ("node2", NODE_250_10)], [("node1", 7), ("node2", 0)]),
    ("if exceed limit, use limit", pod("gcr.io/10", "gcr.io/4000"),
     [("node1", NODE_4000_30), ("node2", NODE_250_10)], [("node1", 100), ("node2", 0)]),
    ("if exceed limit, use limit (node without images)", pod("gcr.io/10", "gcr.io/4000"),
     [("node1", NODE_4000_30), ("node2", NODE_250_10), ("node3", [])], [("node1", 66), ("node2", 0), ("node3", 0)]),
    ("pod with multiple large images, node2 is preferred", pod("gcr.io/300", "gcr.io/600", "gcr.io/900"),
     [("node1", NODE_600_40_900), ("node2", NODE_300_600_900), ("node3", [])],
     [("node1", 32), ("node2", 36), ("node3", 0)]),
    ("pod with multiple small images", pod("gcr.io/30", "gcr.io/40"),
     [("node1", NODE_20_30_40), ("node2", NODE_4000_30)], [("node1", 1), ("node2", 0)]),
    ("include InitContainers", pod("gcr.io/30", init=["gcr.io/300"]),
     [("node1", NODE_40_300_2000), ("node2", NODE_20_30_40)], [("node1", 6), ("node2", 0)]),
]


@pytest.mark.parametrize("name, the_pod, nodes, expected", CASES, ids=[c[0] for c in CASES])
def test_image_locality(name, the_pod, nodes, expected):
    fw = framework_for([make_node(n, images=imgs) for n, imgs in nodes], version=VERSION)
    infos = [fw.snapshot.get(n) for n, _ in nodes]
    assert run_score(ImageLocality(fw), the_pod, infos) == expected


def volume_pod(containers, volume_images):
    the_pod = pod(*containers)
    the_pod["spec"]["volumes"] = [{"name": f"v{i}", "image": {"reference": ref}} for i, ref in enumerate(volume_images)]
    return the_pod


# Each image is on one of the two nodes: spread 0.5, half its size counts.
VOLUME_CASES = [
    # 20MiB + 150MiB over one container: 100 * (170 - 23) / (1000 - 23) = 15; without the volume under 23MiB.
    ("an image volume adds its image", volume_pod(["gcr.io/40"], ["gcr.io/300"]), [("node1", 15), ("node2", 0)],
     [("node1", 0), ("node2", 0)]),
    # 1000MiB reached with one container: the threshold grows with containers only (v1.36.2).
    ("the threshold counts containers, not volumes", volume_pod(["gcr.io/10"], ["gcr.io/2000"]),
     [("node1", 100), ("node2", 0)], [("node1", 0), ("node2", 0)]),
    # The same image as container and volume: counted twice (150 + 150 -> 28; 150 alone -> 12).
    ("an image used twice counts twice", volume_pod(["gcr.io/300"], ["gcr.io/300"]), [("node1", 28), ("node2", 0)],
     [("node1", 12), ("node2", 0)]),
]


@pytest.mark.parametrize("name, the_pod, v136, v135", VOLUME_CASES, ids=[c[0] for c in VOLUME_CASES])
def test_image_volumes_count_from_1_36(name, the_pod, v136, v135):
    nodes = [("node1", NODE_40_300_2000), ("node2", NODE_250_10)]
    for version, expected in (("1.36", v136), ("1.35", v135)):
        fw = framework_for([make_node(n, images=imgs) for n, imgs in nodes], features=default_features(version))
        infos = [fw.snapshot.get(n) for n, _ in nodes]
        assert run_score(ImageLocality(fw), the_pod, infos) == expected, version
        # score_all, the batch path, agrees.
        from kschedx.framework.cycle_state import CycleState
        from kschedx.state.types import PodInfo

        assert ImageLocality(fw).score_all(CycleState(), PodInfo(the_pod), infos) == [s for _, s in expected]


def digest(content):
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


@pytest.mark.parametrize(
    "name, want",
    [
        ("root", "root:latest"),
        ("gcr.io:5000/root", "gcr.io:5000/root:latest"),
        ("root:tag", "root:tag"),
        ("root@" + digest("root"), "root@" + digest("root")),
    ],
)
def test_normalized_image_name(name, want):
    assert normalized_image_name(name) == want


def test_image_spread_counts_nodes_holding_the_image_name():
    # The same image on 1 of 2 nodes scores half its size: 400MB * 1/2 = 200MB.
    nodes = [make_node("a", images=[image(400 * MB, "img:1")]), make_node("b")]
    fw = framework_for(nodes, version=VERSION)
    got = run_score(ImageLocality(fw), pod("img:1"), list(fw.snapshot.node_infos))
    # 100 * (200M - 23M) / (1000M - 23M) = 18
    assert got == [("a", 18), ("b", 0)]
