"""field.Error texts of k8s.io/apimachinery/pkg/util/validation/field:
`<path>: <Type>: <value>: <detail>`, values printed as Go's fmt prints them."""

from __future__ import annotations

import json


def go_value(value) -> str:
    """A bad value as ErrorBody prints it: %v for numbers and bools, %q for
    strings, null for nil."""
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


def duplicate(path: str, value, *, stringer: bool = False) -> str:
    """`stringer`: the value is a Go Stringer (a field.Path), printed bare."""
    return f"{path}: Duplicate value: {value if stringer else go_value(value)}"


def aggregate(errors: list[str]) -> str:
    """utilerrors.Aggregate.Error(): one message as is, several in brackets."""
    if len(errors) == 1:
        return errors[0]
    return "[" + ", ".join(errors) + "]"
