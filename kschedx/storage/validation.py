"""Shape checks for the storage objects the volume plugins read.

The API server would reject these objects; a fixture may still contain
them. An error names the file, the object and the field, instead of
failing deep inside a plugin.
"""

from __future__ import annotations

from ..util.errors import InputError
from ..sources.admission import object_ref

MAP, LIST, STR, INT = dict, list, str, int
_NAMES = {dict: "a mapping", list: "a list", str: "a string", int: "an integer"}

_IN_TREE_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi", "cinder", "azureDisk", "azureFile",
                    "vsphereVolume", "portworxVolume", "csi", "local", "hostPath")


def _get(obj, path: str, kind, origin, ref, prefix: str = ""):
    """The value at a dotted path when present, checked against `kind`;
    `prefix` is where `obj` itself sits in the object, for the message."""
    cur = obj
    walked = []
    for part in path.split("."):
        if not isinstance(cur, dict):
            return None
        walked.append(part)
        cur = cur.get(part)
        if cur is None:
            return None
    if kind is INT:
        ok = isinstance(cur, int) and not isinstance(cur, bool)
    else:
        ok = isinstance(cur, kind)
    if not ok:
        raise InputError(f"must be {_NAMES[kind]}", source=origin, obj=ref, field=prefix + ".".join(walked))
    return cur


def _each_map(items, path: str, origin, ref):
    for i, item in enumerate(items or ()):
        if not isinstance(item, dict):
            raise InputError("must be a mapping", source=origin, obj=ref, field=f"{path}[{i}]")
        yield i, item


def _node_selector(obj, path: str, origin, ref):
    required = _get(obj, path, MAP, origin, ref)
    if required is None:
        return
    terms = _get(required, "nodeSelectorTerms", LIST, origin, ref, f"{path}.")
    for i, term in _each_map(terms, f"{path}.nodeSelectorTerms", origin, ref):
        where = f"{path}.nodeSelectorTerms[{i}]."
        for group in ("matchExpressions", "matchFields"):
            exprs = _get(term, group, LIST, origin, ref, where)
            for j, expr in _each_map(exprs, f"{where}{group}", origin, ref):
                _get(expr, "values", LIST, origin, ref, f"{where}{group}[{j}].")


def _metadata(obj, origin, ref):
    _get(obj, "metadata.labels", MAP, origin, ref)
    _get(obj, "metadata.annotations", MAP, origin, ref)
    refs = _get(obj, "metadata.ownerReferences", LIST, origin, ref)
    list(_each_map(refs, "metadata.ownerReferences", origin, ref))


def check_storage_object(obj: dict, origin) -> None:
    kind = obj.get("kind")
    ref = object_ref(obj)
    _metadata(obj, origin, ref)
    if kind == "PersistentVolume":
        _get(obj, "spec", MAP, origin, ref)
        _get(obj, "spec.accessModes", LIST, origin, ref)
        _get(obj, "spec.claimRef", MAP, origin, ref)
        _get(obj, "spec.storageClassName", STR, origin, ref)
        for src in _IN_TREE_SOURCES:
            _get(obj, f"spec.{src}", MAP, origin, ref)
        _get(obj, "spec.nodeAffinity", MAP, origin, ref)
        _node_selector(obj, "spec.nodeAffinity.required", origin, ref)
        _get(obj, "status", MAP, origin, ref)
    elif kind == "PersistentVolumeClaim":
        _get(obj, "spec", MAP, origin, ref)
        _get(obj, "spec.accessModes", LIST, origin, ref)
        _get(obj, "spec.storageClassName", STR, origin, ref)
        _get(obj, "spec.volumeName", STR, origin, ref)
        _get(obj, "spec.resources", MAP, origin, ref)
        sel = _get(obj, "spec.selector", MAP, origin, ref)
        if sel is not None:
            _get(sel, "matchLabels", MAP, origin, ref, "spec.selector.")
            list(_each_map(_get(sel, "matchExpressions", LIST, origin, ref, "spec.selector."),
                           "spec.selector.matchExpressions", origin, ref))
        _get(obj, "status", MAP, origin, ref)
    elif kind == "StorageClass":
        _get(obj, "provisioner", STR, origin, ref)
        _get(obj, "volumeBindingMode", STR, origin, ref)
        terms = _get(obj, "allowedTopologies", LIST, origin, ref)
        for i, term in _each_map(terms, "allowedTopologies", origin, ref):
            where = f"allowedTopologies[{i}].matchLabelExpressions"
            exprs = _get(term, "matchLabelExpressions", LIST, origin, ref, f"allowedTopologies[{i}].")
            for j, expr in _each_map(exprs, where, origin, ref):
                _get(expr, "values", LIST, origin, ref, f"{where}[{j}].")
    elif kind == "CSINode":
        drivers = _get(obj, "spec.drivers", LIST, origin, ref)
        for i, d in _each_map(drivers, "spec.drivers", origin, ref):
            alloc = d.get("allocatable")
            if alloc is not None and not isinstance(alloc, dict):
                raise InputError("must be a mapping", source=origin, obj=ref, field=f"spec.drivers[{i}].allocatable")
            count = (alloc or {}).get("count")
            if count is not None and (not isinstance(count, int) or isinstance(count, bool)):
                raise InputError("must be an integer", source=origin, obj=ref,
                                 field=f"spec.drivers[{i}].allocatable.count")
    elif kind == "CSIDriver":
        _get(obj, "spec", MAP, origin, ref)
    elif kind == "CSIStorageCapacity":
        _get(obj, "storageClassName", STR, origin, ref)
        _get(obj, "nodeTopology", MAP, origin, ref)
    elif kind == "VolumeAttachment":
        _get(obj, "spec", MAP, origin, ref)
        _get(obj, "spec.source", MAP, origin, ref)


def check_pod_volumes(pod: dict, origin) -> None:
    """spec.volumes: a list of mappings whose sources are mappings."""
    spec = pod.get("spec")
    if not isinstance(spec, dict) or spec.get("volumes") is None:
        return  # most pods: nothing to check
    ref = object_ref(pod)
    vols = _get(pod, "spec.volumes", LIST, origin, ref)
    for i, v in _each_map(vols, "spec.volumes", origin, ref):
        for key, value in v.items():
            if key != "name" and value is not None and not isinstance(value, dict):
                raise InputError("must be a mapping", source=origin, obj=ref, field=f"spec.volumes[{i}].{key}")
