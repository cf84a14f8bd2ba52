"""field.Error texts of k8s.io/apimachinery/pkg/util/validation/field:
`<path>: <Type>: <value>: <detail>`, values printed as Go's fmt prints them."""

from __future__ import annotations

import json
import re


class Marshalled(str):
    """A bad value already in the text json.Marshal gives for it, printed as
    is: for Go structs, whose field names and order a dict cannot carry."""


# A *field.Path as a bad value (field.Duplicate of another field's path):
# its fields are unexported, so json.Marshal succeeds with `{}` and
# ErrorBody never reaches the path's String().
FIELD_PATH = Marshalled("{}")

# encoding/json escapes these even in UTF-8 output (HTML safety, and the
# JavaScript line separators); Python's json leaves them alone.
_GO_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def go_json(value) -> Marshalled:
    """json.Marshal's text for plain data: compact, a dict's keys in their
    own order (a struct's field order; sort them first for a Go map)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return Marshalled(re.sub("[<>&\u2028\u2029]", lambda m: _GO_JSON_ESCAPES[m.group()], text))


def go_value(value) -> str:
    """A bad value as ErrorBody prints it: %v for numbers and bools, %q for
    strings, null for nil, a Marshalled value as it is."""
    if isinstance(value, Marshalled):
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def invalid(path: str, value, detail: str) -> str:
    return f"{path}: Invalid value: {go_value(value)}" + (f": {detail}" if detail else "")


def required(path: str, detail: str = "") -> str:
    return f"{path}: Required value" + (f": {detail}" if detail else "")


def duplicate(path: str, value) -> str:
    return f"{path}: Duplicate value: {go_value(value)}"


def aggregate(errors: list[str]) -> str:
    """utilerrors.Aggregate.Error(): one message as is, several in brackets."""
    if len(errors) == 1:
        return errors[0]
    return "[" + ", ".join(errors) + "]"
