"""The extender API (k8s.io/kube-scheduler/extender/v1) as it travels.

Its Go types carry no json tags, so the keys are the Go field names
("Pod", "NodeNames", "FailedNodes"...), nil pointers and maps are `null`,
and replies are decoded the way encoding/json decodes them: a key matches a
field exactly or else case-insensitively, unknown keys are ignored, `null`
leaves a field at its zero value, only the first JSON value of the body is
read, and a value of the wrong type is an error with encoding/json's text.
"""

from __future__ import annotations

import json

from ..config.schema import json_kind

MAX_EXTENDER_PRIORITY = 10


class DecodeError(Exception):
    """The reply could not be decoded: the message is encoding/json's."""


# -- requests -------------------------------------------------------------------
def extender_args(pod: dict, nodes: list[dict] | None, node_names: list[str] | None) -> dict:
    """ExtenderArgs: Nodes (a NodeList) or NodeNames, the other null."""
    return {
        "Pod": pod,
        "Nodes": None if nodes is None else {"metadata": {}, "items": nodes},
        "NodeNames": node_names,
    }


def preemption_args(pod: dict, victims: dict[str, tuple[list[dict], int]], meta: bool) -> dict:
    """ExtenderPreemptionArgs: per node the victims and their PDB violations,
    as whole pods, or (nodeCacheCapable) as MetaPods carrying only the UID."""
    if meta:
        by_node = {node: {"Pods": [{"UID": (p.get("metadata") or {}).get("uid", "")} for p in pods],
                          "NumPDBViolations": pdb}
                   for node, (pods, pdb) in victims.items()}
        return {"Pod": pod, "NodeNameToVictims": None, "NodeNameToMetaVictims": by_node}
    by_node = {node: {"Pods": list(pods), "NumPDBViolations": pdb} for node, (pods, pdb) in victims.items()}
    return {"Pod": pod, "NodeNameToVictims": by_node, "NodeNameToMetaVictims": None}


def binding_args(namespace: str, name: str, uid: str, node: str) -> dict:
    return {"PodName": name, "PodNamespace": namespace, "PodUID": uid, "Node": node}


def encode(value) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


# -- replies --------------------------------------------------------------------
def first_value(body: bytes):
    """json.Decoder.Decode: the first JSON value of the body (what follows it
    is never read)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        text = body.decode("utf-8", "replace")
    stripped = text.lstrip(" \t\r\n")
    if not stripped:
        raise DecodeError("EOF")
    try:
        value, _ = json.JSONDecoder().raw_decode(stripped)
    except json.JSONDecodeError as e:
        if e.pos >= len(stripped):
            raise DecodeError("unexpected EOF") from None
        # encoding/json's words for the first bad character; inside a value
        # its exact context ("after object key"...) is not reproduced.
        where = "looking for beginning of value" if e.pos == 0 else "in JSON value"
        raise DecodeError(f"invalid character {_go_quote_char(stripped[e.pos])} {where}") from None
    return value


def _go_quote_char(ch: str) -> str:
    if ch == "'":
        return "'\\''"
    return f"'{ch}'"


def _mismatch(value, where: str, go_type: str) -> DecodeError:
    jt = json_kind(value)
    if jt == "number":
        jt = f"number {json.dumps(value)}" if isinstance(value, float) else "number"
    return DecodeError(f"json: cannot unmarshal {jt} into {where} of type {go_type}")


def _field(obj: dict, name: str):
    """encoding/json's key matching: the exact name, else the last key equal
    to it ignoring case (later keys overwrite earlier ones)."""
    if name in obj:
        return obj[name]
    found = None
    lower = name.lower()
    for key, value in obj.items():
        if key.lower() == lower:
            found = (value,)
    return None if found is None else found[0]


def _struct(value, type_name: str) -> dict | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _mismatch(value, "Go value", type_name)
    return value


def _string(value, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _mismatch(value, where, "string")
    return value


def _int64(value, where: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _mismatch(value, where, "int64")
    if isinstance(value, float):
        if not value.is_integer():
            raise _mismatch(value, where, "int64")
        value = int(value)
    if not -(2**63) <= value < 2**63:
        raise DecodeError(f"json: cannot unmarshal number {value} into {where} of type int64")
    return value


def _string_map(value, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _mismatch(value, where, "v1.FailedNodesMap")
    return {k: _string(v, where) for k, v in value.items()}


def _string_list(value, where: str) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise _mismatch(value, where, "[]string")
    return [_string(v, where) for v in value]


def filter_result(value) -> dict:
    """ExtenderFilterResult: Nodes (node dicts) or None, NodeNames or None,
    FailedNodes, FailedAndUnresolvableNodes, Error."""
    obj = _struct(value, "v1.ExtenderFilterResult") or {}
    f = "Go struct field ExtenderFilterResult."
    nodes = None
    node_list = _field(obj, "Nodes")
    if node_list is not None:
        if not isinstance(node_list, dict):
            raise _mismatch(node_list, f + "Nodes", "v1.NodeList")
        items = _field(node_list, "items")
        if items is None:
            items = []
        if not isinstance(items, list):
            raise _mismatch(items, f + "Nodes.items", "[]v1.Node")
        for item in items:
            if not isinstance(item, dict):
                raise _mismatch(item, f + "Nodes.items", "v1.Node")
        nodes = items
    return {
        "Nodes": nodes,
        "NodeNames": _string_list(_field(obj, "NodeNames"), f + "NodeNames"),
        "FailedNodes": _string_map(_field(obj, "FailedNodes"), f + "FailedNodes"),
        "FailedAndUnresolvableNodes": _string_map(_field(obj, "FailedAndUnresolvableNodes"),
                                                  f + "FailedAndUnresolvableNodes"),
        "Error": _string(_field(obj, "Error"), f + "Error"),
    }


def host_priority_list(value) -> list[tuple[str, int]]:
    """HostPriorityList: (Host, Score) in the extender's order."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise _mismatch(value, "Go value", "v1.HostPriorityList")
    out = []
    for item in value:
        if item is None:
            out.append(("", 0))
            continue
        if not isinstance(item, dict):
            raise _mismatch(item, "Go value", "v1.HostPriority")
        out.append((_string(_field(item, "Host"), "Go struct field HostPriority.Host"),
                    _int64(_field(item, "Score"), "Go struct field HostPriority.Score")))
    return out


def preemption_result(value) -> dict[str, tuple[list[str], int]] | None:
    """ExtenderPreemptionResult.NodeNameToMetaVictims: node -> (victim UIDs,
    NumPDBViolations); a node mapped to null keeps None."""
    obj = _struct(value, "v1.ExtenderPreemptionResult") or {}
    where = "Go struct field ExtenderPreemptionResult.NodeNameToMetaVictims"
    by_node = _field(obj, "NodeNameToMetaVictims")
    if by_node is None:
        return {}
    if not isinstance(by_node, dict):
        raise _mismatch(by_node, where, "map[string]*v1.MetaVictims")
    out = {}
    for node, victims in by_node.items():
        if victims is None:
            out[node] = None
            continue
        if not isinstance(victims, dict):
            raise _mismatch(victims, where, "v1.MetaVictims")
        pods = _field(victims, "Pods")
        uids = []
        if pods is not None:
            if not isinstance(pods, list):
                raise _mismatch(pods, where + ".Pods", "[]*v1.MetaPod")
            for p in pods:
                if p is None:
                    uids.append(None)
                    continue
                if not isinstance(p, dict):
                    raise _mismatch(p, where + ".Pods", "v1.MetaPod")
                uids.append(_string(_field(p, "UID"), where + ".Pods.UID"))
        out[node] = (uids, _int64(_field(victims, "NumPDBViolations"), where + ".NumPDBViolations"))
    return out


def binding_result(value) -> str:
    """ExtenderBindingResult.Error."""
    obj = _struct(value, "v1.ExtenderBindingResult") or {}
    return _string(_field(obj, "Error"), "Go struct field ExtenderBindingResult.Error")
