"""Type checks for the fields the scheduler reads, before anything reads them.

The API server rejects an object whose fields have the wrong type (a label
value that is a number, tolerations given as a mapping); a fixture may hold
one anyway. Catching it here turns what would be a crash deep inside a plugin
into an InputError naming the file, the object and the exact field.
Only the shape is checked; values are the plugins' business.
"""

from __future__ import annotations

from ..util.errors import InputError


from .shapes import DOCUMENTS, SHAPES
from .shapes.checks import QUANTITY, REQUIRED, Check

# The API server's "Required value": a field that must be present and not null.
_REQUIRED_CHECK = Check((object,), "a value", value_check=lambda v: "required value" if v is None else None)


class _Tree:
    """The paths of a shape merged into one tree, so that a walk visits each
    present field once and skips absent subtrees at once (pods are many)."""

    __slots__ = ("checks", "keys", "items", "values", "types", "no_bool", "leaf", "required")

    def __init__(self):
        self.checks = []
        # Keys that must be present and not null when this mapping is.
        self.required: tuple = ()
        self.keys: dict[str, _Tree] = {}
        self.items: _Tree | None = None
        self.values: _Tree | None = None
        # The checks as one isinstance() test (see _finish).
        self.types: tuple | None = None
        self.no_bool = False
        self.leaf = False


def _finish(tree: _Tree) -> None:
    checks = set(tree.checks)
    if len(checks) == 1 and next(iter(checks)).value_check is None:
        (check,) = checks
        tree.types = check.types
        tree.no_bool = check.no_bool
    elif not checks:
        tree.types = (object,)
    tree.leaf = not tree.keys and tree.items is None and tree.values is None and not tree.required
    for sub in (*tree.keys.values(), tree.items, tree.values):
        if sub is not None:
            _finish(sub)


def _compile(shape) -> _Tree:
    root = _Tree()
    for path, check, *flags in shape:
        node = root
        parent = None
        for part in path.replace("[]", ".[]").replace("{}", ".{}").split("."):
            parent = node
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
        if REQUIRED in flags:
            parent.required = (*parent.required, path.rsplit(".", 1)[-1])
    _finish(root)
    return root


def _accepts(tree: _Tree, value) -> bool:
    if tree.types is None:
        return all(check.accepts(value) for check in tree.checks)
    return isinstance(value, tree.types) and not (tree.no_bool and value.__class__ is bool)


def _valid(value, tree: _Tree) -> bool:
    """Whether `value` passes every check: the fast path for correct input,
    which is nearly all of it. It may look at fields in any order; _walk,
    which names the first wrong field in shape order, runs only on failure."""
    return _accepts(tree, value) and _valid_fields(value, tree)


def _valid_fields(value, tree: _Tree) -> bool:
    """The checks below `value` (its own are done)."""
    keys = tree.keys
    if tree.required and isinstance(value, dict):
        for key in tree.required:
            if value.get(key) is None:
                return False
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
        types = items.types
        if types is not None and not items.no_bool:
            # Lists of mappings (ownerReferences, containers...): _valid inlined.
            leaf = items.leaf
            for v in value:
                if not isinstance(v, types) or not (leaf or _valid_fields(v, items)):
                    return False
        else:
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


# A mapping whose shape knows at most this many fields is checked by
# looking each one up; a bigger one by walking the fields present.
_LOOKED_UP_FIELDS = 12


def _compiled(tree: _Tree):
    """A function with the verdict of _valid_fields(value, tree), written as
    Python source for this tree and compiled: the walk without reading the
    tree at every field. For the check every pod takes (a pod but its spec,
    150,000 times in a big snapshot); compiling costs about a millisecond."""
    names: dict = {"_accepts": _accepts}
    lines: list[str] = []
    made: dict[int, str] = {}
    tables: list[dict] = []

    def const(value) -> str:
        name = f"c{len(names)}"
        names[name] = value
        return name

    def fails_type(sub: _Tree, x: str) -> str:
        test = f"not isinstance({x}, {const(sub.types)})"
        return test + f" or {x}.__class__ is bool" if sub.no_bool else test

    def field_checks(sub: _Tree, x: str, indent: str) -> list[str]:
        """As _valid_fields checks a mapping's field `x` against `sub`."""
        out = [f"{indent}if not _accepts({const(sub)}, {x}): return False" if sub.types is None
               else f"{indent}if {fails_type(sub, x)}: return False"]
        if not sub.leaf:
            out.append(f"{indent}if not {function(sub)}({x}): return False")
        return out

    def member_checks(sub: _Tree, x: str, indent: str) -> list[str]:
        """As _valid_fields checks a list item or a map value `x` (None included)."""
        if sub.types is not None and not sub.no_bool:
            return field_checks(sub, x, indent)
        return [f"{indent}if not (_accepts({const(sub)}, {x}) and {function(sub)}({x})): return False"]

    def function(node: _Tree) -> str:
        name = made.get(id(node))
        if name is not None:
            return name
        name = made[id(node)] = f"f{len(made)}"
        body = []
        if node.required or node.keys or node.values is not None:
            body.append(" if isinstance(value, dict):")
            for key in node.required:
                body.append(f"  if value.get({key!r}) is None: return False")
            if node.keys and len(node.keys) <= _LOOKED_UP_FIELDS:
                for key, sub in node.keys.items():
                    body += [f"  x = value.get({key!r})", "  if x is not None:", *field_checks(sub, "x", "   ")]
            elif node.keys:
                table = {}
                for key, sub in node.keys.items():
                    check = table[key] = f"k{len(names)}"
                    names[check] = None
                    checks = field_checks(sub, "x", " ")  # may define functions: before this one
                    lines.extend([f"def {check}(x):", *checks, " return True"])
                tables.append(table)
                body += [f"  fields = {const(table)}", "  for key, x in value.items():", "   if x is not None:",
                         "    check = fields.get(key)", "    if check is not None and not check(x): return False"]
            if node.values is not None:
                body += ["  for x in value.values():", *member_checks(node.values, "x", "   ")]
        if node.items is not None:
            body += [" if isinstance(value, list):", "  for x in value:", *member_checks(node.items, "x", "   ")]
        lines.extend([f"def {name}(value):", *body, " return True"])
        return name

    root = function(tree)
    exec(compile("\n".join(lines), "<shape checks>", "exec"), names)
    for table in tables:  # each field's check by name, then the check
        for key, check in table.items():
            table[key] = names[check]
    return names[root]


def _walk(value, tree: _Tree, where: str):
    """The first (value, field path, check) that fails, or None."""
    for check in tree.checks:
        if not check.accepts(value):
            return value, where, check
    if tree.keys and isinstance(value, dict):
        for key, sub in tree.keys.items():
            v = value.get(key)
            if v is None and key in tree.required:
                return None, f"{where}.{key}" if where else key, _REQUIRED_CHECK
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
        # Resource lists are named like fields (requests.cpu), as the API
        # server's messages do; other maps by key (labels[app]).
        dotted = QUANTITY in tree.values.checks
        for k, item in value.items():
            bad = _walk(item, tree.values, f"{where}.{k}" if dotted else f"{where}[{k}]")
            if bad:
                return bad
    return None


# Each kind's tree, compiled when first needed: a run reads a few kinds,
# and compiling them all would cost every start a tenth of its time.
_TREES: dict[str, _Tree] = {}


def _tree(kind) -> _Tree:
    """The kind's tree; a kind without a shape of its own gets metadata's."""
    if kind.__class__ is not str or kind not in SHAPES:
        kind = "*"
    tree = _TREES.get(kind)
    if tree is None:
        tree = _TREES[kind] = _compile(SHAPES[kind])
    return tree


def check_shape(obj: dict, origin, ref: str) -> None:
    """Raise InputError for the first field of `obj` that has the wrong type
    or a value the API server would refuse."""
    _check(obj, _tree(obj.get("kind")), origin, ref)


def _without(tree: _Tree, key: str) -> _Tree:
    """`tree` without one of its top-level fields (and that field's checks)."""
    out = _Tree()
    out.checks, out.types, out.no_bool = tree.checks, tree.types, tree.no_bool
    out.keys = {k: sub for k, sub in tree.keys.items() if k != key}
    out.required = tuple(k for k in tree.required if k != key)
    out.items, out.values = tree.items, tree.values
    out.leaf = not out.keys and out.items is None and out.values is None and not out.required
    return out


_POD_WITHOUT_SPEC = _without(_tree("Pod"), "spec")


def pod_shape_but_spec_valid(pod: dict) -> bool:
    global _pod_but_spec_valid
    if _pod_but_spec_valid is None:
        _pod_but_spec_valid = _compiled(_POD_WITHOUT_SPEC)
    return isinstance(pod, dict) and _pod_but_spec_valid(pod)


_pod_but_spec_valid = None  # _compiled(_POD_WITHOUT_SPEC), made at the first pod


def check_pod_shape_but_spec(pod: dict, origin, ref: str) -> None:
    """check_shape for a pod whose spec equals one already checked: the
    rest of it (metadata, status). The first wrong field is the same as
    check_shape's, which walks fields in shape order and finds none in
    such a spec."""
    _check(pod, _POD_WITHOUT_SPEC, origin, ref)


def check_document(doc, name: str, origin) -> None:
    """The same for a whole document that is not an API object (a
    kubeconfig): the error names the file and the field path."""
    _check(doc, _compile(DOCUMENTS[name]), origin, None)


def _check(obj, tree: _Tree, origin, ref) -> None:
    if _valid(obj, tree):
        return
    bad = _walk(obj, tree, "")
    if bad is None:
        return
    value, where, check = bad
    raise InputError(check.message(value), source=origin, obj=ref, field=where)
