"""Which pending pods a command takes, chosen with kubectl's flags: namespace
(-n / -A), label selector (-l, labels.parse_selector) and field selector
(--field-selector, apimachinery fields.ParseSelector with the pod fields the
API server can select on). Pure functions of the pod objects: the same
selection gives the same pods from a live cluster and from its snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass

from .labels import Selector, SelectorError, parse_selector


class FieldSelectorError(ValueError):
    pass


def _phase(pod: dict) -> str:
    # The API server sets Pending when it stores a pod; a hand-written pending
    # pod without status is in that phase too.
    return (pod.get("status") or {}).get("phase") or "Pending"


# The pod fields the API server accepts in a field selector (the pod
# registry's selectable fields), each as kube-apiserver renders its value.
POD_FIELDS = {
    "metadata.name": lambda p: p["metadata"].get("name") or "",
    "metadata.namespace": lambda p: p["metadata"].get("namespace") or "default",
    "spec.nodeName": lambda p: (p.get("spec") or {}).get("nodeName") or "",
    "spec.restartPolicy": lambda p: (p.get("spec") or {}).get("restartPolicy") or "",
    "spec.schedulerName": lambda p: (p.get("spec") or {}).get("schedulerName") or "",
    "spec.serviceAccountName": lambda p: (p.get("spec") or {}).get("serviceAccountName") or "",
    "spec.hostNetwork": lambda p: "true" if (p.get("spec") or {}).get("hostNetwork") else "false",
    "status.phase": _phase,
    "status.podIP": lambda p: (p.get("status") or {}).get("podIP") or "",
    "status.nominatedNodeName": lambda p: (p.get("status") or {}).get("nominatedNodeName") or "",
}


def _split_terms(text: str) -> list[str]:
    """Commas separate terms, except escaped ones (`\\,`)."""
    terms, start, escaped = [], 0, False
    for i, c in enumerate(text):
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif c == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _unescape(value: str) -> str:
    out, escaped = [], False
    for c in value:
        if escaped:
            if c not in "\\,=":
                raise FieldSelectorError(f"invalid field selector: invalid escape sequence: \\{c}")
            out.append(c)
            escaped = False
        elif c == "\\":
            escaped = True
        elif c in ",=":
            raise FieldSelectorError(f"invalid field selector: unescaped character in value: {c}")
        else:
            out.append(c)
    if escaped:
        raise FieldSelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


@dataclass(frozen=True)
class FieldRequirement:
    field: str
    value: str
    equal: bool

    def matches(self, pod: dict) -> bool:
        return (POD_FIELDS[self.field](pod) == self.value) == self.equal


def parse_field_selector(text: str) -> tuple[FieldRequirement, ...]:
    """kubectl's --field-selector: `field=value`, `field==value` and
    `field!=value` terms joined by commas, every one of which must hold;
    values escape `\\`, `,` and `=` with a backslash. Fields are the pod
    fields the API server can select on (POD_FIELDS)."""
    reqs = []
    for term in sorted(_split_terms(text)):
        if term == "":
            continue
        for i in range(len(term)):
            # The first operator found from the left, "!=" and "==" before "=".
            op = next((o for o in ("!=", "==", "=") if term.startswith(o, i)), None)
            if op:
                field, value = term[:i], term[i + len(op):]
                break
        else:
            raise FieldSelectorError(f"invalid selector: '{text}'; can't understand '{term}'")
        value = _unescape(value)
        if field not in POD_FIELDS:
            raise FieldSelectorError(f"field label not supported: {field} "
                                     f"(pods select on {', '.join(POD_FIELDS)})")
        reqs.append(FieldRequirement(field, value, op != "!="))
    return tuple(reqs)


@dataclass(frozen=True)
class PodSelection:
    """kubectl's selection flags as given. `namespace` is the -n value or None;
    which namespace that means when None depends on the source (see scope)."""

    namespace: str | None = None
    all_namespaces: bool = False
    label_text: str | None = None
    field_text: str | None = None

    @property
    def labels(self) -> Selector | None:
        return None if self.label_text is None else parse_selector(self.label_text)

    @property
    def fields(self) -> tuple[FieldRequirement, ...]:
        return () if self.field_text is None else parse_field_selector(self.field_text)

    @property
    def filters(self) -> bool:
        """Whether a selector narrows the pods (and so names pods to schedule)."""
        return self.label_text is not None or self.field_text is not None

    @property
    def given(self) -> bool:
        return self.filters or self.all_namespaces or self.namespace is not None

    def scope(self, default_namespace: str | None) -> str | None:
        """The namespace pods are taken from, None for all: -A, else -n, else
        the source's default (a context's namespace; None for a snapshot)."""
        if self.all_namespaces:
            return None
        return self.namespace if self.namespace is not None else default_namespace

    def matcher(self, default_namespace: str | None):
        """A predicate on pod objects: in scope and matching both selectors."""
        namespace = self.scope(default_namespace)
        labels = self.labels
        fields = self.fields

        def matches(pod: dict) -> bool:
            meta = pod["metadata"]
            if namespace is not None and (meta.get("namespace") or "default") != namespace:
                return False
            if labels is not None and not labels.matches(meta.get("labels") or {}):
                return False
            return all(f.matches(pod) for f in fields)

        return matches

    def describe(self, default_namespace: str | None) -> str:
        """How the selection reads in a message: `in namespace shop matching -l app=web`."""
        namespace = self.scope(default_namespace)
        parts = [f"in namespace {namespace}" if namespace is not None else "in all namespaces"]
        if self.label_text is not None:
            parts.append(f"matching -l {self.label_text!r}")
        if self.field_text is not None:
            parts.append(f"matching --field-selector {self.field_text!r}")
        return " ".join(parts)


__all__ = ["PodSelection", "FieldSelectorError", "SelectorError", "parse_field_selector", "POD_FIELDS"]
