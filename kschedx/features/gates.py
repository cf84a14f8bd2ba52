"""`--feature-gates` as kube-scheduler reads it, checked against a version's
gate table with upstream's texts.

The flag's syntax (component-base cli/flag ColonSeparatedMultimapStringString,
compatibility registry, featuregate.Set): values separated by commas, each
`Name=bool` with an optional `kube:` component prefix; the flag may be given
several times. The map is then checked as unsafeSetFromMap checks it: an
unknown gate stops at once (`unrecognized feature gate: X`), a gate locked
to its default cannot be changed, AllAlpha / AllBeta set every Alpha / Beta
gate not set explicitly, and at last every enabled gate's dependencies must
be enabled. Upstream walks a Go map (random order); kschedx takes the gates
in the order given and reports dependency errors sorted by gate name, so
that one input always gives one text.
"""

from __future__ import annotations

import json

# Go's strconv.ParseBool.
_TRUE = frozenset(("1", "t", "T", "TRUE", "true", "True"))
_FALSE = frozenset(("0", "f", "F", "FALSE", "false", "False"))

ALL_ALPHA = "AllAlpha"
ALL_BETA = "AllBeta"
KUBE_COMPONENT = "kube"


class FeatureGateError(ValueError):
    """--feature-gates that kube-scheduler refuses; the message is upstream's."""


def aggregate(errors: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one error as it is, several
    deduplicated between brackets."""
    seen = list(dict.fromkeys(errors))
    return seen[0] if len(seen) == 1 else "[" + ", ".join(seen) + "]"


def _go_quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def parse_flag_values(values) -> dict[str, bool]:
    """The `--feature-gates` values (each as typed, the flag repeatable) as
    kube-scheduler reads them: {gate: value}, in the order first given, a
    later value of a gate replacing an earlier one. FeatureGateError with
    upstream's text for what the syntax refuses."""
    by_component: dict[str, list[str]] = {}
    for value in values:
        for pair in value.split(","):
            if not pair:
                continue
            component, colon, rest = pair.partition(":")
            key, v = (component.strip(), rest.strip()) if colon else ("", pair.strip())
            by_component.setdefault(key, []).append(v)
    if "" in by_component and KUBE_COMPONENT in by_component:
        raise FeatureGateError("set kube feature gates with default empty prefix or kube: prefix consistently, "
                               "do not mix use")
    for component in by_component:
        if component not in ("", KUBE_COMPONENT):
            raise FeatureGateError(f"component not registered: {component}")
    settings: dict[str, bool] = {}
    for entries in by_component.values():
        for piece in ",".join(entries).split(","):
            if not piece:
                continue
            name, eq, raw = piece.partition("=")
            name = name.strip()
            if not eq:
                raise FeatureGateError(f"missing bool value for {name}")
            raw = raw.strip()
            if raw in _TRUE:
                settings[name] = True
            elif raw in _FALSE:
                settings[name] = False
            else:
                raise FeatureGateError(f"invalid value of {name}={raw}, err: strconv.ParseBool: parsing "
                                       f"{_go_quote(raw)}: invalid syntax")
    return settings


def resolve(gates: dict, dependencies: dict, settings: dict[str, bool],
            version: str) -> tuple[dict[str, bool], list[str]]:
    """Every gate's value at a version's table (`gates`: name -> (stage,
    default, lockToDefault, since)) once `settings` are applied, and the
    warnings kube-scheduler logs (setting a GA or deprecated gate).
    FeatureGateError with upstream's text when it refuses them."""
    errors: list[str] = []
    warnings: list[str] = []
    enabled: dict[str, bool] = {}
    for name, value in settings.items():
        spec = gates.get(name)
        if spec is None:
            errors.append(f"unrecognized feature gate: {name}")
            raise FeatureGateError(aggregate(errors))
        stage, default, locked, _since = spec
        if locked and default != value:
            errors.append(f"cannot set feature gate {name} to {_go_bool(value)}, feature is locked to "
                          f"{_go_bool(default)}")
            continue
        if name in (ALL_ALPHA, ALL_BETA):
            wanted = "Alpha" if name == ALL_ALPHA else "Beta"
            for other, other_spec in gates.items():
                if other in (ALL_ALPHA, ALL_BETA) or other_spec[0] != wanted or other in settings:
                    continue
                enabled[other] = value
            enabled[name] = value
            continue
        enabled[name] = value
        if stage in ("GA", "Deprecated"):
            kind = "GA" if stage == "GA" else "deprecated"
            warnings.append(f"--feature-gates: {name}={_go_bool(value)} sets a {kind} feature gate of kube-scheduler "
                            f"{version}; it will be removed in a future release")
    if errors:
        raise FeatureGateError(aggregate(errors))
    values = {name: enabled.get(name, spec[1]) for name, spec in gates.items()}
    for name in sorted(dependencies):
        if not values.get(name):
            continue
        off = [d for d in dependencies[name] if not values.get(d)]
        if off:
            errors.append(f"{name} is enabled, but depends on features that are disabled: [{' '.join(off)}]")
    if errors:
        raise FeatureGateError(aggregate(errors))
    return values, warnings


def _go_bool(value: bool) -> str:
    return "true" if value else "false"
