"""Validate an object against the schema of a Kubernetes version, as the API
server's strict decoding (kubectl's default, `--validate=strict`) would.

What the API server's decoder reports, and how (k8s.io/apimachinery's JSON
serializer with strict decoding, sigs.k8s.io/json underneath):

- `unknown field "spec.containers[0].resources.request"`: a key the Go
  struct has no json field for; the path as the strict decoder builds it
  (keys joined by dots, list indices in brackets, map keys as keys). What
  is under an unknown field is not looked at.
- `duplicate field "spec.containers"`: a key given twice in one mapping
  (the loaders of duplicates.py find them; PyYAML and json keep the last).
- `json: cannot unmarshal string into Go struct field PodSpec.spec.containers
  of type []v1.Container`: a value of the wrong JSON type; the Go struct is
  the innermost one whose field holds the value, the field path leaves list
  indices and map keys out and names inline structs (`VolumeSource`).
- the texts of the types that decode themselves: quantities, int-or-string,
  times (Go's time.Parse), base64 bytes.

The API server stops at the first wrong type and then reports no strict
error; kschedx reports every problem, each in the API server's words, in the
order of the object's keys. `null` is accepted everywhere, as Go accepts it.
A value is judged as kubectl would send it: YAML is converted to JSON first,
so a timestamp YAML reads as a date is a string, and 2.0 is the integer 2.
"""

from __future__ import annotations

from datetime import date, datetime

from .kinds import describe, resolve
from .model import (ANY, ARRAY, BOOL, BYTES, DURATION, FLOAT, INT, INTORSTRING, MAP, MICROTIME, QUANTITY,
                    RELEASES, SCHEMAORBOOL, STRING, STRUCT, TIME, Schema, Struct, Type, schema)
from .problem import DUPLICATE_FIELD, UNKNOWN_FIELD, WRONG_TYPE, Problem
from . import goparse


def validate(obj: dict, version: str, *, duplicates: dict | None = None) -> list[Problem]:
    """Every problem the API server of Kubernetes `version` ("1.36") finds in
    `obj` (a dict as read from YAML or JSON), in the order of its keys; [] for
    a valid object and for a custom resource (see kinds.py).

    `duplicates`: {id(mapping): keys given twice in it}, as duplicates.py's
    loaders find them, for the mappings of this object."""
    s = schema(version)
    kind, problem = resolve(obj, s)
    if problem is not None:
        return [problem]
    if kind is None:
        return []
    walk = _Walk(s, duplicates)
    try:
        walk.struct(obj, kind.struct, "", "")
    except _Shared:
        # YAML aliases make one mapping many values (a "billion laughs" in a
        # CRD's nested schemas): walk each shared mapping once per type,
        # whose problems are then named at its first place only
        walk = _Walk(s, duplicates, once=True)
        walk.struct(obj, kind.struct, "", "")
    return walk.problems


# Mappings an object's walk may enter before it is taken for one made of
# YAML aliases: a valid object of the API server's 1.5 MB is far below.
MAX_MAPPINGS = 200_000


class _Shared(Exception):
    pass


def is_custom_resource(obj: dict, version: str) -> bool:
    """Whether `obj` is taken for a custom resource: not validated, and
    ignored by scheduling (kinds.py says which groups may hold one)."""
    kind, problem = resolve(obj, schema(version))
    return kind is None and problem is None


class _Walk:
    __slots__ = ("schema", "dups", "problems", "left", "seen")

    def __init__(self, s: Schema, duplicates, once: bool = False):
        self.schema = s
        self.dups = duplicates or None
        self.problems: list[Problem] = []
        self.left = MAX_MAPPINGS
        self.seen: set | None = set() if once else None

    # -- structs ---------------------------------------------------------------------------

    def struct(self, obj: dict, st: Struct, path: str, gopath: str) -> None:
        self.left -= 1
        if self.left < 0:
            if self.seen is None:
                raise _Shared
        if self.seen is not None:
            key = (id(obj), id(st))
            if key in self.seen:
                return
            self.seen.add(key)
        fields = st._fields
        if fields is None:
            fields = st.fields
        embeds = st._embeds
        dups = self.dups.get(id(obj)) if self.dups is not None else None
        for key, value in obj.items():
            t = fields.get(key)
            if t is None:
                if key.__class__ is not str:
                    key = key_text(key)
                    t = fields.get(key)
                if t is None:
                    self.unknown(st, path, key)
                    continue
            if dups is not None and key in dups:
                where = f"{path}.{key}" if path else key
                self.problems.append(Problem(where, f'duplicate field "{where}"', DUPLICATE_FIELD))
            if value is None:
                continue
            code = t.code
            cls = value.__class__
            if code == STRING:
                if cls is str:
                    continue
            elif code == TIME and cls is str and _canonical_time(value):
                continue
            # the decoder's field path: json names and inline structs, no indices
            embed = embeds.get(key) if embeds else None
            name = f"{embed}.{key}" if embed else key
            if code == STRUCT and cls is dict:
                self.struct(value, t.sub, f"{path}.{key}" if path else key, f"{gopath}.{name}" if gopath else name)
            else:
                self.value(value, t, f"{path}.{key}" if path else key, f"{gopath}.{name}" if gopath else name,
                           st.name)

    def unknown(self, st: Struct, path: str, key: str) -> None:
        where = _join(path, key)
        self.problems.append(Problem(where, f'unknown field "{where}"', UNKNOWN_FIELD, hint=self.field_hint(st, key)))

    def field_hint(self, st: Struct, key: str) -> str:
        from . import suggest

        elsewhere = [minor for minor in sorted(RELEASES) if minor != self.schema.minor
                     and key in _fields_in(minor, st.definition)]
        if elsewhere:
            return (f"a field of {st.name} in Kubernetes {suggest.one_of(elsewhere)}, "
                    f"not in {self.schema.minor}")
        near = suggest.near(key, st.fields)
        if near:
            return f"did you mean {suggest.one_of(near, quote=True)}?"
        # a field of a field, written one level too high (`requests` for `resources.requests`)
        deeper = [f"{name}.{key}" for name, t in st.fields.items() if _struct_of(t) is not None
                  and key in _struct_of(t).fields]
        if 0 < len(deeper) <= 3:
            return f"did you mean {suggest.one_of(deeper, quote=True)}?"
        return ""

    # -- any value ---------------------------------------------------------------------------

    def value(self, value, t: Type, path: str, gopath: str, owner: str) -> None:
        """`value` (not None) of type `t` at `path`; `gopath` and `owner`
        are what a type error names (the Go field path, the Go struct)."""
        code = t.code
        cls = value.__class__
        if code == STRING:
            if cls is str or isinstance(value, date):
                return
        elif code == STRUCT:
            if cls is dict:
                self.struct(value, t.sub, path, gopath)
                return
        elif code == ARRAY:
            if cls is list:
                elem = t.sub
                for i, item in enumerate(value):
                    if item is not None:
                        if elem.code == STRING and item.__class__ is str:
                            continue
                        self.value(item, elem, f"{path}[{i}]", gopath, owner)
                return
        elif code == MAP:
            if cls is dict:
                elem = t.sub
                dups = self.dups.get(id(value)) if self.dups is not None else None
                for key, item in value.items():
                    if key.__class__ is not str:
                        key = key_text(key)
                    if dups is not None and key in dups:
                        self.problems.append(Problem(f"{path}.{key}", f'duplicate field "{path}.{key}"',
                                                     DUPLICATE_FIELD))
                    if item is not None and not (elem.code == STRING and item.__class__ is str):
                        self.value(item, elem, f"{path}.{key}", gopath, owner)
                return
        elif code == INT:
            if cls is int:
                if t.low <= value <= t.high:
                    return
                return self.wrong(f"number {value}", t, path, gopath, owner)
            if cls is float:
                if value.is_integer() and t.low <= value <= t.high:
                    return
                return self.wrong(f"number {go_float(value)}", t, path, gopath, owner)
        elif code == BOOL:
            if cls is bool:
                return
        elif code == FLOAT:
            if cls is float or cls is int:
                return
        elif code == QUANTITY:
            return self.quantity(value, path)
        elif code == INTORSTRING:
            return self.int_or_string(value, path, gopath, owner)
        elif code == TIME or code == MICROTIME:
            return self.time(value, path, gopath, owner, goparse.RFC3339 if code == TIME else goparse.RFC3339_MICRO)
        elif code == DURATION:
            if cls is str:
                err = goparse.parse_duration_error(value)
                if err:
                    self.problems.append(Problem(path, err, WRONG_TYPE, aborts=True))
                return
            return self.wrong(describe(value), _STRING, path, gopath, owner, aborts=True)
        elif code == ANY:
            return
        elif code == SCHEMAORBOOL:
            # a CRD schema's additionalProperties: true, false or a schema
            # (decoded on its own, not strictly, and not checked here)
            if cls is not bool and cls is not dict:
                self.problems.append(Problem(path, "boolean or JSON schema expected", WRONG_TYPE, aborts=True))
            return
        elif code == BYTES:
            if cls is str:
                err = goparse.base64_error(value)
                if err:
                    self.problems.append(Problem(path, err, WRONG_TYPE))
                return
            if cls is list:  # encoding/json fills a []byte from a list of numbers too
                for i, item in enumerate(value):
                    if item is not None and not (item.__class__ is int and 0 <= item <= 255):
                        what = f"number {item if item.__class__ is int else go_float(item)}" \
                            if item.__class__ in (int, float) else describe(item)
                        self.wrong(what, _UINT8, f"{path}[{i}]", gopath, owner)
                return
        self.wrong(describe(value), t, path, gopath, owner)

    def wrong(self, what: str, t: Type, path: str, gopath: str, owner: str, aborts: bool = False) -> None:
        """encoding/json's UnmarshalTypeError, with the context the decoder
        adds (also to the errors of the types that decode themselves, which
        unmarshal into a string or an int32 inside)."""
        self.problems.append(Problem(
            path, f"json: cannot unmarshal {what} into Go struct field {owner}.{gopath} of type {t.go}", WRONG_TYPE,
            aborts=aborts))

    def quantity(self, value, path: str) -> None:
        cls = value.__class__
        if cls is str:
            text = value
        elif cls is int:
            text = str(value)
        elif cls is float:
            text = go_float(value)
        elif isinstance(value, date):
            text = value.isoformat()
        else:
            text = None
        err = _quantity_error(text.strip() if text is not None else None)
        if err:
            self.problems.append(Problem(path, err, WRONG_TYPE, aborts=True))

    def int_or_string(self, value, path: str, gopath: str, owner: str) -> None:
        cls = value.__class__
        if cls is str or isinstance(value, date):
            return
        if cls is int:
            if -(1 << 31) <= value < (1 << 31):
                return
            what = f"number {value}"
        elif cls is float:
            if value.is_integer() and -(1 << 31) <= value < (1 << 31):
                return
            what = f"number {go_float(value)}"
        else:
            what = describe(value)
        self.wrong(what, _INT32, path, gopath, owner, aborts=True)

    def time(self, value, path: str, gopath: str, owner: str, layout: str) -> None:
        cls = value.__class__
        if cls is str:
            if layout is goparse.RFC3339 and _canonical_time(value):
                return
            err = goparse.parse_time_error(value, layout)
        elif cls is datetime:
            # YAML read it as a timestamp: valid when it has a zone (RFC 3339
            # requires one); the text Go would see is not kept, so the
            # message shows the value in ISO form
            err = None if value.tzinfo is not None else goparse.parse_time_error(value.isoformat(), layout)
        elif cls is date:
            err = goparse.parse_time_error(value.isoformat(), layout)
        else:
            return self.wrong(describe(value), _STRING, path, gopath, owner, aborts=True)
        if err:
            self.problems.append(Problem(path, err, WRONG_TYPE, aborts=True))


_TIME_SHAPE = None
_DAYS = (0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _canonical_time(value: str) -> bool:
    """The common RFC 3339 form, every field in range (Go's parser agrees;
    anything else is left to it, for its message)."""
    global _TIME_SHAPE
    if _TIME_SHAPE is None:
        import re

        _TIME_SHAPE = re.compile(r"(\d{4})-(\d\d)-(\d\d)T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,9})?"
                                 r"(?:Z|[+-](?:[01]\d|2[0-4]):(?:[0-5]\d|60))", re.ASCII).fullmatch
    m = _TIME_SHAPE(value)
    if m is None:
        return False
    month, day = int(m.group(2)), int(m.group(3))
    if not 1 <= month <= 12 or not 1 <= day <= _DAYS[month]:
        return False
    if month == 2 and day == 29:
        year = int(m.group(1))
        return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return True


_UINT8 = Type(INT, "uint8")
_INT32 = Type(INT, "int32")
_STRING = Type(STRING, "string")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _struct_of(t: Type) -> Struct | None:
    while t.code in (ARRAY, MAP):
        t = t.sub
    return t.sub if t.code == STRUCT else None


def _fields_in(minor: str, definition: str):
    s = schema(minor).structs_by_definition.get(definition)
    return s.fields if s is not None else ()


def key_text(key) -> str:
    """A mapping key as YAML-to-JSON conversion writes it."""
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if key.__class__ is float:
        return go_float(key)
    return str(key)


def go_float(value: float) -> str:
    """A float as Go's encoding/json writes it (what kubectl sends)."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if str(value).startswith("-") else "0"
    from decimal import Decimal

    magnitude = abs(value)
    d = Decimal(repr(value))
    if magnitude < 1e-6 or magnitude >= 1e21:
        sign, digits, exponent = d.as_tuple()
        text = "".join(map(str, digits)).rstrip("0") or "0"
        exp = exponent + len(digits) - 1
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        exp_text = f"{'+' if exp >= 0 else '-'}{abs(exp):02d}"
        if exp_text.startswith("-0"):
            exp_text = "-" + exp_text[2:]
        return ("-" if sign else "") + mantissa + "e" + exp_text
    text = format(d, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


_QUANTITY_ERRORS: dict = {}


def _quantity_error(text: str | None) -> str | None:
    """ParseQuantity's error for the text (None for a value that is not text), cached."""
    if text is None:
        from ...api.quantity import ERR_FORMAT_WRONG

        return ERR_FORMAT_WRONG
    try:
        return _QUANTITY_ERRORS[text]
    except KeyError:
        pass
    from ...api.quantity import Quantity, QuantityError

    try:
        Quantity.parse(text)
        err = None
    except QuantityError as exc:
        err = str(exc)
    if len(_QUANTITY_ERRORS) < 100_000:
        _QUANTITY_ERRORS[text] = err
    return err
