"""DynamicResources' story of one node (render/dra.py): the lines `--node`
prints from the filter's details."""

from kschedx.render.dra import dra_lines


def test_constraints_and_allocated_claims():
    details = {
        "allocatedClaims": [
            {"claim": "default/ready", "allocated": True, "availableOnNode": True},
            {"claim": "default/waiting", "allocated": True, "availableOnNode": False,
             "binding": "binding conditions not met within the binding timeout"},
        ],
        "claims": [{
            "claim": "default/c",
            "constraints": [{"matchAttribute": "gpu.example.com/model", "requests": ["a", "b"]},
                            {"distinctAttribute": "gpu.example.com/numa", "requests": []}],
            "requests": [{"request": "a", "deviceClass": "gpu", "allocationMode": "ExactCount", "count": 1,
                          "eligible": 1, "candidates": [
                              {"device": "gpu.example.com/n1/gpu-0", "reason": None, "allocated": True},
                              {"device": "gpu.example.com/n1/gpu-1",
                               "reason": "has taint broken=yes:NoSchedule, which the request does not tolerate"}]}],
        }],
    }
    assert dra_lines(details, "") == [
        "claim default/ready: already allocated, available on this node",
        "claim default/waiting: already allocated, not usable: binding conditions not met within the binding timeout",
        "claim default/c",
        "  constraint: same gpu.example.com/model for a, b",
        "  constraint: a different gpu.example.com/numa for each of all requests",
        "  request a: 1 of class gpu, 1 usable",
        "    ✓ gpu.example.com/n1/gpu-0: allocated",
        "    ✗ gpu.example.com/n1/gpu-1: has taint broken=yes:NoSchedule, which the request does not tolerate",
    ]
