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
