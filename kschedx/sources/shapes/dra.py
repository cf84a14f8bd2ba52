"""resource.k8s.io: the kinds DynamicResources reads (v1; DeviceTaintRule
from v1beta2 or v1alpha3, fixtures only)."""

from __future__ import annotations

from .checks import ANY, BOOL, INT, LIST, MAP, QUANTITY, REQUIRED, STR, TIME
from .common import METADATA, NODE_SELECTOR, TAINTS, resource_list, string_list, under

_SELECTORS = [("", LIST), ("[]", MAP), ("[].cel", MAP), ("[].cel.expression", STR)]

_TOLERATIONS = [("", LIST), ("[]", MAP), ("[].key", STR), ("[].operator", STR), ("[].value", STR),
                ("[].effect", STR), ("[].tolerationSeconds", INT)]

_REQUEST_BODY = [
    (".deviceClassName", STR),
    *under(".selectors", _SELECTORS),
    (".allocationMode", STR),
    (".count", INT),
    (".adminAccess", BOOL),
    *under(".tolerations", _TOLERATIONS),
    (".capacity", MAP),
    *resource_list(".capacity.requests"),
]

_CONFIG = [("", LIST), ("[]", MAP), *string_list("[].requests"), ("[].opaque", MAP), ("[].opaque.driver", STR),
           ("[].opaque.parameters", ANY), ("[].source", STR)]

CLAIM_SPEC = [
    ("", MAP),
    (".devices", MAP),
    (".devices.requests", LIST),
    (".devices.requests[]", MAP),
    (".devices.requests[].name", STR, REQUIRED),
    (".devices.requests[].exactly", MAP),
    *under(".devices.requests[].exactly", _REQUEST_BODY),
    (".devices.requests[].firstAvailable", LIST),
    (".devices.requests[].firstAvailable[]", MAP),
    (".devices.requests[].firstAvailable[].name", STR),
    *under(".devices.requests[].firstAvailable[]", _REQUEST_BODY),
    (".devices.constraints", LIST),
    (".devices.constraints[]", MAP),
    *string_list(".devices.constraints[].requests"),
    (".devices.constraints[].matchAttribute", STR),
    (".devices.constraints[].distinctAttribute", STR),
    *under(".devices.config", _CONFIG),
]

RESOURCE_CLAIM = [
    *METADATA,
    *under("spec", CLAIM_SPEC),
    ("status", MAP),
    ("status.allocation", MAP),
    ("status.allocation.devices", MAP),
    ("status.allocation.devices.results", LIST),
    ("status.allocation.devices.results[]", MAP),
    ("status.allocation.devices.results[].request", STR, REQUIRED),
    ("status.allocation.devices.results[].driver", STR, REQUIRED),
    ("status.allocation.devices.results[].pool", STR, REQUIRED),
    ("status.allocation.devices.results[].device", STR, REQUIRED),
    ("status.allocation.devices.results[].adminAccess", BOOL),
    ("status.allocation.devices.results[].shareID", STR),
    *under("status.allocation.devices.results[].tolerations", _TOLERATIONS),
    *string_list("status.allocation.devices.results[].bindingConditions"),
    *string_list("status.allocation.devices.results[].bindingFailureConditions"),
    *resource_list("status.allocation.devices.results[].consumedCapacity"),
    *under("status.allocation.devices.config", _CONFIG),
    *under("status.allocation.nodeSelector", NODE_SELECTOR),
    ("status.allocation.allocationTimestamp", TIME),
    ("status.reservedFor", LIST),
    ("status.reservedFor[]", MAP),
    ("status.reservedFor[].apiGroup", STR),
    ("status.reservedFor[].resource", STR),
    ("status.reservedFor[].name", STR),
    ("status.reservedFor[].uid", STR),
    ("status.devices", LIST),
    ("status.devices[]", MAP),
    ("status.devices[].driver", STR, REQUIRED),
    ("status.devices[].pool", STR, REQUIRED),
    ("status.devices[].device", STR, REQUIRED),
    ("status.devices[].shareID", STR),
    ("status.devices[].conditions", LIST),
    ("status.devices[].conditions[]", MAP),
    ("status.devices[].conditions[].type", STR, REQUIRED),
    ("status.devices[].conditions[].status", STR, REQUIRED),
    ("status.devices[].conditions[].reason", STR),
    ("status.devices[].conditions[].message", STR),
]

RESOURCE_CLAIM_TEMPLATE = [
    *METADATA,
    ("spec", MAP),
    ("spec.metadata", MAP),
    *under("spec.metadata", [(p[len("metadata"):], c) for p, c in METADATA if p != "metadata"]),
    *under("spec.spec", CLAIM_SPEC),
]

_COUNTERS = [("", MAP), ("{}", MAP), ("{}.value", QUANTITY)]

_DEVICE = [
    ("", MAP),
    (".name", STR, REQUIRED),
    (".attributes", MAP),
    (".attributes{}", MAP),
    (".attributes{}.int", INT),
    (".attributes{}.bool", BOOL),
    (".attributes{}.string", STR),
    (".attributes{}.version", STR),
    (".capacity", MAP),
    (".capacity{}", MAP),
    (".capacity{}.value", QUANTITY),
    (".capacity{}.requestPolicy", MAP),
    (".capacity{}.requestPolicy.default", QUANTITY),
    (".capacity{}.requestPolicy.validValues", LIST),
    (".capacity{}.requestPolicy.validValues[]", QUANTITY),
    (".capacity{}.requestPolicy.validRange", MAP),
    (".capacity{}.requestPolicy.validRange.min", QUANTITY),
    (".capacity{}.requestPolicy.validRange.max", QUANTITY),
    (".capacity{}.requestPolicy.validRange.step", QUANTITY),
    (".consumesCounters", LIST),
    (".consumesCounters[]", MAP),
    (".consumesCounters[].counterSet", STR),
    *under(".consumesCounters[].counters", _COUNTERS),
    (".nodeName", STR),
    *under(".nodeSelector", NODE_SELECTOR),
    (".allNodes", BOOL),
    *under(".taints", TAINTS),
    (".bindsToNode", BOOL),
    *string_list(".bindingConditions"),
    *string_list(".bindingFailureConditions"),
    (".allowMultipleAllocations", BOOL),
]

RESOURCE_SLICE = [
    *METADATA,
    ("spec", MAP, REQUIRED),
    ("spec.driver", STR, REQUIRED),
    ("spec.pool", MAP, REQUIRED),
    ("spec.pool.name", STR, REQUIRED),
    ("spec.pool.generation", INT),
    ("spec.pool.resourceSliceCount", INT),
    ("spec.nodeName", STR),
    *under("spec.nodeSelector", NODE_SELECTOR),
    ("spec.allNodes", BOOL),
    ("spec.perDeviceNodeSelection", BOOL),
    ("spec.devices", LIST),
    *under("spec.devices[]", _DEVICE),
    ("spec.sharedCounters", LIST),
    ("spec.sharedCounters[]", MAP),
    ("spec.sharedCounters[].name", STR, REQUIRED),
    *under("spec.sharedCounters[].counters", _COUNTERS),
]

DEVICE_CLASS = [
    *METADATA,
    ("spec", MAP),
    *under("spec.selectors", _SELECTORS),
    *under("spec.config", _CONFIG),
    ("spec.extendedResourceName", STR),
]

# A taint for the devices a rule selects (DRADeviceTaintRules).
DEVICE_TAINT_RULE = [
    *METADATA,
    ("spec", MAP, REQUIRED),
    ("spec.deviceSelector", MAP),
    ("spec.deviceSelector.driver", STR),
    ("spec.deviceSelector.pool", STR),
    ("spec.deviceSelector.device", STR),
    ("spec.taint", MAP, REQUIRED),
    ("spec.taint.key", STR, REQUIRED),
    ("spec.taint.value", STR),
    ("spec.taint.effect", STR, REQUIRED),
    ("spec.taint.timeAdded", TIME),
]
