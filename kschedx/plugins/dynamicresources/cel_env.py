"""CEL device selectors, evaluated as kube-scheduler v1.35 and v1.36 evaluate them.

Upstream compiles selectors with cel-go in the Kubernetes "stored
expressions" environment plus a declared `device` variable
(k8s.io/dynamic-resource-allocation/cel): `device.driver` (string),
`device.attributes[domain][id]` (any) and `device.capacity[domain][id]`
(Quantity). With DRAConsumableCapacity (off in v1.35, on in v1.36) the
device also has `allowMultipleAllocations` (bool); without it an expression
using that field does not compile. Looking up an unknown domain
yields an empty map, so `device.attributes["other"].x` fails with
"no such key: x" rather than on the domain.

Evaluation uses cel-python (celpy), a pure-Python CEL interpreter, with an
adapter for what it lacks compared with cel-go in this environment:
- a static check before evaluation (celpy has no type checker), which
  reports as compile errors what cel-go's checker rejects here: syntax
  errors, unknown identifiers and functions, unknown `device` fields,
  mismatched operand types of known static type, a non-bool result;
- the Kubernetes quantity and semver libraries and the strings extension;
- cel-go's heterogeneous runtime equality for `==`/`!=`;
- `cel.bind(v, init, body)`, rewritten to `[init].map(v, body)[0]`;
- cel-go's wording of runtime errors ("no such key: x", "no such overload").
Results are cached per (expression, device): selectors and devices do not
change during a run, so each pair is evaluated once however many nodes,
requests and pods ask.
"""

from __future__ import annotations

import copy
import logging
import re

import celpy
import lark
from celpy import celtypes as ct
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError

from ...api.quantity import Quantity, QuantityError, parse_quantity
from .semver import Semver, SemverError

logging.getLogger("celpy").setLevel(logging.CRITICAL)  # celpy logs every runtime error

_ENV = celpy.Environment()


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


class _DomainMap(ct.MapType):
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


_FUNCTIONS = {
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
    _FUNCTIONS[_name] = _q_method(_name)


def _join(lst, sep=ct.StringType("")):
    if not isinstance(lst, ct.ListType):
        return _no_overload()
    return ct.StringType(str(sep).join(str(x) for x in lst))


_FUNCTIONS["join"] = _join

# Names the checker accepts as functions or methods (cel-go standard library,
# extensions in the Kubernetes base environment, and the libraries above).
_KNOWN_FUNCTIONS = set(_FUNCTIONS) | {
    "size", "contains", "startsWith", "endsWith", "matches", "type", "int", "uint", "double",
    "string", "bytes", "bool", "dyn", "duration", "timestamp", "has", "exists", "all",
    "exists_one", "map", "filter", "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear",
    "getFullYear", "getMonth", "getHours", "getMilliseconds", "getMinutes", "getSeconds",
}
_METHOD_RESULT = {
    "startsWith": "bool", "endsWith": "bool", "matches": "bool", "contains": "bool",
    "isGreaterThan": "bool", "isLessThan": "bool", "compareTo": "int", "size": "int",
    "lowerAscii": "string", "upperAscii": "string", "trim": "string", "isInteger": "bool",
    "asInteger": "int", "sign": "int", "asApproximateFloat": "double", "major": "int",
    "minor": "int", "patch": "int", "add": "quantity", "sub": "quantity", "indexOf": "int",
    "lastIndexOf": "int", "substring": "string", "find": "string", "replace": "string",
    "exists": "bool", "all": "bool", "exists_one": "bool",
}
_GLOBAL_RESULT = {
    "quantity": "quantity", "isQuantity": "bool", "semver": "semver", "isSemver": "bool",
    "has": "bool", "size": "int", "int": "int", "uint": "uint", "double": "double",
    "string": "string", "bool": "bool", "bytes": "bytes", "dyn": "dyn",
}


# -- the static check -----------------------------------------------------------
class _CompileError(Exception):
    def __init__(self, msg: str, offset: int):
        super().__init__(msg)
        self.msg = msg
        self.offset = offset


_DEVICE_FIELDS = {"driver": "string", "attributes": "attrs", "capacity": "caps"}
# With DRAConsumableCapacity the device type has one more field (cel/compile.go
# deviceTypeV134ConsumableCapacity).
_DEVICE_FIELDS_CC = dict(_DEVICE_FIELDS, allowMultipleAllocations="bool")
_ORDERED = {"int", "uint", "double", "string", "bytes", "bool", "timestamp", "duration"}
_NUM_T = {"int", "uint", "double"}
_OPS = {"relation_lt": "<", "relation_le": "<=", "relation_gt": ">", "relation_ge": ">=",
        "relation_eq": "==", "relation_ne": "!=", "relation_in": "in"}
_TYPE_NAMES = {"attrs": "map(string, map(string, dyn))", "caps": "map(string, map(string, quantity))",
               "attrs_inner": "map(string, dyn)", "caps_inner": "map(string, quantity)",
               "device": "kubernetes.DRADevice", "quantity": "kubernetes.Quantity",
               "semver": "kubernetes.Semver", "null": "null_type", "list": "list(dyn)",
               "map": "map(dyn, dyn)"}


def _tname(t: str) -> str:
    return _TYPE_NAMES.get(t, t)


class _Checker:
    def __init__(self, text: str, device_fields: dict = _DEVICE_FIELDS):
        self.text = text
        self.device_fields = device_fields

    def _pos(self, node) -> int:
        meta = getattr(node, "meta", None)
        if meta is not None and not meta.empty:
            return meta.start_pos
        if isinstance(node, lark.Token):
            return node.start_pos or 0
        return 0

    def _end(self, node) -> int:
        meta = getattr(node, "meta", None)
        if meta is not None and not meta.empty:
            return meta.end_pos
        if isinstance(node, lark.Token):
            return node.end_pos or 0
        return 0

    def _op_pos(self, left, right, op: str) -> int:
        lo, hi = self._end(left), self._pos(right)
        i = self.text.find(op, lo, hi if hi > lo else None)
        return i if i >= 0 else lo

    def check(self, tree) -> str:
        return self.t(tree, frozenset())

    def t(self, n, scope) -> str:
        if isinstance(n, lark.Token):
            return "dyn"
        d = n.data
        ch = n.children
        if d == "expr":
            if len(ch) == 1:
                return self.t(ch[0], scope)
            self.t(ch[0], scope)
            a, b = self.t(ch[1], scope), self.t(ch[2], scope)
            return a if a == b else "dyn"
        if d in ("conditionalor", "conditionaland"):
            if len(ch) == 1:
                return self.t(ch[0], scope)
            a, b = self.t(ch[0], scope), self.t(ch[1], scope)
            op = "||" if d == "conditionalor" else "&&"
            for x in (a, b):
                if x not in ("bool", "dyn"):
                    raise _CompileError(
                        f"found no matching overload for '_{op}_' applied to '({_tname(a)}, {_tname(b)})'",
                        self._op_pos(ch[0], ch[1], op))
            return "bool"
        if d == "relation":
            if len(ch) == 1:
                return self.t(ch[0], scope)
            opnode, right = ch
            left = opnode.children[0]
            a, b = self.t(left, scope), self.t(right, scope)
            op = _OPS[opnode.data]
            if "dyn" in (a, b):
                return "bool"
            ok = True
            if op in ("==", "!="):
                ok = a == b
            elif op == "in":
                ok = b in ("list", "map", "attrs", "caps", "attrs_inner", "caps_inner")
            else:
                ok = (a == b and a in _ORDERED) or (a in _NUM_T and b in _NUM_T)
            if not ok:
                name = "@in" if op == "in" else f"_{op}_"
                raise _CompileError(
                    f"found no matching overload for '{name}' applied to '({_tname(a)}, {_tname(b)})'",
                    self._op_pos(left, right, op))
            return "bool"
        if d in ("addition", "multiplication"):
            if len(ch) == 1:
                return self.t(ch[0], scope)
            opnode, right = ch
            a, b = self.t(opnode.children[0], scope), self.t(right, scope)
            if a == b and a in ("int", "uint", "double", "string", "list", "bytes"):
                return a
            return "dyn"
        if d == "unary":
            if len(ch) == 1:
                return self.t(ch[0], scope)
            a = self.t(ch[1], scope)
            if ch[0].data == "unary_not":
                if a not in ("bool", "dyn"):
                    raise _CompileError(f"found no matching overload for '!_' applied to '({_tname(a)})'",
                                        self._pos(n))
                return "bool"
            return a
        if d in ("member", "primary"):
            return self.t(ch[0], scope)
        if d == "member_dot":
            base, ident = ch
            bt = self.t(base, scope)
            name = str(ident)
            if bt == "device":
                if name not in self.device_fields:
                    raise _CompileError(f"undefined field '{name}'", self._dot_pos(base))
                return self.device_fields[name]
            if bt in ("attrs", "caps"):
                return bt + "_inner"
            if bt == "caps_inner":
                return "quantity"
            if bt in ("string", "int", "uint", "double", "bool", "bytes", "null", "quantity", "semver"):
                raise _CompileError(f"type '{_tname(bt)}' does not support field selection", self._dot_pos(base))
            return "dyn"
        if d == "member_index":
            base, idx = ch
            bt = self.t(base, scope)
            self.t(idx, scope)
            if bt in ("attrs", "caps"):
                return bt + "_inner"
            if bt == "caps_inner":
                return "quantity"
            return "dyn"
        if d == "member_dot_arg":
            base, ident = ch[0], str(ch[1])
            args = ch[2].children if len(ch) > 2 else []
            if ident == "bind" and self._is_ident(base, "cel") and "cel" not in scope:
                if len(args) != 3 or not self._bare_ident(args[0]):
                    raise _CompileError("cel.bind() variable name must be a simple identifier", self._pos(n))
                self.t(args[1], scope)
                return self.t(args[2], scope | {self._bare_ident(args[0])})
            if ident in ("exists", "all", "exists_one", "map", "filter"):
                self.t(base, scope)
                var = self._bare_ident(args[0]) if args else None
                if var is None:
                    raise _CompileError(f"{ident}() variable name must be a simple identifier", self._pos(n))
                inner = scope | {var}
                for a in args[1:]:
                    self.t(a, inner)
                return "list" if ident in ("map", "filter") else "bool"
            self.t(base, scope)
            for a in args:
                self.t(a, scope)
            if ident not in _KNOWN_FUNCTIONS:
                raise _CompileError(f"undeclared reference to '{ident}' (in container '')", self._dot_pos(base))
            return _METHOD_RESULT.get(ident, "dyn")
        if d == "ident":
            name = str(ch[0])
            if name in scope:
                return "dyn"
            if name == "device":
                return "device"
            raise _CompileError(f"undeclared reference to '{name}' (in container '')", self._pos(n))
        if d == "ident_arg":
            name = str(ch[0])
            args = ch[1].children if len(ch) > 1 else []
            if name == "has":
                if len(args) != 1 or self._select_of(args[0]) is None:
                    raise _CompileError("invalid argument to has() macro", self._pos(n))
            if name not in _KNOWN_FUNCTIONS:
                raise _CompileError(f"undeclared reference to '{name}' (in container '')", self._pos(n))
            for a in args:
                self.t(a, scope)
            return _GLOBAL_RESULT.get(name, "dyn")
        if d in ("dot_ident", "dot_ident_arg"):
            raise _CompileError(f"undeclared reference to '{ch[0]}' (in container '')", self._pos(n))
        if d == "paren_expr":
            return self.t(ch[0], scope)
        if d == "list_lit":
            for c in ch:
                self.t(c, scope)
            return "list"
        if d == "map_lit":
            for c in ch:
                self.t(c, scope)
            return "map"
        if d in ("exprlist", "mapinits", "fieldinits"):
            for c in ch:
                self.t(c, scope)
            return "dyn"
        if d == "member_object":
            raise _CompileError("undeclared reference to message type", self._pos(n))
        if d == "literal":
            tok = ch[0]
            return {"UINT_LIT": "uint", "FLOAT_LIT": "double", "INT_LIT": "int", "MLSTRING_LIT": "string",
                    "STRING_LIT": "string", "BYTES_LIT": "bytes", "BOOL_LIT": "bool",
                    "NULL_LIT": "null"}.get(tok.type, "dyn")
        return "dyn"

    def _dot_pos(self, base) -> int:
        i = self.text.find(".", self._end(base))
        return i if i >= 0 else self._end(base)

    @staticmethod
    def _descend(n):
        while isinstance(n, lark.Tree) and n.data in (
                "expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication",
                "unary", "member", "primary") and len(n.children) == 1:
            n = n.children[0]
        return n

    def _is_ident(self, n, name) -> bool:
        n = self._descend(n)
        return isinstance(n, lark.Tree) and n.data == "ident" and str(n.children[0]) == name

    def _bare_ident(self, n):
        n = self._descend(n)
        if isinstance(n, lark.Tree) and n.data == "ident":
            return str(n.children[0])
        return None

    def _select_of(self, n):
        n = self._descend(n)
        return n if isinstance(n, lark.Tree) and n.data == "member_dot" else None


def _format_error(text: str, msg: str, offset: int) -> str:
    """cel-go's issue format: location, message, the source line and a caret."""
    line_no = text.count("\n", 0, offset) + 1
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    line = text[line_start:] if line_end < 0 else text[line_start:line_end]
    col = offset - line_start
    return f"ERROR: <input>:{line_no}:{col + 1}: {msg}\n | {line}\n | {'.' * col}^"


# -- cel.bind ---------------------------------------------------------------------
_BIND_TEMPLATE = None


def _rewrite_bind(tree):
    """cel.bind(v, init, body) -> [init].map(v, body)[0]: same value, same laziness
    of errors in `init` (evaluated once, before `body`)."""
    global _BIND_TEMPLATE
    if _BIND_TEMPLATE is None:
        t = _ENV.compile("[__i].map(__v, __b)[0]")
        _BIND_TEMPLATE = next(t.find_data("member_index"))

    def is_bind(n):
        if not (isinstance(n, lark.Tree) and n.data == "member_dot_arg" and len(n.children) == 3
                and str(n.children[1]) == "bind"):
            return False
        base = _Checker._descend(n.children[0])
        return isinstance(base, lark.Tree) and base.data == "ident" and str(base.children[0]) == "cel"

    def rec(n):
        if not isinstance(n, lark.Tree):
            return n
        n.children = [rec(c) for c in n.children]
        for i, c in enumerate(n.children):
            if is_bind(c):
                var, init, body = c.children[2].children
                mi = copy.deepcopy(_BIND_TEMPLATE)
                mda = next(mi.find_data("member_dot_arg"))
                lst = next(mda.find_data("list_lit"))
                lst.children[0].children[0] = init
                mda.children[2].children = [var, body]
                n.children[i] = mi
        return n

    return rec(tree)


# -- compile and evaluate -------------------------------------------------------
class CompiledSelector:
    """A selector expression: either a program or upstream's compile error text."""

    __slots__ = ("expression", "program", "error", "fast", "key")

    def __init__(self, expression: str, consumable_capacity: bool = False):
        self.expression = expression
        # The key of this selector's results cached on devices: the device
        # type differs with DRAConsumableCapacity.
        self.key = (expression, True) if consumable_capacity else expression
        self.program = None
        self.fast = None
        self.error: str | None = None
        try:
            tree = _ENV.compile(expression)
        except CELParseError as exc:
            line = getattr(exc, "line", None) or 1
            col = getattr(exc, "column", None) or 1
            offset = _line_offset(expression, line) + max(col - 1, 0)
            offset = min(offset, len(expression))
            self.error = "compilation failed: " + _format_error(
                expression, "Syntax error: " + _parse_message(expression, offset), offset)
            return
        try:
            result = _Checker(expression, _DEVICE_FIELDS_CC if consumable_capacity else _DEVICE_FIELDS).check(tree)
        except _CompileError as exc:
            self.error = "compilation failed: " + _format_error(expression, exc.msg, exc.offset)
            return
        if result not in ("bool", "dyn"):
            self.error = f"must evaluate to bool or the unknown type, not {_tname(result)}"
            return
        try:
            self.fast = _fast_compile(tree)
        except _Unsupported:
            self.fast = None
        self.program = _ENV.program(_rewrite_bind(tree), functions=_FUNCTIONS)

    def matches(self, device: "CelDevice") -> bool:
        """True/False, or raises CelRuntimeError (cached on the device)."""
        r = device.results.get(self.key)
        if r is None:
            r = device.results[self.key] = self._evaluate(device)
        if r is True or r is False:
            return r
        raise r

    def _evaluate(self, device: "CelDevice"):
        if device.error is not None:
            return CelRuntimeError(device.error)
        if self.fast is not None:
            try:
                r = self.fast(device.native())
            except _Fail as exc:
                return CelRuntimeError(str(exc))
            if type(r) is bool:
                return r
            return CelRuntimeError(f"CEL result of type {_ctype(r)} could not be converted to bool")
        return self.evaluate_slow(device)

    def evaluate_slow(self, device: "CelDevice"):
        """celpy's evaluation (also used by tests to check the fast path)."""
        if device.error is not None:
            return CelRuntimeError(device.error)
        try:
            r = self.program.evaluate({"device": device.activation()})
        except CELEvalError as exc:
            r = exc
        except Exception as exc:  # celpy surfaces some failures as Python errors
            return CelRuntimeError(_runtime_message(exc))
        if isinstance(r, CELEvalError):
            return CelRuntimeError(_runtime_message(r))
        if isinstance(r, ct.BoolType):
            return bool(r)
        return CelRuntimeError(f"CEL result of type {_cel_type_name(r)} could not be converted to bool")


def _line_offset(text: str, line: int) -> int:
    off = 0
    for _ in range(line - 1):
        nl = text.find("\n", off)
        if nl < 0:
            break
        off = nl + 1
    return off


def _parse_message(text: str, offset: int) -> str:
    """cel-go names the offending token; celpy's texts differ, so say which."""
    rest = text[offset:].lstrip()
    if not rest:
        return "mismatched input '<EOF>'"
    m = re.match(r"[A-Za-z_][A-Za-z0-9_]*|\d+|\S", rest)
    return f"mismatched input '{m.group(0)}'"


def _cel_type_name(v) -> str:
    names = {ct.IntType: "int", ct.UintType: "uint", ct.DoubleType: "double", ct.StringType: "string",
             ct.BytesType: "bytes", ct.ListType: "list", ct.MapType: "map", CelQuantity: "kubernetes.Quantity",
             CelSemver: "kubernetes.Semver"}
    for cls, name in names.items():
        if isinstance(v, cls):
            return name
    return "null_type" if v is None else type(v).__name__


def _runtime_message(exc) -> str:
    args = getattr(exc, "args", ())
    msg = str(args[0]) if args else str(exc)
    m = re.match(r"no such member in mapping: '?(.*?)'?$", msg) or re.match(r"no such key: '?(.*?)'?$", msg)
    if m:
        return f"no such key: {m.group(1)}"
    if "no matching overload" in msg or msg.startswith("no such overload") or "unsupported operand" in msg:
        return "no such overload"
    if "overflow" in msg:
        return "integer overflow"
    if "divide by zero" in msg or "division by zero" in msg:
        # celpy does not tell `/` from `%` here; division is the common case.
        return "division by zero"
    if len(args) > 2 and args[2] and isinstance(args[2], tuple) and args[2] and isinstance(args[2][0], str):
        return args[2][0]
    return msg


class CelDevice:
    """A device as CEL sees it (compile.go DeviceMatches input), built once."""

    __slots__ = ("driver", "device", "error", "results", "_activation", "_native")

    def __init__(self, driver: str, device: dict):
        self.driver = driver
        self.device = device
        self.error = None
        # expression -> True / False / CelRuntimeError
        self.results: dict = {}
        self._activation = None
        self._native = None
        # Attribute values are converted before any expression runs, so a bad
        # version attribute fails every selector on this device (as upstream).
        for name, attr in sorted((device.get("attributes") or {}).items()):
            if not isinstance(attr, dict):
                self.error = f"attribute {name}: unsupported attribute value"
                break
            if attr.get("int") is None and attr.get("bool") is None and attr.get("string") is None:
                if attr.get("version") is None:
                    self.error = f"attribute {name}: unsupported attribute value"
                    break
                if attr.get("version") is not None:
                    try:
                        Semver.parse(str(attr["version"]))
                    except SemverError as exc:
                        self.error = f"attribute {name}: parse semantic version: {exc}"
                        break

    def native(self):
        n = self._native
        if n is None:
            n = self._native = _native_device(self)
        return n

    def activation(self):
        a = self._activation
        if a is None:
            a = self._activation = self._build()
        return a

    def _build(self):
        attrs: dict = {}
        for name, attr in (self.device.get("attributes") or {}).items():
            domain, ident = _split_qualified(name, self.driver)
            attrs.setdefault(domain, {})[ident] = _attr_value(attr)
        caps: dict = {}
        for name, cap in (self.device.get("capacity") or {}).items():
            domain, ident = _split_qualified(name, self.driver)
            value = cap.get("value") if isinstance(cap, dict) else cap
            caps.setdefault(domain, {})[ident] = CelQuantity(parse_quantity(value))
        return ct.MapType({
            ct.StringType("driver"): ct.StringType(self.driver),
            ct.StringType("attributes"): _DomainMap({
                ct.StringType(d): ct.MapType({ct.StringType(k): v for k, v in m.items()}) for d, m in attrs.items()}),
            ct.StringType("capacity"): _DomainMap({
                ct.StringType(d): ct.MapType({ct.StringType(k): v for k, v in m.items()}) for d, m in caps.items()}),
            # Present only in the DRAConsumableCapacity device type; the
            # static check refuses the field otherwise.
            ct.StringType("allowMultipleAllocations"): ct.BoolType(self.device.get("allowMultipleAllocations") is True),
        })


def _attr_value(attr: dict):
    # getAttributeValue: int, bool, string, version, in that order.
    if attr.get("int") is not None:
        return ct.IntType(int(attr["int"]))
    if attr.get("bool") is not None:
        return ct.BoolType(bool(attr["bool"]))
    if attr.get("string") is not None:
        return ct.StringType(str(attr["string"]))
    return CelSemver(Semver.parse(str(attr["version"])))


def _split_qualified(name: str, default_domain: str):
    i = name.find("/")
    if i < 0:
        return default_domain, name
    return name[:i], name[i + 1:]


_CACHE: dict = {}


def compile_selector(expression: str, consumable_capacity: bool = False) -> CompiledSelector:
    """Compiled once per expression text (and device type: with
    DRAConsumableCapacity, `device.allowMultipleAllocations` exists) for the
    life of the process (upstream keeps an LRU of 10; results are the same,
    only memory differs)."""
    key = (expression, True) if consumable_capacity else expression
    c = _CACHE.get(key)
    if c is None:
        c = _CACHE[key] = CompiledSelector(expression, consumable_capacity)
    return c


# -- a native fast path ------------------------------------------------------------
# celpy interprets its parse tree at 100-400 µs per evaluation; a first DRA pod
# on a large cluster evaluates every selector on every device. The selectors
# people write use a small part of CEL (device fields, comparisons, string
# and quantity/semver methods, &&, ||, !), so that part is compiled to Python
# closures with CEL's semantics (commutative error absorption of && and ||,
# heterogeneous equality, cel-go's error texts). Anything else runs on celpy.
class _Unsupported(Exception):
    pass


class _Fail(Exception):
    """A CEL evaluation error inside the fast path."""


_DEV = object()
_STR_LIT = re.compile(r'^"([^"\\]*)"$|^\'([^\'\\]*)\'$')


def _ctype(v):
    t = type(v)
    if t is bool:
        return "bool"
    if t is int:
        return "int"
    if t is float:
        return "double"
    if t is str:
        return "string"
    if t is Quantity:
        return "quantity"
    if t is Semver:
        return "semver"
    if t is dict:
        return "map"
    return "other"


def _f_eq(a, b):
    ta, tb = _ctype(a), _ctype(b)
    if ta in ("quantity", "semver"):
        if ta != tb:
            raise _Fail("no such overload")
        return a == b if ta == "quantity" else a.compare(b) == 0
    if tb in ("quantity", "semver"):
        return False
    if ta in ("int", "double") and tb in ("int", "double"):
        return a == b
    if ta != tb:
        return False
    return a == b


def _f_cmp(op):
    def f(a, b):
        ta, tb = _ctype(a), _ctype(b)
        ok = (ta == tb and ta in ("int", "double", "string", "bool")) or (
            ta in ("int", "double") and tb in ("int", "double"))
        if not ok:
            raise _Fail("no such overload")
        return op(a, b)
    return f


import operator as _op  # noqa: E402

_BIN = {"relation_lt": _f_cmp(_op.lt), "relation_le": _f_cmp(_op.le), "relation_gt": _f_cmp(_op.gt),
        "relation_ge": _f_cmp(_op.ge), "relation_eq": _f_eq, "relation_ne": lambda a, b: not _f_eq(a, b)}


def _m_str(fn):
    def f(obj, args):
        if type(obj) is not str or len(args) != 1 or type(args[0]) is not str:
            raise _Fail("no such overload")
        return fn(obj, args[0])
    return f


def _m_cmp(kind):
    def f(obj, args):
        if len(args) != 1 or _ctype(obj) not in ("quantity", "semver") or _ctype(args[0]) != _ctype(obj):
            raise _Fail("no such overload")
        c = obj.cmp(args[0]) if type(obj) is Quantity else obj.compare(args[0])
        if kind == "compareTo":
            return c
        return c == 1 if kind == "isGreaterThan" else c == -1
    return f


try:  # celpy evaluates matches() with RE2, as cel-go does
    import re2 as _re_engine
except ImportError:  # pragma: no cover
    _re_engine = re

_METHODS = {
    "startsWith": _m_str(lambda s, p: s.startswith(p)),
    "endsWith": _m_str(lambda s, p: s.endswith(p)),
    "contains": _m_str(lambda s, p: p in s),
    "matches": _m_str(lambda s, p: _re_engine.search(p, s) is not None),
    "compareTo": _m_cmp("compareTo"),
    "isGreaterThan": _m_cmp("isGreaterThan"),
    "isLessThan": _m_cmp("isLessThan"),
}


def _fast_compile(n):
    """Parse tree -> closure(native device) -> value; raises _Unsupported."""
    if isinstance(n, lark.Token):
        raise _Unsupported()
    d, ch = n.data, n.children
    if d in ("expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication",
             "unary", "member", "primary") and len(ch) == 1:
        return _fast_compile(ch[0])
    if d in ("conditionalor", "conditionaland"):
        left, right = _fast_compile(ch[0]), _fast_compile(ch[1])
        absorbing = d == "conditionalor"  # true absorbs in ||, false in &&

        def logic(dev):
            err = None
            for side in (left, right):
                try:
                    v = side(dev)
                except _Fail as exc:
                    err = err or exc
                    continue
                if type(v) is not bool:
                    err = err or _Fail("no such overload")
                    continue
                if v is absorbing:
                    return absorbing
            if err is not None:
                raise err
            return not absorbing
        return logic
    if d == "relation":
        opnode, right = ch
        fn = _BIN.get(opnode.data)
        if fn is None:
            raise _Unsupported()
        a, b = _fast_compile(opnode.children[0]), _fast_compile(right)
        return lambda dev: fn(a(dev), b(dev))
    if d == "unary" and len(ch) == 2 and ch[0].data == "unary_not":
        inner = _fast_compile(ch[1])

        def neg(dev):
            v = inner(dev)
            if type(v) is not bool:
                raise _Fail("no such overload")
            return not v
        return neg
    if d == "paren_expr":
        return _fast_compile(ch[0])
    if d == "literal":
        tok = ch[0]
        if tok.type == "BOOL_LIT":
            v = str(tok) == "true"
        elif tok.type == "INT_LIT" and re.fullmatch(r"-?\d+", str(tok)):
            v = int(str(tok))
        elif tok.type == "STRING_LIT" and _STR_LIT.match(str(tok)):
            m = _STR_LIT.match(str(tok))
            v = m.group(1) if m.group(1) is not None else m.group(2)
        else:
            raise _Unsupported()
        return lambda dev: v
    if d == "ident":
        if str(ch[0]) != "device":
            raise _Unsupported()
        return lambda dev: _DEV
    if d == "member_dot":
        base, name = _fast_compile(ch[0]), str(ch[1])
        return _select(base, name)
    if d == "member_index":
        base = _fast_compile(ch[0])
        key = _fast_compile(ch[1])

        def index(dev):
            k = key(dev)
            if type(k) is not str:
                raise _Fail("no such overload")
            return _lookup(base(dev), k)
        return index
    if d == "member_dot_arg":
        name = str(ch[1])
        method = _METHODS.get(name)
        if method is None:
            raise _Unsupported()
        base = _fast_compile(ch[0])
        args = [_fast_compile(a) for a in (ch[2].children if len(ch) > 2 else [])]
        return lambda dev: method(base(dev), [a(dev) for a in args])
    if d == "ident_arg":
        name = str(ch[0])
        args = ch[1].children if len(ch) > 1 else []
        if name in ("quantity", "semver") and len(args) == 1:
            arg = _fast_compile(args[0])

            def ctor(dev):
                s = arg(dev)
                if type(s) is not str:
                    raise _Fail("no such overload")
                try:
                    return Quantity.parse(s) if name == "quantity" else Semver.parse(s)
                except (QuantityError, SemverError) as exc:
                    raise _Fail(str(exc)) from None
            return ctor
        raise _Unsupported()
    raise _Unsupported()


_FIELDS = {"driver": 0, "attributes": 1, "capacity": 2, "allowMultipleAllocations": 3}


def _select(base, name):
    def sel(dev):
        obj = base(dev)
        if obj is _DEV:
            return dev[_FIELDS[name]]
        return _lookup(obj, name)
    if name not in _FIELDS:
        def sel(dev):  # noqa: F811
            return _lookup(base(dev), name)
    return sel


def _lookup(obj, key):
    if type(obj) is _Domains:
        return obj.get(key, _EMPTY)
    if type(obj) is dict:
        try:
            return obj[key]
        except KeyError:
            raise _Fail(f"no such key: {key}") from None
    raise _Fail("no such overload")


class _Domains(dict):
    """attributes / capacity by domain; an unknown domain is an empty map."""


_EMPTY: dict = {}


def _native_device(cdev: "CelDevice"):
    attrs = _Domains()
    for name, attr in (cdev.device.get("attributes") or {}).items():
        domain, ident = _split_qualified(name, cdev.driver)
        if attr.get("int") is not None:
            v = int(attr["int"])
        elif attr.get("bool") is not None:
            v = bool(attr["bool"])
        elif attr.get("string") is not None:
            v = str(attr["string"])
        else:
            v = Semver.parse(str(attr["version"]))
        attrs.setdefault(domain, {})[ident] = v
    caps = _Domains()
    for name, cap in (cdev.device.get("capacity") or {}).items():
        domain, ident = _split_qualified(name, cdev.driver)
        value = cap.get("value") if isinstance(cap, dict) else cap
        caps.setdefault(domain, {})[ident] = parse_quantity(value)
    return (cdev.driver, attrs, caps, cdev.device.get("allowMultipleAllocations") is True)
