"""apiVersion and kind: which built-in type an object is, as kubectl's REST
mapping finds it, or which custom resource it may be.

The rule (the same for every version):

- a group/version/kind the release serves (alpha and beta versions
  included, which a cluster may enable) is validated against its schema;
- no apiVersion at all: the kind in the core group, at its preferred
  version, as kubectl maps it;
- a group without a dot, or a group the release serves, can hold no custom
  resource (a CustomResourceDefinition's group must contain a dot): anything
  else there is `no matches for kind ...`, with the versions that do serve the
  kind, or the built-in kinds it is a near miss of;
- any other group may be a custom resource's (a `kubectl get -o yaml` dump
  holds them): it is not validated, and scheduling ignores it, unless
  its kind is a slip of a built-in kind's name (only the letter case
  differs, or two adjacent letters are swapped: `deployment`, `Pdo`), or
  its group is a built-in group's name under Kubernetes' own domain and
  its kind one that group serves (`apps.k8s.io/v1` Deployment,
  `policy.k8s.io/v1` PodDisruptionBudget, `rbac.k8s.io/v1` Role): those
  are errors. Real projects under that domain keep their own names
  (`scheduling.sigs.k8s.io` PodGroup, `gateway.networking.k8s.io`,
  `topology.node.k8s.io`) and stay custom resources.
"""

from __future__ import annotations

import json

from .model import Kind, Schema, version_priority
from .problem import BAD_API_VERSION, MISSING_KIND, NO_KIND_MATCH, WRONG_TYPE, Problem

_RESERVED = (".k8s.io", ".kubernetes.io")


def split_api_version(api_version: str) -> tuple[str, str] | None:
    """schema.ParseGroupVersion: (group, version), or None when it has more than one slash."""
    if api_version in ("", "/"):
        return "", ""
    slashes = api_version.count("/")
    if slashes == 0:
        return "", api_version
    if slashes == 1:
        group, _, version = api_version.partition("/")
        return group, version
    return None


def resolve(obj: dict, schema: Schema) -> tuple[Kind | None, Problem | None]:
    """(the built-in kind, None), (None, None) for a custom resource, or (None, the problem)."""
    kind = obj.get("kind")
    if not isinstance(kind, str) or not kind:
        return None, Problem("kind", f"Object 'Kind' is missing in '{_json(obj)}'", MISSING_KIND)
    api_version = obj.get("apiVersion")
    if api_version is None:
        api_version = ""
    if not isinstance(api_version, str):
        return None, Problem("apiVersion", "couldn't get version/kind; json parse error: json: cannot unmarshal "
                             f"{describe(api_version)} into Go struct field .apiVersion of type string", WRONG_TYPE)
    parsed = split_api_version(api_version)
    if parsed is None:
        return None, Problem("apiVersion", f"unexpected GroupVersion string: {api_version}", BAD_API_VERSION)
    group, version = parsed
    found = schema.kind(group, version, kind)
    if found is not None:
        return found, None
    if not version:
        # kubectl maps a kind without a version to its group's preferred version
        for k in schema.by_kind.get(kind, ()):
            if k.group == group:
                return k, None
        message = f'no matches for kind "{kind}" in group "{group}"'
    else:
        if is_custom_group(group, kind, schema):
            return None, None
        message = f'no matches for kind "{kind}" in version "{api_version}"'
    return None, _no_match(message, group, kind, schema)


def is_custom_group(group: str, kind: str, schema: Schema) -> bool:
    """Whether group/kind may name a custom resource (see the module's rule)."""
    if group in schema.groups or "." not in group:
        return False
    label, _, domain = group.partition(".")
    if "." + domain in _RESERVED and any(k.group.partition(".")[0] == label for k in schema.by_kind.get(kind, ())):
        return False  # apps.k8s.io/v1 Deployment: Kubernetes' own group, misnamed
    from . import suggest

    return not any(suggest.is_typo_of(kind, k) for k in schema.by_kind)


def _no_match(message: str, group: str, kind: str, schema: Schema) -> Problem:
    from . import suggest

    served = schema.by_kind.get(kind)
    if served:
        return Problem("apiVersion", message, NO_KIND_MATCH, hint=serves(schema, kind))
    near = suggest.near(kind, schema.by_kind)
    if not near and len(kind) > 4 and kind[-4:].lower() == "list":
        # a list of a kind (`nodelist`): its items are read when it is spelled `NodeList`
        stem = kind[:-4]
        stems = [k for k in schema.by_kind if k.lower() == stem.lower()] or suggest.near(stem, schema.by_kind)
        if stems:
            lists = [k + "List" for k in stems]
            return Problem("kind", message, NO_KIND_MATCH,
                           hint="a list holds its objects in items" if kind in lists
                           else f"did you mean {suggest.one_of(lists)}?")
    if near:
        in_group = [k for k in near if any(x.group == group for x in schema.by_kind[k])]
        names = [k if k in in_group else f"{k} ({schema.by_kind[k][0].api_version})" for k in (in_group or near)]
        return Problem("kind", message, NO_KIND_MATCH, hint=f"did you mean {suggest.one_of(names)}?")
    return Problem("kind", message, NO_KIND_MATCH, hint="ensure CRDs are installed first")


def serves(schema: Schema, kind: str) -> str:
    """`Kubernetes 1.36 serves Deployment as apps/v1`; versions a cluster
    serves only when enabled (alpha, beta) are said to be so."""
    from . import suggest

    kinds = sorted(schema.by_kind[kind], key=lambda k: (version_priority(k.version), k.group))
    names = [k.api_version if version_priority(k.version)[0] == 0 else f"{k.api_version} (when enabled)"
             for k in kinds]
    return f"Kubernetes {schema.minor} serves {kind} as {suggest.one_of(names)}"


def describe(value) -> str:
    """What encoding/json calls a JSON value in its messages."""
    if value.__class__ is bool:
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return "string"


def _json(obj) -> str:
    try:
        return json.dumps(obj, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return str(obj)
