"""Properties of strict validation (sources/schema), on objects hypothesis
builds from the schema itself: a valid object is never flagged, a renamed
field is always found at its exact path, a value of the wrong type always
named at its path, and nothing else is reported."""

from __future__ import annotations

import base64
import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedx.sources.schema import UNKNOWN_FIELD, WRONG_TYPE, validate
from kschedx.sources.schema.model import (ANY, ARRAY, BOOL, BYTES, DURATION, FLOAT, INT, INTORSTRING, MAP, MICROTIME,
                                          QUANTITY, RELEASES, SCHEMAORBOOL, STRING, STRUCT, TIME, schema)

VERSIONS = sorted(RELEASES)
# the kinds kschedx reads, at their preferred version
KINDS = ["Node", "Pod", "Namespace", "PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode",
         "CSIDriver", "CSIStorageCapacity", "VolumeAttachment", "RuntimeClass", "PodDisruptionBudget",
         "PriorityClass", "Service", "ReplicaSet", "StatefulSet", "ReplicationController", "Deployment", "Job",
         "CronJob", "DaemonSet", "ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate",
         "DeviceTaintRule"]
QUANTITIES = ["1", "100m", "1.5Gi", "2e3", "1k", "0", "+1", "5.", 7, 2.5]
NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=8)


def _value(data, t, depth, path, out):
    """A valid value of type t; `out` gets (path, type) of every struct field set."""
    code = t.code
    if code == STRING:
        return data.draw(NAMES)
    if code == INT:
        return data.draw(st.integers(max(t.low, -(1 << 40)), min(t.high, 1 << 40)))
    if code == FLOAT:
        return data.draw(st.floats(-1e6, 1e6, allow_nan=False))
    if code == BOOL:
        return data.draw(st.booleans())
    if code == QUANTITY:
        return data.draw(st.sampled_from(QUANTITIES))
    if code == INTORSTRING:
        return data.draw(st.one_of(st.integers(-(1 << 31), (1 << 31) - 1), st.sampled_from(["25%", "http", "1"])))
    if code == TIME:
        return data.draw(st.sampled_from(["2024-01-01T00:00:00Z", "2023-06-30T23:59:59.5+02:00"]))
    if code == MICROTIME:
        return "2024-01-01T00:00:00.123456Z"
    if code == DURATION:
        return "1m30s"
    if code in (ANY, SCHEMAORBOOL):
        return data.draw(st.sampled_from([True, {"a": [1, "b"]}]))
    if code == BYTES:
        return base64.b64encode(data.draw(st.binary(max_size=6))).decode()
    if code == ARRAY:
        n = 0 if depth > 4 else data.draw(st.integers(0, 2))
        return [_value(data, t.sub, depth + 1, f"{path}[{i}]", out) for i in range(n)]
    if code == MAP:
        n = 0 if depth > 4 else data.draw(st.integers(0, 2))
        return {f"k{i}": _value(data, t.sub, depth + 1, f"{path}.k{i}", out) for i in range(n)}
    if code == STRUCT:
        return _struct(data, t.sub, depth + 1, path, out)
    raise AssertionError(code)


def _struct(data, struct, depth, path, out):
    names = sorted(struct.fields)
    if depth > 5 or not names:
        return {}
    chosen = data.draw(st.lists(st.sampled_from(names), max_size=4, unique=True))
    obj = {}
    for name in chosen:
        t = struct.fields[name]
        where = f"{path}.{name}" if path else name
        obj[name] = _value(data, t, depth, where, out)
        out.append((where, t, struct))
    return obj


def _object(data):
    version = data.draw(st.sampled_from(VERSIONS))
    s = schema(version)
    kind = s.by_kind[data.draw(st.sampled_from(KINDS))][0]
    fields: list = []
    obj = _struct(data, kind.struct, 0, "", fields)
    obj.update(apiVersion=kind.api_version, kind=kind.kind)
    return version, obj, [f for f in fields if f[0] not in ("apiVersion", "kind")]


def _locate(obj, path):
    """(the mapping holding the last key, the key) for a dotted path with [i] indices."""
    import re

    parts = [int(p) if p.isdigit() else p for p in re.split(r"\.|\[(\d+)\]", path) if p]
    for part in parts[:-1]:
        obj = obj[part]
    return obj, parts[-1]


COMMON = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                         HealthCheck.data_too_large])


@COMMON
@given(st.data())
def test_valid_objects_are_never_flagged(data):
    version, obj, _ = _object(data)
    assert validate(obj, version) == []


@COMMON
@given(st.data())
def test_a_renamed_field_is_found_at_its_path(data):
    version, obj, fields = _object(data)
    if not fields:
        return
    path, _t, struct = data.draw(st.sampled_from(fields))
    holder, key = _locate(obj, path)
    new = data.draw(st.sampled_from([key + "s", key[:-1], key.upper(), key + "_", "x" + key]))
    if not new or new in struct.fields:
        return
    holder[new] = holder.pop(key)
    wrong = path[: len(path) - len(key)] + new
    problems = validate(obj, version)
    assert [(p.field, p.message, p.reason) for p in problems] == [(wrong, f'unknown field "{wrong}"', UNKNOWN_FIELD)]


_WRONG = {STRING: [1, True, ["a"], {"a": 1}], INT: ["1", True, 1.5, [1]], BOOL: ["true", 1, {}],
          FLOAT: ["1", False], ARRAY: ["a", 1, {"a": 1}], MAP: ["a", 1, ["a"]], STRUCT: ["a", 1, ["a"], True],
          QUANTITY: ["a lot", True, {"a": 1}], INTORSTRING: [True, 1.5, {"a": 1}], TIME: ["yesterday", 5]}


@COMMON
@given(st.data())
def test_a_value_of_the_wrong_type_is_named_at_its_path(data):
    version, obj, fields = _object(data)
    fields = [f for f in fields if f[1].code in _WRONG]
    if not fields:
        return
    path, t, _struct = data.draw(st.sampled_from(fields))
    holder, key = _locate(obj, path)
    holder[key] = copy.deepcopy(data.draw(st.sampled_from(_WRONG[t.code])))
    problems = validate(obj, version)
    assert [(p.field, p.reason) for p in problems] == [(path, WRONG_TYPE)]
