"""NodeName Filter (upstream node_name_test.go)."""

import pytest
from builders import handle_at, make_node, make_pod, node_info, run_filter, verdict

from kschedx.plugins.nodename import NodeName

# The version this module holds its plugins to: named, so that a newer
# version (the default) does not change what these tables mean.
VERSION = "1.35"


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
    _, st = run_filter(NodeName(handle_at(VERSION)), make_pod(node=pod_node), node_info(make_node(node)))
    assert verdict(st) == expected
