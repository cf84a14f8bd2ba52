"""Type checks for the fields the scheduler reads, before anything reads them.

The API server rejects an object whose fields have the wrong type (a label
value that is a number, tolerations given as a mapping); a fixture may hold
one anyway. Catching it here turns what would be a crash deep inside a plugin
into an InputError naming the file, the object and the exact field.
Only the shape is checked; values are the plugins' business.
"""

from __future__ import annotations

from datetime import datetime

from ..errors import InputError


def _is_str(v):
    return isinstance(v, str)


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _is_bool(v):
    return isinstance(v, bool)


def _is_map(v):
    return isinstance(v, dict)


def _is_list(v):
    return isinstance(v, list)


def _is_time(v):
    # YAML turns an unquoted 2024-01-01T00:00:00Z into a datetime.
    return isinstance(v, (str, datetime))


_WANT = {_is_str: "a string", _is_int: "an integer", _is_bool: "true or false", _is_map: "a mapping",
         _is_list: "a list", _is_time: "an RFC 3339 time"}

# (path, check). "x[]" walks every item of the list x; "x{}" every value of
# the mapping x. Absent or null fields are not checked (they are optional).
_SELECTOR_REQUIREMENTS = [("", _is_list), ("[]", _is_map), ("[].key", _is_str), ("[].operator", _is_str),
                          ("[].values", _is_list), ("[].values[]", _is_str)]


def _under(prefix, shape):
    return [(prefix + path, check) for path, check in shape]


_NODE_SELECTOR_TERM = (
    [("", _is_map)]
    + _under(".matchExpressions", _SELECTOR_REQUIREMENTS)
    + _under(".matchFields", _SELECTOR_REQUIREMENTS)
)
_LABEL_SELECTOR = [("", _is_map), (".matchLabels", _is_map), (".matchLabels{}", _is_str)] + _under(
    ".matchExpressions", _SELECTOR_REQUIREMENTS
)
_POD_AFFINITY_TERM = [("", _is_map), (".topologyKey", _is_str), (".namespaces", _is_list), (".namespaces[]", _is_str)] + \
    _under(".labelSelector", _LABEL_SELECTOR) + _under(".namespaceSelector", _LABEL_SELECTOR)
_CONTAINER = [
    ("", _is_map),
    (".name", _is_str),
    (".image", _is_str),
    (".ports", _is_list),
    (".ports[]", _is_map),
    (".ports[].containerPort", _is_int),
    (".ports[].hostPort", _is_int),
    (".ports[].protocol", _is_str),
    (".ports[].hostIP", _is_str),
    (".resources", _is_map),
    (".restartPolicy", _is_str),
]

METADATA = [
    ("metadata.name", _is_str),
    ("metadata.namespace", _is_str),
    ("metadata.labels", _is_map),
    ("metadata.labels{}", _is_str),
    ("metadata.annotations", _is_map),
    ("metadata.annotations{}", _is_str),
    ("metadata.ownerReferences", _is_list),
    ("metadata.ownerReferences[]", _is_map),
    ("metadata.ownerReferences[].kind", _is_str),
    ("metadata.ownerReferences[].name", _is_str),
    ("metadata.ownerReferences[].controller", _is_bool),
    ("metadata.creationTimestamp", _is_time),
]

POD = METADATA + [
    ("spec.nodeName", _is_str),
    ("spec.schedulerName", _is_str),
    ("spec.priorityClassName", _is_str),
    ("spec.nodeSelector", _is_map),
    ("spec.nodeSelector{}", _is_str),
    ("spec.hostNetwork", _is_bool),
    ("spec.tolerations", _is_list),
    ("spec.tolerations[]", _is_map),
    ("spec.tolerations[].key", _is_str),
    ("spec.tolerations[].operator", _is_str),
    ("spec.tolerations[].value", _is_str),
    ("spec.tolerations[].effect", _is_str),
    ("spec.tolerations[].tolerationSeconds", _is_int),
    ("spec.schedulingGates", _is_list),
    ("spec.schedulingGates[]", _is_map),
    ("spec.schedulingGates[].name", _is_str),
    ("spec.affinity", _is_map),
    ("spec.affinity.nodeAffinity", _is_map),
    ("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution", _is_map),
    ("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms", _is_list),
    *_under("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[]",
            _NODE_SELECTOR_TERM),
    ("spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution", _is_list),
    ("spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[]", _is_map),
    ("spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[].weight", _is_int),
    *_under("spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[].preference",
            _NODE_SELECTOR_TERM),
    *[
        item
        for kind in ("podAffinity", "podAntiAffinity")
        for item in [
            (f"spec.affinity.{kind}", _is_map),
            (f"spec.affinity.{kind}.requiredDuringSchedulingIgnoredDuringExecution", _is_list),
            *_under(f"spec.affinity.{kind}.requiredDuringSchedulingIgnoredDuringExecution[]", _POD_AFFINITY_TERM),
            (f"spec.affinity.{kind}.preferredDuringSchedulingIgnoredDuringExecution", _is_list),
            (f"spec.affinity.{kind}.preferredDuringSchedulingIgnoredDuringExecution[]", _is_map),
            (f"spec.affinity.{kind}.preferredDuringSchedulingIgnoredDuringExecution[].weight", _is_int),
            *_under(f"spec.affinity.{kind}.preferredDuringSchedulingIgnoredDuringExecution[].podAffinityTerm",
                    _POD_AFFINITY_TERM),
        ]
    ],
    ("spec.topologySpreadConstraints", _is_list),
    ("spec.topologySpreadConstraints[]", _is_map),
    ("spec.topologySpreadConstraints[].maxSkew", _is_int),
    ("spec.topologySpreadConstraints[].topologyKey", _is_str),
    ("spec.topologySpreadConstraints[].whenUnsatisfiable", _is_str),
    *_under("spec.topologySpreadConstraints[].labelSelector", _LABEL_SELECTOR),
    ("spec.volumes", _is_list),
    ("spec.volumes[]", _is_map),
    ("spec.resourceClaims", _is_list),
    ("spec.resourceClaims[]", _is_map),
    ("spec.containers", _is_list),
    *_under("spec.containers[]", _CONTAINER),
    ("spec.initContainers", _is_list),
    *_under("spec.initContainers[]", _CONTAINER),
    ("status", _is_map),
    ("status.nominatedNodeName", _is_str),
]

NODE = METADATA + [
    ("spec", _is_map),
    ("spec.unschedulable", _is_bool),
    ("spec.taints", _is_list),
    ("spec.taints[]", _is_map),
    ("spec.taints[].key", _is_str),
    ("spec.taints[].value", _is_str),
    ("spec.taints[].effect", _is_str),
    ("status", _is_map),
    ("status.images", _is_list),
    ("status.images[]", _is_map),
    ("status.images[].names", _is_list),
    ("status.images[].names[]", _is_str),
    ("status.images[].sizeBytes", _is_int),
]


class _Tree:
    """The paths of a shape merged into one tree, so that a walk visits each
    present field once and skips absent subtrees at once (pods are many)."""

    __slots__ = ("checks", "keys", "items", "values", "types", "no_bool", "leaf")

    def __init__(self):
        self.checks = []
        self.keys: dict[str, _Tree] = {}
        self.items: _Tree | None = None
        self.values: _Tree | None = None
        # The checks as one isinstance() test (see _finish).
        self.types: tuple | None = None
        self.no_bool = False
        self.leaf = False


# What each check accepts, as isinstance() types (_is_int also refuses bool).
_TYPES = {_is_str: (str,), _is_int: (int,), _is_bool: (bool,), _is_map: (dict,), _is_list: (list,),
          _is_time: (str, datetime)}


def _finish(tree: _Tree) -> None:
    checks = set(tree.checks)
    if len(checks) == 1:
        (check,) = checks
        tree.types = _TYPES[check]
        tree.no_bool = check is _is_int
    elif not checks:
        tree.types = (object,)
    tree.leaf = not tree.keys and tree.items is None and tree.values is None
    for sub in (*tree.keys.values(), tree.items, tree.values):
        if sub is not None:
            _finish(sub)


def _compile(shape) -> _Tree:
    root = _Tree()
    for path, check in shape:
        node = root
        for part in path.replace("[]", ".[]").replace("{}", ".{}").split("."):
            if not part:
                continue
            if part == "[]":
                node.items = node.items or _Tree()
                node = node.items
            elif part == "{}":
                node.values = node.values or _Tree()
                node = node.values
            else:
                node = node.keys.setdefault(part, _Tree())
        node.checks.append(check)
    _finish(root)
    return root


def _accepts(tree: _Tree, value) -> bool:
    if tree.types is None:
        return all(check(value) for check in tree.checks)
    return isinstance(value, tree.types) and not (tree.no_bool and value.__class__ is bool)


def _valid(value, tree: _Tree) -> bool:
    """Whether `value` passes every check: the fast path for correct input,
    which is nearly all of it. It may look at fields in any order; _walk,
    which names the first wrong field in shape order, runs only on failure."""
    return _accepts(tree, value) and _valid_fields(value, tree)


def _valid_fields(value, tree: _Tree) -> bool:
    """The checks below `value` (its own are done)."""
    keys = tree.keys
    if keys and isinstance(value, dict):
        # Only the fields present: objects hold few of the fields the shape
        # knows about. Leaves are checked here, without a call.
        for key, v in value.items():
            sub = keys.get(key)
            if sub is None or v is None:
                continue
            if sub.types is None or not isinstance(v, sub.types) or (sub.no_bool and v.__class__ is bool):
                if not _accepts(sub, v):
                    return False
            if not sub.leaf and not _valid_fields(v, sub):
                return False
    items = tree.items
    if items is not None and isinstance(value, list):
        for v in value:
            if not _valid(v, items):
                return False
    values = tree.values
    if values is not None and isinstance(value, dict):
        if values.leaf and values.types is not None and not values.no_bool:
            # Label and annotation values: one isinstance() each.
            types = values.types
            for v in value.values():
                if not isinstance(v, types):
                    return False
        else:
            for v in value.values():
                if not _valid(v, values):
                    return False
    return True


def _walk(value, tree: _Tree, where: str):
    """The first (value, field path, check) that fails, or None."""
    for check in tree.checks:
        if not check(value):
            return value, where, check
    if tree.keys and isinstance(value, dict):
        for key, sub in tree.keys.items():
            v = value.get(key)
            if v is not None:
                bad = _walk(v, sub, f"{where}.{key}" if where else key)
                if bad:
                    return bad
    if tree.items is not None and isinstance(value, list):
        for i, item in enumerate(value):
            bad = _walk(item, tree.items, f"{where}[{i}]")
            if bad:
                return bad
    if tree.values is not None and isinstance(value, dict):
        for k, item in value.items():
            bad = _walk(item, tree.values, f"{where}[{k}]")
            if bad:
                return bad
    return None


_POD = _compile(POD)
_NODE = _compile(NODE)
_METADATA = _compile(METADATA)


def check_shape(obj: dict, origin, ref: str) -> None:
    """Raise InputError for the first field of `obj` that has the wrong type."""
    kind = obj.get("kind")
    tree = _POD if kind == "Pod" else _NODE if kind == "Node" else _METADATA
    if _valid(obj, tree):
        return
    bad = _walk(obj, tree, "")
    if bad is None:
        return
    value, where, check = bad
    got = "a mapping" if isinstance(value, dict) else "a list" if isinstance(value, list) else \
        f"{type(value).__name__} {value!r}"
    hint = " (quote it in YAML)" if check is _is_str and not isinstance(value, (dict, list)) else ""
    raise InputError(f"must be {_WANT[check]}, not {got}{hint}", source=origin, obj=ref, field=where)
