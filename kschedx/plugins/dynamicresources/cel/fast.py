"""A native fast path for the selectors people write."""

from __future__ import annotations

import re

import lark

from ....api.quantity import Quantity, QuantityError, parse_quantity
from .library import split_qualified
from .semver import Semver, SemverError


# celpy interprets its parse tree at 100-400 µs per evaluation; a first DRA pod
# on a large cluster evaluates every selector on every device. The selectors
# people write use a small part of CEL (device fields, comparisons, string
# and quantity/semver methods, &&, ||, !), so that part is compiled to Python
# closures with CEL's semantics (commutative error absorption of && and ||,
# heterogeneous equality, cel-go's error texts). Anything else runs on celpy.
class Unsupported(Exception):
    pass


class Fail(Exception):
    """A CEL evaluation error inside the fast path."""


_DEV = object()
_STR_LIT = re.compile(r'^"([^"\\]*)"$|^\'([^\'\\]*)\'$')


def ctype(v):
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
    ta, tb = ctype(a), ctype(b)
    if ta in ("quantity", "semver"):
        if ta != tb:
            raise Fail("no such overload")
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
        ta, tb = ctype(a), ctype(b)
        ok = (ta == tb and ta in ("int", "double", "string", "bool")) or (
            ta in ("int", "double") and tb in ("int", "double"))
        if not ok:
            raise Fail("no such overload")
        return op(a, b)
    return f


import operator as _op  # noqa: E402

_BIN = {"relation_lt": _f_cmp(_op.lt), "relation_le": _f_cmp(_op.le), "relation_gt": _f_cmp(_op.gt),
        "relation_ge": _f_cmp(_op.ge), "relation_eq": _f_eq, "relation_ne": lambda a, b: not _f_eq(a, b)}


def _m_str(fn):
    def f(obj, args):
        if type(obj) is not str or len(args) != 1 or type(args[0]) is not str:
            raise Fail("no such overload")
        return fn(obj, args[0])
    return f


def _m_cmp(kind):
    def f(obj, args):
        if len(args) != 1 or ctype(obj) not in ("quantity", "semver") or ctype(args[0]) != ctype(obj):
            raise Fail("no such overload")
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


def fast_compile(n):
    """Parse tree -> closure(native device) -> value; raises Unsupported."""
    if isinstance(n, lark.Token):
        raise Unsupported()
    d, ch = n.data, n.children
    if d in ("expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication",
             "unary", "member", "primary") and len(ch) == 1:
        return fast_compile(ch[0])
    if d in ("conditionalor", "conditionaland"):
        left, right = fast_compile(ch[0]), fast_compile(ch[1])
        absorbing = d == "conditionalor"  # true absorbs in ||, false in &&

        def logic(dev):
            err = None
            for side in (left, right):
                try:
                    v = side(dev)
                except Fail as exc:
                    err = err or exc
                    continue
                if type(v) is not bool:
                    err = err or Fail("no such overload")
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
            raise Unsupported()
        a, b = fast_compile(opnode.children[0]), fast_compile(right)
        return lambda dev: fn(a(dev), b(dev))
    if d == "unary" and len(ch) == 2 and ch[0].data == "unary_not":
        inner = fast_compile(ch[1])

        def neg(dev):
            v = inner(dev)
            if type(v) is not bool:
                raise Fail("no such overload")
            return not v
        return neg
    if d == "paren_expr":
        return fast_compile(ch[0])
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
            raise Unsupported()
        return lambda dev: v
    if d == "ident":
        if str(ch[0]) != "device":
            raise Unsupported()
        return lambda dev: _DEV
    if d == "member_dot":
        base, name = fast_compile(ch[0]), str(ch[1])
        return _select(base, name)
    if d == "member_index":
        base = fast_compile(ch[0])
        key = fast_compile(ch[1])

        def index(dev):
            k = key(dev)
            if type(k) is not str:
                raise Fail("no such overload")
            return _lookup(base(dev), k)
        return index
    if d == "member_dot_arg":
        name = str(ch[1])
        method = _METHODS.get(name)
        if method is None:
            raise Unsupported()
        base = fast_compile(ch[0])
        args = [fast_compile(a) for a in (ch[2].children if len(ch) > 2 else [])]
        return lambda dev: method(base(dev), [a(dev) for a in args])
    if d == "ident_arg":
        name = str(ch[0])
        args = ch[1].children if len(ch) > 1 else []
        if name in ("quantity", "semver") and len(args) == 1:
            arg = fast_compile(args[0])

            def ctor(dev):
                s = arg(dev)
                if type(s) is not str:
                    raise Fail("no such overload")
                try:
                    return Quantity.parse(s) if name == "quantity" else Semver.parse(s)
                except (QuantityError, SemverError) as exc:
                    raise Fail(str(exc)) from None
            return ctor
        raise Unsupported()
    raise Unsupported()


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
            raise Fail(f"no such key: {key}") from None
    raise Fail("no such overload")


class _Domains(dict):
    """attributes / capacity by domain; an unknown domain is an empty map."""


_EMPTY: dict = {}


def native_device(cdev):
    """A CelDevice (compile.py) as the fast path reads it: (driver, attributes, capacity,
    allowMultipleAllocations)."""
    attrs = _Domains()
    for name, attr in (cdev.device.get("attributes") or {}).items():
        domain, ident = split_qualified(name, cdev.driver)
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
        domain, ident = split_qualified(name, cdev.driver)
        value = cap.get("value") if isinstance(cap, dict) else cap
        caps.setdefault(domain, {})[ident] = parse_quantity(value)
    return (cdev.driver, attrs, caps, cdev.device.get("allowMultipleAllocations") is True)
