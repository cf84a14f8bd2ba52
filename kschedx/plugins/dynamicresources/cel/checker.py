"""The static check cel-go's checker makes and celpy has not: syntax
errors, unknown identifiers and functions, unknown `device` fields,
mismatched operand types of known static type, and a result that is no
bool, reported as compile errors with cel-go's texts and format."""

from __future__ import annotations

import lark

from .library import GLOBAL_RESULT, KNOWN_FUNCTIONS, METHOD_RESULT


class CompileError(Exception):
    def __init__(self, msg: str, offset: int):
        super().__init__(msg)
        self.msg = msg
        self.offset = offset


DEVICE_FIELDS = {"driver": "string", "attributes": "attrs", "capacity": "caps"}
# With DRAConsumableCapacity the device type has one more field (cel/compile.go
# deviceTypeV134ConsumableCapacity).
DEVICE_FIELDS_CC = dict(DEVICE_FIELDS, allowMultipleAllocations="bool")
_ORDERED = {"int", "uint", "double", "string", "bytes", "bool", "timestamp", "duration"}
_NUM_T = {"int", "uint", "double"}
_OPS = {"relation_lt": "<", "relation_le": "<=", "relation_gt": ">", "relation_ge": ">=",
        "relation_eq": "==", "relation_ne": "!=", "relation_in": "in"}
_TYPE_NAMES = {"attrs": "map(string, map(string, dyn))", "caps": "map(string, map(string, quantity))",
               "attrs_inner": "map(string, dyn)", "caps_inner": "map(string, quantity)",
               "device": "kubernetes.DRADevice", "quantity": "kubernetes.Quantity",
               "semver": "kubernetes.Semver", "null": "null_type", "list": "list(dyn)",
               "map": "map(dyn, dyn)"}


def tname(t: str) -> str:
    return _TYPE_NAMES.get(t, t)


class Checker:
    def __init__(self, text: str, device_fields: dict = DEVICE_FIELDS):
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
                    raise CompileError(
                        f"found no matching overload for '_{op}_' applied to '({tname(a)}, {tname(b)})'",
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
                raise CompileError(
                    f"found no matching overload for '{name}' applied to '({tname(a)}, {tname(b)})'",
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
                    raise CompileError(f"found no matching overload for '!_' applied to '({tname(a)})'",
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
                    raise CompileError(f"undefined field '{name}'", self._dot_pos(base))
                return self.device_fields[name]
            if bt in ("attrs", "caps"):
                return bt + "_inner"
            if bt == "caps_inner":
                return "quantity"
            if bt in ("string", "int", "uint", "double", "bool", "bytes", "null", "quantity", "semver"):
                raise CompileError(f"type '{tname(bt)}' does not support field selection", self._dot_pos(base))
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
                    raise CompileError("cel.bind() variable name must be a simple identifier", self._pos(n))
                self.t(args[1], scope)
                return self.t(args[2], scope | {self._bare_ident(args[0])})
            if ident in ("exists", "all", "exists_one", "map", "filter"):
                self.t(base, scope)
                var = self._bare_ident(args[0]) if args else None
                if var is None:
                    raise CompileError(f"{ident}() variable name must be a simple identifier", self._pos(n))
                inner = scope | {var}
                for a in args[1:]:
                    self.t(a, inner)
                return "list" if ident in ("map", "filter") else "bool"
            self.t(base, scope)
            for a in args:
                self.t(a, scope)
            if ident not in KNOWN_FUNCTIONS:
                raise CompileError(f"undeclared reference to '{ident}' (in container '')", self._dot_pos(base))
            return METHOD_RESULT.get(ident, "dyn")
        if d == "ident":
            name = str(ch[0])
            if name in scope:
                return "dyn"
            if name == "device":
                return "device"
            raise CompileError(f"undeclared reference to '{name}' (in container '')", self._pos(n))
        if d == "ident_arg":
            name = str(ch[0])
            args = ch[1].children if len(ch) > 1 else []
            if name == "has":
                if len(args) != 1 or self._select_of(args[0]) is None:
                    raise CompileError("invalid argument to has() macro", self._pos(n))
            if name not in KNOWN_FUNCTIONS:
                raise CompileError(f"undeclared reference to '{name}' (in container '')", self._pos(n))
            for a in args:
                self.t(a, scope)
            return GLOBAL_RESULT.get(name, "dyn")
        if d in ("dot_ident", "dot_ident_arg"):
            raise CompileError(f"undeclared reference to '{ch[0]}' (in container '')", self._pos(n))
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
            raise CompileError("undeclared reference to message type", self._pos(n))
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


def format_error(text: str, msg: str, offset: int) -> str:
    """cel-go's issue format: location, message, the source line and a caret."""
    line_no = text.count("\n", 0, offset) + 1
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    line = text[line_start:] if line_end < 0 else text[line_start:line_end]
    col = offset - line_start
    return f"ERROR: <input>:{line_no}:{col + 1}: {msg}\n | {line}\n | {'.' * col}^"


