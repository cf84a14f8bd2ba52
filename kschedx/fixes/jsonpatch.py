"""RFC 6902 JSON Patch and RFC 6901 JSON Pointer, on plain dicts and lists.

Fixes are written as JSON Patches against the object as it is in the
snapshot or POD_FILE; this applies them (to check a fix, and in the tests
that re-run every proposed fix). The document given is never changed: the
patched copy is returned.
"""

from __future__ import annotations

import copy


class PatchError(ValueError):
    """The patch cannot be applied to this document (RFC 6902 section 5)."""


def escape(token: str) -> str:
    """One reference token of a JSON Pointer: '~' -> '~0', '/' -> '~1'."""
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer(*tokens) -> str:
    return "".join("/" + escape(t) for t in tokens)


def parse_pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not isinstance(path, str) or not path.startswith("/"):
        raise PatchError(f"invalid JSON Pointer {path!r}: must be empty or start with '/'")
    tokens = path[1:].split("/")
    for t in tokens:
        rest = t.replace("~0", "").replace("~1", "")
        if "~" in rest:
            raise PatchError(f"invalid JSON Pointer {path!r}: '~' must be followed by 0 or 1")
    return [t.replace("~1", "/").replace("~0", "~") for t in tokens]


def _index(token: str, length: int, *, allow_end: bool, path: str) -> int:
    if token == "-" and allow_end:
        return length
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise PatchError(f"{path}: {token!r} is not an array index")
    i = int(token)
    if i > length or (i == length and not allow_end):
        raise PatchError(f"{path}: index {i} is out of range (array of {length})")
    return i


def _walk(doc, tokens: list[str], path: str):
    """The value reached by following `tokens` from `doc`."""
    node = doc
    for t in tokens:
        if isinstance(node, dict):
            if t not in node:
                raise PatchError(f"{path}: {t!r} does not exist")
            node = node[t]
        elif isinstance(node, list):
            node = node[_index(t, len(node), allow_end=False, path=path)]
        else:
            raise PatchError(f"{path}: cannot descend into a {type(node).__name__}")
    return node


def _parent(doc, tokens: list[str], path: str):
    """The container holding the last token's target."""
    return _walk(doc, tokens[:-1], path)


def resolve(doc, path: str):
    """The value a JSON Pointer names."""
    return _walk(doc, parse_pointer(path), path)


def _add(doc, path: str, value):
    tokens = parse_pointer(path)
    if not tokens:
        return value
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(last, len(parent), allow_end=True, path=path), value)
    else:
        raise PatchError(f"{path}: the parent is a {type(parent).__name__}, not an object or array")
    return doc


def _remove(doc, path: str):
    tokens = parse_pointer(path)
    if not tokens:
        raise PatchError("cannot remove the whole document")
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"{path}: {last!r} does not exist")
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_index(last, len(parent), allow_end=False, path=path))
    raise PatchError(f"{path}: the parent is a {type(parent).__name__}, not an object or array")


def _equal(a, b) -> bool:
    """JSON equality: numbers by value, but true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    return a == b and (isinstance(a, (int, float)) == isinstance(b, (int, float)))


def apply_patch(doc, patch: list[dict]):
    """The document with every operation applied in order; PatchError (and
    the document unchanged) when one cannot be."""
    if not isinstance(patch, list):
        raise PatchError("a JSON Patch is an array of operations")
    doc = copy.deepcopy(doc)
    for n, op in enumerate(patch):
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError(f"operation {n}: needs 'op' and 'path'")
        kind, path = op["op"], op["path"]
        if kind in ("add", "replace", "test") and "value" not in op:
            raise PatchError(f"operation {n} ({kind}): needs 'value'")
        if kind in ("move", "copy") and "from" not in op:
            raise PatchError(f"operation {n} ({kind}): needs 'from'")
        if kind == "add":
            doc = _add(doc, path, copy.deepcopy(op["value"]))
        elif kind == "remove":
            _remove(doc, path)
        elif kind == "replace":
            resolve(doc, path)  # the target must exist
            if path == "":
                doc = copy.deepcopy(op["value"])
            else:
                _remove(doc, path)
                doc = _add(doc, path, copy.deepcopy(op["value"]))
        elif kind == "move":
            src = op["from"]
            if path != src and path.startswith(src + "/"):
                raise PatchError(f"operation {n} (move): {path} is inside {src}")
            value = resolve(doc, src)
            if path == src:
                continue
            _remove(doc, src)
            doc = _add(doc, path, value)
        elif kind == "copy":
            doc = _add(doc, path, copy.deepcopy(resolve(doc, op["from"])))
        elif kind == "test":
            if not _equal(resolve(doc, path), op["value"]):
                raise PatchError(f"operation {n} (test): {path} is not {op['value']!r}")
        else:
            raise PatchError(f"operation {n}: unknown op {kind!r}")
    return doc
