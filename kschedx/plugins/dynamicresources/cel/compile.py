"""Device selectors compiled and evaluated, as kube-scheduler v1.35 and
v1.36 compile and evaluate them: celpy's parse tree, the static check
(checker.py), the fast path where it applies (fast.py), else celpy's
program with the libraries (library.py); results cached per (expression,
device). The devices as CEL sees them (CelDevice)."""

from __future__ import annotations

import copy
import logging
import re

import celpy
import lark
from celpy import celtypes as ct
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError

from ....api.quantity import parse_quantity
from .checker import DEVICE_FIELDS, DEVICE_FIELDS_CC, Checker, CompileError, format_error, tname
from .fast import Fail, Unsupported, ctype, fast_compile, native_device
from .library import FUNCTIONS, CelQuantity, CelRuntimeError, CelSemver, DomainMap, split_qualified
from .semver import Semver, SemverError

logging.getLogger("celpy").setLevel(logging.CRITICAL)  # celpy logs every runtime error

_ENV = celpy.Environment()


# -- cel.bind ---------------------------------------------------------------------
_BIND_TEMPLATE = None


def rewrite_bind(tree):
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
        base = Checker._descend(n.children[0])
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
            self.error = "compilation failed: " + format_error(
                expression, "Syntax error: " + _parse_message(expression, offset), offset)
            return
        try:
            result = Checker(expression, DEVICE_FIELDS_CC if consumable_capacity else DEVICE_FIELDS).check(tree)
        except CompileError as exc:
            self.error = "compilation failed: " + format_error(expression, exc.msg, exc.offset)
            return
        if result not in ("bool", "dyn"):
            self.error = f"must evaluate to bool or the unknown type, not {tname(result)}"
            return
        try:
            self.fast = fast_compile(tree)
        except Unsupported:
            self.fast = None
        self.program = _ENV.program(rewrite_bind(tree), functions=FUNCTIONS)

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
            except Fail as exc:
                return CelRuntimeError(str(exc))
            if type(r) is bool:
                return r
            return CelRuntimeError(f"CEL result of type {ctype(r)} could not be converted to bool")
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
            n = self._native = native_device(self)
        return n

    def activation(self):
        a = self._activation
        if a is None:
            a = self._activation = self._build()
        return a

    def _build(self):
        attrs: dict = {}
        for name, attr in (self.device.get("attributes") or {}).items():
            domain, ident = split_qualified(name, self.driver)
            attrs.setdefault(domain, {})[ident] = _attr_value(attr)
        caps: dict = {}
        for name, cap in (self.device.get("capacity") or {}).items():
            domain, ident = split_qualified(name, self.driver)
            value = cap.get("value") if isinstance(cap, dict) else cap
            caps.setdefault(domain, {})[ident] = CelQuantity(parse_quantity(value))
        return ct.MapType({
            ct.StringType("driver"): ct.StringType(self.driver),
            ct.StringType("attributes"): DomainMap({
                ct.StringType(d): ct.MapType({ct.StringType(k): v for k, v in m.items()}) for d, m in attrs.items()}),
            ct.StringType("capacity"): DomainMap({
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


