"""CEL values and libraries of the Kubernetes device-selector environment,
for cel-python (celpy): quantities and semantic versions as opaque values
with their methods, cel-go's heterogeneous equality, the strings extension,
and the functions and methods the static check knows (k8s.io/apiserver's
library and k8s.io/dynamic-resource-allocation/cel's environment)."""

from __future__ import annotations

import re

from celpy import celtypes as ct
from celpy.evaluation import CELEvalError

from ....api.quantity import Quantity, QuantityError
from .semver import Semver, SemverError


class CelRuntimeError(Exception):
    """An evaluation error, worded like cel-go's."""


# -- values -------------------------------------------------------------------
class CelQuantity:
    """A resource.Quantity inside CEL: opaque, compared only through its library."""

    __slots__ = ("q",)

    def __init__(self, q: Quantity):
        self.q = q

    def __repr__(self):
        return f"quantity({str(self.q)!r})"


class CelSemver:
    __slots__ = ("v",)

    def __init__(self, v: Semver):
        self.v = v

    def __repr__(self):
        return f"semver({str(self.v)!r})"


class DomainMap(ct.MapType):
    """device.attributes / device.capacity: an unknown domain is an empty map."""

    def __getitem__(self, key):
        try:
            return super().__getitem__(key)
        except KeyError:
            return ct.MapType()


def _err(msg: str) -> CELEvalError:
    return CELEvalError(msg, ValueError, None)


def _no_overload() -> CELEvalError:
    return CELEvalError("no such overload", TypeError, None)


def _box(v):
    if isinstance(v, bool):
        return ct.BoolType(v)
    if isinstance(v, int):
        return ct.IntType(v)
    if isinstance(v, float):
        return ct.DoubleType(v)
    if isinstance(v, str):
        return ct.StringType(v)
    return v


# -- the Kubernetes libraries -------------------------------------------------
def _quantity(s):
    if not isinstance(s, str):
        return _no_overload()
    try:
        return CelQuantity(Quantity.parse(str(s)))
    except QuantityError as exc:
        return _err(str(exc))


def _is_quantity(s):
    if not isinstance(s, str):
        return _no_overload()
    try:
        Quantity.parse(str(s))
        return ct.BoolType(True)
    except QuantityError:
        return ct.BoolType(False)


def _semver(s, normalize=ct.BoolType(False)):
    if not isinstance(s, str) or not isinstance(normalize, ct.BoolType):
        return _no_overload()
    try:
        return CelSemver(Semver.parse_normalized(str(s)) if normalize else Semver.parse(str(s)))
    except SemverError as exc:
        return _err(str(exc))


def _is_semver(s, normalize=ct.BoolType(False)):
    r = _semver(s, normalize)
    if isinstance(r, CELEvalError):
        return r if not isinstance(s, str) else ct.BoolType(False)
    return ct.BoolType(True)


_INT64 = (-(1 << 63), (1 << 63) - 1)


def _q_method(name):
    def f(obj, *args):
        if isinstance(obj, CelSemver):
            return _s_method(name, obj, args)
        if not isinstance(obj, CelQuantity):
            return _no_overload()
        q = obj.q
        if name in ("isGreaterThan", "isLessThan", "compareTo"):
            if len(args) != 1 or not isinstance(args[0], CelQuantity):
                return _no_overload()
            c = q.cmp(args[0].q)
            if name == "compareTo":
                return ct.IntType(c)
            return ct.BoolType(c == 1 if name == "isGreaterThan" else c == -1)
        if name in ("add", "sub"):
            if len(args) != 1:
                return _no_overload()
            o = args[0]
            if isinstance(o, CelQuantity):
                other = o.q
            elif isinstance(o, ct.IntType):
                other = Quantity.from_int(int(o), "DecimalExponent")
            else:
                return _no_overload()
            return CelQuantity(q + other if name == "add" else q - other)
        if args:
            return _no_overload()
        if name == "sign":
            return ct.IntType(q.sign())
        if name == "isInteger":
            return ct.BoolType(_as_int64(q) is not None)
        if name == "asInteger":
            v = _as_int64(q)
            return _err("cannot convert value to integer") if v is None else ct.IntType(v)
        if name == "asApproximateFloat":
            return ct.DoubleType(float(q.as_fraction()))
        return _no_overload()

    return f


def _as_int64(q: Quantity):
    """Quantity.AsInt64: exact integer values within int64 only."""
    fr = q.as_fraction()
    if fr.denominator != 1 or not _INT64[0] <= fr.numerator <= _INT64[1]:
        return None
    return fr.numerator


def _s_method(name, obj, args):
    v = obj.v
    if name in ("isGreaterThan", "isLessThan", "compareTo"):
        if len(args) != 1 or not isinstance(args[0], CelSemver):
            return _no_overload()
        c = v.compare(args[0].v)
        if name == "compareTo":
            return ct.IntType(c)
        return ct.BoolType(c == 1 if name == "isGreaterThan" else c == -1)
    if name in ("major", "minor", "patch") and not args:
        return ct.IntType(getattr(v, name))
    return _no_overload()


_NUMERIC = (ct.IntType, ct.UintType, ct.DoubleType)


def _eq(a, b):
    """cel-go runtime equality: values of different types are unequal (numbers
    compare by value); opaque library types compare only with their own kind."""
    for x in (a, b):
        if isinstance(x, CELEvalError):
            return x
    if isinstance(a, CelQuantity):
        return ct.BoolType(a.q == b.q) if isinstance(b, CelQuantity) else _no_overload()
    if isinstance(a, CelSemver):
        return ct.BoolType(a.v == b.v) if isinstance(b, CelSemver) else _no_overload()
    if isinstance(b, (CelQuantity, CelSemver)):
        return ct.BoolType(False)
    if isinstance(a, _NUMERIC) and isinstance(b, _NUMERIC):
        # Python compares int with float exactly, as cel-go compares numbers.
        x = float(a) if isinstance(a, ct.DoubleType) else int(a)
        y = float(b) if isinstance(b, ct.DoubleType) else int(b)
        return ct.BoolType(x == y)
    if isinstance(a, ct.BoolType) != isinstance(b, ct.BoolType):
        return ct.BoolType(False)
    if isinstance(a, ct.MapType) and isinstance(b, ct.MapType):
        if len(a) != len(b):
            return ct.BoolType(False)
        for k, v in a.items():
            if k not in b:
                return ct.BoolType(False)
            r = _eq(v, b[k])
            if r is not ct.BoolType(True) and not (isinstance(r, ct.BoolType) and r):
                return r
        return ct.BoolType(True)
    if isinstance(a, ct.ListType) and isinstance(b, ct.ListType):
        if len(a) != len(b):
            return ct.BoolType(False)
        for x, y in zip(a, b):
            r = _eq(x, y)
            if not (isinstance(r, ct.BoolType) and r):
                return r
        return ct.BoolType(True)
    if type(a) is not type(b):
        return ct.BoolType(False)
    return ct.BoolType(a == b)


def _ne(a, b):
    r = _eq(a, b)
    return r if isinstance(r, CELEvalError) else ct.BoolType(not r)


def _str_fn(fn):
    def f(s, *args):
        if not isinstance(s, ct.StringType):
            return _no_overload()
        try:
            return fn(str(s), *args)
        except (TypeError, ValueError) as exc:
            return _err(str(exc))

    return f


def _index_of(s, sub, start=None):
    start = 0 if start is None else int(start)
    if start < 0 or start > len(s):
        raise ValueError(f"index out of range: {start}")
    return ct.IntType(s.find(str(sub), start))


def _last_index_of(s, sub, end=None):
    end = len(s) if end is None else int(end)
    if end < 0 or end >= max(len(s), 1) and end != len(s):
        raise ValueError(f"index out of range: {end}")
    return ct.IntType(s.rfind(str(sub), 0, end + len(str(sub))))


def _substring(s, start, end=None):
    start = int(start)
    end = len(s) if end is None else int(end)
    if start < 0 or start > len(s):
        raise ValueError(f"index out of range: {start}")
    if end < start or end > len(s):
        raise ValueError(f"invalid substring range. start: {start}, end: {end}")
    return ct.StringType(s[start:end])


def _find(s, pattern):
    m = re.search(str(pattern), s)
    return ct.StringType(m.group(0) if m else "")


def _find_all(s, pattern, n=None):
    out = [ct.StringType(m.group(0)) for m in re.finditer(str(pattern), s)]
    if n is not None and int(n) >= 0:
        out = out[: int(n)]
    return ct.ListType(out)


FUNCTIONS = {
    "_==_": _eq,
    "_!=_": _ne,
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "semver": _semver,
    "isSemver": _is_semver,
    "lowerAscii": _str_fn(lambda s: ct.StringType("".join(c.lower() if c.isascii() else c for c in s))),
    "upperAscii": _str_fn(lambda s: ct.StringType("".join(c.upper() if c.isascii() else c for c in s))),
    "trim": _str_fn(lambda s: ct.StringType(s.strip(" \t\n\v\f\r\x85\xa0"))),
    "replace": _str_fn(lambda s, old, new, n=None: ct.StringType(
        s.replace(str(old), str(new)) if n is None or int(n) < 0 else s.replace(str(old), str(new), int(n)))),
    "split": _str_fn(lambda s, sep, n=None: ct.ListType([ct.StringType(x) for x in (
        s.split(str(sep)) if str(sep) else list(s))])),
    "indexOf": _str_fn(_index_of),
    "lastIndexOf": _str_fn(_last_index_of),
    "substring": _str_fn(_substring),
    "charAt": _str_fn(lambda s, i: ct.StringType(s[int(i)] if int(i) < len(s) else "")),
    "find": _str_fn(_find),
    "findAll": _str_fn(_find_all),
}
for _name in ("compareTo", "isGreaterThan", "isLessThan", "sign", "isInteger", "asInteger",
              "asApproximateFloat", "add", "sub", "major", "minor", "patch"):
    FUNCTIONS[_name] = _q_method(_name)


def _join(lst, sep=ct.StringType("")):
    if not isinstance(lst, ct.ListType):
        return _no_overload()
    return ct.StringType(str(sep).join(str(x) for x in lst))


FUNCTIONS["join"] = _join

# Names the checker accepts as functions or methods (cel-go standard library,
# extensions in the Kubernetes base environment, and the libraries above).
KNOWN_FUNCTIONS = set(FUNCTIONS) | {
    "size", "contains", "startsWith", "endsWith", "matches", "type", "int", "uint", "double",
    "string", "bytes", "bool", "dyn", "duration", "timestamp", "has", "exists", "all",
    "exists_one", "map", "filter", "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear",
    "getFullYear", "getMonth", "getHours", "getMilliseconds", "getMinutes", "getSeconds",
}
METHOD_RESULT = {
    "startsWith": "bool", "endsWith": "bool", "matches": "bool", "contains": "bool",
    "isGreaterThan": "bool", "isLessThan": "bool", "compareTo": "int", "size": "int",
    "lowerAscii": "string", "upperAscii": "string", "trim": "string", "isInteger": "bool",
    "asInteger": "int", "sign": "int", "asApproximateFloat": "double", "major": "int",
    "minor": "int", "patch": "int", "add": "quantity", "sub": "quantity", "indexOf": "int",
    "lastIndexOf": "int", "substring": "string", "find": "string", "replace": "string",
    "exists": "bool", "all": "bool", "exists_one": "bool",
}
GLOBAL_RESULT = {
    "quantity": "quantity", "isQuantity": "bool", "semver": "semver", "isSemver": "bool",
    "has": "bool", "size": "int", "int": "int", "uint": "uint", "double": "double",
    "string": "string", "bool": "bool", "bytes": "bytes", "dyn": "dyn",
}



def split_qualified(name: str, default_domain: str):
    i = name.find("/")
    if i < 0:
        return default_domain, name
    return name[:i], name[i + 1:]


