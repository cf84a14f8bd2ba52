"""NodeName Filter (upstream node_name_test.go)."""

import pytest
from builders import make_node, make_pod, node_info, run_filter, verdict

from kschedx.plugins.nodename import NodeName


@pytest.mark.parametrize(
    "pod_node, node, expected",
    [
        pytest.param(None, "foo", ("Success", []), id="no host specified"),
        pytest.param("foo", "foo", ("Success", []), id="host matches"),
        pytest.param("bar", "foo", ("UnschedulableAndUnresolvable", ["node(s) didn't match the requested node name"]),
                     id="host doesn't match"),
    ],
)
def test_node_name(pod_node, node, expected):
    _, st = run_filter(NodeName(None), make_pod(node=pod_node), node_info(make_node(node)))
    assert verdict(st) == expected
