"""The result document as indented JSON text, written faster than the json
module writes it and character for character the same."""

from __future__ import annotations

import json
from json.encoder import encode_basestring as string  # json's own (C) string encoder, ensure_ascii=False


def indented(value, newline: str) -> str:
    """json.dumps(value, indent=2, ensure_ascii=False), written with `newline`
    (a line break and the indentation of where the value goes) for each
    line break, character for character.

    CPython's json encodes indented output in Python, one generator step per
    token: a pod of 5,000 nodes (18 MB of text) took 0.65 s, most of the time
    of writing it. This walk builds each container's text with one join and
    writes the common values (str, int, float, bool, None, in dicts with str
    keys and lists) itself, 2.5 times faster; anything else (tuples, other
    keys, subclasses) is left to json.dumps. tests/test_stream.py compares the
    result with json.dumps on every golden document."""
    return encode(value, newline)


def encode(o, nl: str) -> str:
    t = type(o)
    if t is str:
        return string(o)
    if t is dict:
        if not o:
            return "{}"
        inner = nl + "  "
        parts = []
        for k, v in o.items():
            if type(k) is not str:
                return _fallback(o, nl)
            tv = type(v)
            if tv is str:
                parts.append(inner + string(k) + ": " + string(v))
            elif tv is int:
                parts.append(inner + string(k) + ": " + int.__repr__(v))
            elif tv is float:
                parts.append(inner + string(k) + ": " + _float(v))
            elif v is None:
                parts.append(inner + string(k) + ": null")
            elif v is True:
                parts.append(inner + string(k) + ": true")
            elif v is False:
                parts.append(inner + string(k) + ": false")
            else:
                parts.append(inner + string(k) + ": " + encode(v, inner))
        return "{" + ",".join(parts) + nl + "}"
    if t is list:
        if not o:
            return "[]"
        inner = nl + "  "
        return "[" + ",".join([inner + encode(v, inner) for v in o]) + nl + "]"
    if t is int:
        return int.__repr__(o)
    if t is float:
        return _float(o)
    if o is None:
        return "null"
    if o is True:
        return "true"
    if o is False:
        return "false"
    return _fallback(o, nl)


class ShapeEncoder:
    """encode(value, nl) for many values of the same shape: dicts with the
    same keys in the same order, lists of the same lengths, at every level,
    and str, int, float, bool or None in the same places (a node's score
    explanation from one plugin, across the nodes of a pod). The text
    around the values is worked out once per shape (by the keys at the top:
    a value of another shape under the same keys is encoded as usual).
    Character for character encode's text (tests/test_json_shapes.py)."""

    __slots__ = ("nl", "shapes")

    def __init__(self, nl: str):
        self.nl = nl
        self.shapes: dict = {}  # top-level keys -> (shape, pieces), or None: not worth a template

    def __call__(self, d) -> str:
        if type(d) is not dict or not d:
            return encode(d, self.nl)
        keys = tuple(d)
        found = self.shapes.get(keys, False)
        if found is False:
            found = self.shapes[keys] = _compile(d, self.nl)
        if found is None:
            return encode(d, self.nl)
        shape, pieces = found
        leaves: list = []
        if not _leaves(d, shape, leaves):
            return encode(d, self.nl)
        out = [pieces[0]]
        append = out.append
        for v, piece in zip(leaves, pieces[1:]):
            t = type(v)
            if t is str:
                append(string(v))
            elif t is int:
                append(int.__repr__(v))
            elif t is float:
                append(_float(v))
            elif v is None:
                append("null")
            elif v is True:
                append("true")
            else:
                append("false")
            append(piece)
        return "".join(out)


_LEAF = (str, int, float, bool, type(None))
_LEAF_TYPES = frozenset(_LEAF)


def _leaves(v, shape, out: list) -> bool:
    """The leaves of `v` in order into `out`, when `v` has `shape`
    (None: a leaf; (keys, shapes): a dict; [shapes]: a list)."""
    if shape is None:
        if type(v) in _LEAF_TYPES:
            out.append(v)
            return True
        return False
    if type(shape) is tuple:
        if type(v) is not dict or tuple(v) != shape[0]:
            return False
        for x, sub in zip(v.values(), shape[1]):
            if sub is None:
                if type(x) not in _LEAF_TYPES:
                    return False
                out.append(x)
            elif not _leaves(x, sub, out):
                return False
        return True
    if type(v) is not list or len(v) != len(shape):
        return False
    for x, sub in zip(v, shape):
        if not _leaves(x, sub, out):
            return False
    return True


def _compile(d: dict, nl: str):
    """(shape, pieces): d's shape (see _leaves) and the text between its
    leaves, encode's; None when a key is not a str or a value of another type."""
    pieces = [""]
    try:
        shape = _shape(d, nl, pieces)
    except TypeError:
        return None
    return shape, pieces


def _shape(v, nl: str, pieces: list):
    t = type(v)
    if t in _LEAF_TYPES:
        pieces.append("")
        return None
    inner = nl + "  "
    if t is dict:
        if not v:
            pieces[-1] += "{}"
            return ((), ())
        subs = []
        first = True
        for k, x in v.items():
            if type(k) is not str:
                raise TypeError
            pieces[-1] += ("{" if first else ",") + inner + string(k) + ": "
            first = False
            subs.append(_shape(x, inner, pieces))
        pieces[-1] += nl + "}"
        return (tuple(v), tuple(subs))
    if t is list:
        if not v:
            pieces[-1] += "[]"
            return []
        subs = []
        first = True
        for x in v:
            pieces[-1] += ("[" if first else ",") + inner
            first = False
            subs.append(_shape(x, inner, pieces))
        pieces[-1] += nl + "]"
        return subs
    raise TypeError


def _float(f: float) -> str:
    # json's own spelling: repr, and JavaScript's names for what JSON lacks.
    if f != f:
        return "NaN"
    if f == _INF:
        return "Infinity"
    if f == -_INF:
        return "-Infinity"
    return float.__repr__(f)


_INF = float("inf")


def _fallback(o, nl: str) -> str:
    text = json.dumps(o, indent=2, ensure_ascii=False)
    return text.replace("\n", nl) if "\n" in text else text
