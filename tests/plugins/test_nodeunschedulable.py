"""NodeUnschedulable Filter (upstream node_unschedulable_test.go)."""

import pytest
from builders import handle_at, make_node, make_pod, node_info, run_filter, verdict

from kschedx.plugins.nodeunschedulable import NodeUnschedulable

# The version this module holds its plugins to: named, so that a newer
# version (the default) does not change what these tables mean.
VERSION = "1.35"

UNSCHEDULABLE = ("UnschedulableAndUnresolvable", ["node(s) were unschedulable"])
OK = ("Success", [])


@pytest.mark.parametrize(
    "tolerations, unschedulable, expected",
    [
        pytest.param(None, True, UNSCHEDULABLE, id="does not schedule pod to unschedulable node"),
        pytest.param(None, False, OK, id="schedule pod to normal node"),
        pytest.param([{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}], True, OK,
                     id="pod tolerating the unschedulable taint goes to the cordoned node"),
        pytest.param([{"operator": "Exists"}], True, OK, id="tolerate-everything toleration"),
        pytest.param([{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoExecute"}],
                     True, UNSCHEDULABLE, id="wrong effect does not tolerate"),
        pytest.param([{"key": "node.kubernetes.io/unschedulable", "value": "true", "effect": "NoSchedule"}],
                     True, UNSCHEDULABLE, id="Equal with a value does not match the valueless taint"),
    ],
)
def test_node_unschedulable(tolerations, unschedulable, expected):
    pod = make_pod(tolerations=tolerations)
    ni = node_info(make_node("n", unschedulable=unschedulable))
    _, st = run_filter(NodeUnschedulable(handle_at(VERSION)), pod, ni)
    assert verdict(st) == expected
