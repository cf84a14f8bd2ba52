"""Label and field selectors with apimachinery's semantics.

Two entry points, matching the two API shapes:
- node_selector_requirements(): core/v1 NodeSelectorRequirement lists
  (NodeAffinity), operators In/NotIn/Exists/DoesNotExist/Gt/Lt;
- label_selector(): metav1.LabelSelector (pod affinity, spread, PDBs,
  services), where a missing selector matches nothing and an empty one
  matches everything.
An invalid requirement makes the selector unusable, as a parse error does
upstream; callers decide what that means (usually: no match).
"""

from __future__ import annotations

import re

from .resources import _is_qualified_name

_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


class SelectorError(ValueError):
    pass


def _valid_value(v) -> bool:
    return isinstance(v, str) and len(v) <= 63 and bool(_LABEL_VALUE.match(v))


def _parse_int(v):
    """strconv.ParseInt(v, 10, 64), or None."""
    if not isinstance(v, str) or not re.fullmatch(r"[+-]?[0-9]+", v):
        return None
    n = int(v)
    if n < -(2**63) or n > 2**63 - 1:
        return None
    return n


class Requirement:
    __slots__ = ("key", "op", "values", "number")

    def __init__(self, key: str, op: str, values):
        values = list(values or ())
        if not isinstance(key, str) or not _is_qualified_name(key):
            raise SelectorError(f"invalid label key {key!r}")
        self.number = None
        if op in ("In", "NotIn", "in", "notin", "=", "==", "!="):
            if op in ("=", "==", "!=") and len(values) != 1:
                raise SelectorError("exact-match compatibility requires one single value")
            if not values:
                raise SelectorError("for 'in', 'notin' operators, values set can't be empty")
        elif op in ("Exists", "DoesNotExist", "exists", "!"):
            if values:
                raise SelectorError("values set must be empty for exists and does not exist")
        elif op in ("Gt", "Lt", "gt", "lt"):
            if len(values) != 1:
                raise SelectorError("for 'Gt', 'Lt' operators, exactly one value is required")
            self.number = _parse_int(values[0])
            if self.number is None:
                raise SelectorError(f"for 'Gt', 'Lt' operators, the value must be an integer")
        else:
            raise SelectorError(f"operator {op!r} is not recognized")
        # labels.NewRequirement checks every value as a label value, Gt/Lt
        # included: "-1" parses as an integer but is still rejected.
        for v in values:
            if not _valid_value(v):
                raise SelectorError(f"invalid label value {v!r}")
        self.key = key
        self.op = {"in": "In", "=": "In", "==": "In", "notin": "NotIn", "!=": "NotIn", "exists": "Exists",
                   "!": "DoesNotExist", "gt": "Gt", "lt": "Lt"}.get(op, op)
        self.values = frozenset(values)

    def matches(self, labels: dict) -> bool:
        op = self.op
        if op == "In":
            return self.key in labels and labels[self.key] in self.values
        if op == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        if self.key not in labels:
            return False
        n = _parse_int(labels[self.key])
        if n is None:
            return False
        return n > self.number if op == "Gt" else n < self.number

    def __repr__(self):
        return f"{self.key} {self.op} {sorted(self.values)}"


class Selector:
    """A conjunction of requirements; `nothing` matches no labels at all."""

    __slots__ = ("requirements", "nothing", "text")

    def __init__(self, requirements=(), nothing: bool = False):
        self.requirements = tuple(requirements)
        self.nothing = nothing
        self.text = None  # its String() form, once asked (podaffinity.selector_string)

    def matches(self, labels: dict) -> bool:
        if self.nothing:
            return False
        for r in self.requirements:
            if not r.matches(labels):
                return False
        return True

    def is_empty(self) -> bool:
        return not self.nothing and not self.requirements

    def __repr__(self):
        return "Nothing" if self.nothing else f"Selector({list(self.requirements)})"


EVERYTHING = Selector()
NOTHING = Selector(nothing=True)


def selector_from_set(labels: dict) -> Selector:
    return Selector([Requirement(k, "In", [v]) for k, v in sorted(labels.items())])


def label_selector(sel) -> Selector:
    """metav1.LabelSelectorAsSelector: None -> Nothing, {} -> Everything."""
    if sel is None:
        return NOTHING
    if not isinstance(sel, dict):
        raise SelectorError("label selector must be a mapping")
    reqs = []
    for k, v in (sel.get("matchLabels") or {}).items():
        reqs.append(Requirement(k, "In", [v]))
    for expr in sel.get("matchExpressions") or ():
        op = expr.get("operator")
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            raise SelectorError(f"{op!r} is not a valid label selector operator")
        reqs.append(Requirement(expr.get("key"), op, expr.get("values")))
    if not reqs:
        return EVERYTHING
    return Selector(reqs)


def node_selector_requirements(exprs) -> Selector:
    """nodeSelectorRequirementsAsSelector: an empty list matches nothing."""
    if not exprs:
        return NOTHING
    reqs = []
    for expr in exprs:
        op = expr.get("operator")
        if op not in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"):
            raise SelectorError(f"operator {op!r} is not supported")
        reqs.append(Requirement(expr.get("key"), op, expr.get("values")))
    return Selector(reqs)


class FieldSelector:
    """The metadata.name field selector NodeAffinity's matchFields builds."""

    __slots__ = ("terms", "nothing")

    def __init__(self, terms, nothing=False):
        self.terms = terms  # [(key, equal: bool, value)]
        self.nothing = nothing

    def matches(self, fields: dict) -> bool:
        if self.nothing:
            return False
        for key, equal, value in self.terms:
            if (fields.get(key) == value) != equal:
                return False
        return True


def node_field_selector(exprs) -> FieldSelector:
    if not exprs:
        return FieldSelector([], nothing=True)
    terms = []
    for expr in exprs:
        op = expr.get("operator")
        values = expr.get("values") or []
        if op not in ("In", "NotIn"):
            raise SelectorError(f"operator {op!r} is not supported for matchFields")
        if len(values) != 1:
            raise SelectorError("matchFields values must have one element")
        terms.append((expr.get("key"), op == "In", values[0]))
    return FieldSelector(terms)


class NodeSelectorTerm:
    """One nodeSelectorTerm: its label and field parts, or its parse error."""

    __slots__ = ("labels", "fields", "error")

    def __init__(self, term: dict):
        self.labels = None
        self.fields = None
        self.error = None
        try:
            if term.get("matchExpressions"):
                self.labels = node_selector_requirements(term["matchExpressions"])
            if term.get("matchFields"):
                self.fields = node_field_selector(term["matchFields"])
        except SelectorError as exc:
            self.error = str(exc)

    def matches(self, node_labels: dict, node_name: str) -> bool:
        if self.error is not None:
            return False
        if self.labels is not None and not self.labels.matches(node_labels):
            return False
        if self.fields is not None and node_name and not self.fields.matches({"metadata.name": node_name}):
            return False
        return True


def is_empty_term(term: dict) -> bool:
    return not term.get("matchExpressions") and not term.get("matchFields")


class NodeSelector:
    """v1.NodeSelector: terms ORed; empty terms are dropped as upstream does."""

    __slots__ = ("terms",)

    def __init__(self, ns: dict):
        self.terms = [NodeSelectorTerm(t) for t in (ns.get("nodeSelectorTerms") or ()) if not is_empty_term(t)]

    def matches(self, node_labels: dict, node_name: str) -> bool:
        return any(t.matches(node_labels, node_name) for t in self.terms)


# ---- the string form: kubectl -l / labels.Parse ----------------------------------------------

# Tokens of apimachinery's selector lexer. "in" and "notin" are keywords only
# where an operator is expected; where a key or value is, they are words.
_SPECIAL = frozenset("=!(),<>")
_SYMBOLS = ("!=", "==", "=", "!", "(", ")", ",", ">", "<")
_WHITESPACE = " \t\r\n"
_END = ("end", "")


def _lex(text: str) -> list[tuple[str, str]]:
    """(kind, literal) pairs: kind is "word", "in", "notin", a symbol, or "end".
    A run of symbol characters is read greedily as long as it stays a known
    symbol ("!=" but "=!" is "=" then "!"), as the upstream lexer does."""
    tokens = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _WHITESPACE:
            i += 1
        if i == n:
            tokens.append(_END)
            return tokens
        if text[i] in _SPECIAL:
            j, best = i, None
            while j < n and text[j] in _SPECIAL:
                j += 1
                if text[i:j] in _SYMBOLS:
                    best = j
                elif best is not None:
                    break
            if best is None:
                raise SelectorError(f"error expected: keyword found '{text[i:j]}'")
            tokens.append((text[i:best], text[i:best]))
            i = best
            continue
        j = i
        while j < n and text[j] not in _SPECIAL and text[j] not in _WHITESPACE:
            j += 1
        word = text[i:j]
        tokens.append((word if word in ("in", "notin") else "word", word))
        i = j


_BINARY = {"in": "In", "notin": "NotIn", "=": "=", "==": "==", "!=": "!=", ">": "Gt", "<": "Lt"}


class _SelectorParser:
    def __init__(self, text: str):
        self.tokens = _lex(text)
        self.pos = 0

    def peek(self, as_value: bool = True) -> tuple[str, str]:
        kind, lit = self.tokens[self.pos]
        return ("word" if as_value and kind in ("in", "notin") else kind), lit

    def take(self, as_value: bool = True) -> tuple[str, str]:
        tok = self.peek(as_value)
        self.pos += 1
        return tok

    def parse(self) -> list[Requirement]:
        reqs = []
        while True:
            kind, lit = self.peek()
            if kind == "end":
                return reqs
            if kind not in ("word", "!"):
                raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")
            try:
                reqs.append(self.requirement())
            except SelectorError as e:
                raise SelectorError(f"unable to parse requirement: {e}") from None
            kind, lit = self.take()
            if kind == "end":
                return reqs
            if kind != ",":
                raise SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
            kind, lit = self.peek()
            if kind not in ("word", "!"):
                raise SelectorError(f"found '{lit}', expected: identifier after ','")

    def requirement(self) -> Requirement:
        negated = False
        kind, key = self.take()
        if kind == "!":
            negated = True
            kind, key = self.take()
        if kind != "word":
            raise SelectorError(f"found '{key}', expected: identifier")
        if not _is_qualified_name(key):
            raise SelectorError(f"invalid label key {key!r}: must be a qualified name "
                                "(an optional DNS subdomain prefix and '/', then up to 63 "
                                "alphanumerics, '-', '_' or '.', starting and ending alphanumeric)")
        # "!key" stands alone: whatever follows it is refused by the caller.
        if negated:
            return Requirement(key, "DoesNotExist", [])
        if self.peek()[0] in ("end", ","):
            return Requirement(key, "Exists", [])
        kind, lit = self.take(as_value=False)
        op = _BINARY.get(kind)
        if op is None:
            raise SelectorError(f"found '{lit}', expected: in, notin, =, ==, !=, gt, lt")
        values = self.set_values() if op in ("In", "NotIn") else self.exact_value()
        return Requirement(key, op, sorted(values))

    def set_values(self) -> set[str]:
        kind, lit = self.take()
        if kind != "(":
            raise SelectorError(f"found '{lit}' expected: '('")
        kind, lit = self.peek()
        if kind == ")":
            self.take()
            return {""}
        if kind not in ("word", ","):
            raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")
        values: set[str] = set()
        # Empty places in the list ("(,a)", "(a,,b)", "(a,)") are empty values.
        while True:
            kind, lit = self.take()
            if kind == "word":
                values.add(lit)
                nxt, nlit = self.peek()
                if nxt == ")":
                    break
                if nxt != ",":
                    raise SelectorError(f"found '{nlit}', expected: ',' or ')'")
            elif kind == ",":
                if not values:
                    values.add("")
                nxt, _ = self.peek()
                if nxt == ")":
                    values.add("")
                    break
                if nxt == ",":
                    values.add("")
            else:
                raise SelectorError(f"found '{lit}', expected: ',', or identifier")
        kind, lit = self.take()
        if kind != ")":  # pragma: no cover - the loop only ends before ")"
            raise SelectorError(f"found '{lit}', expected: ')'")
        return values

    def exact_value(self) -> set[str]:
        kind, lit = self.peek()
        if kind in ("end", ","):
            return {""}  # "a=" selects an empty value
        kind, lit = self.take()
        if kind != "word":
            raise SelectorError(f"found '{lit}', expected: identifier")
        return {lit}


def parse_selector(text: str) -> Selector:
    """A label selector in kubectl's -l syntax (apimachinery labels.Parse):
    equality (`a=b`, `a==b`, `a!=b`), sets (`a in (b,c)`, `a notin (b)`),
    existence (`a`, `!a`) and integer comparison (`a>1`, `a<1`), joined by
    commas, all of which must hold. The empty string selects everything."""
    reqs = _SelectorParser(text).parse()
    return Selector(sorted(reqs, key=lambda r: r.key)) if reqs else EVERYTHING
