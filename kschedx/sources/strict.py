"""--validate: the objects a user hands kschedx (POD_FILEs, --snapshot files
and directories, stdin) checked against the API of the run's Kubernetes
version (schema/), as `kubectl apply` and the API server check them, before
admission or any plugin sees them.

Modes, kubectl's `--validate`:

- strict (the default; kubectl's `true`): every problem is an input error;
- warn: unknown and duplicate fields (what the API server calls "strict
  decoding errors") are warnings, and the run goes on;
- ignore (`false`): those are not reported.

Whatever the mode, an object the API server could not decode (a value of
the wrong type) or kubectl could not send anywhere (an apiVersion and kind
the version does not serve) is an input error, as with kubectl.

Not checked: what a live API server served (it validated it), and the files
`kschedx snapshot` wrote, told by their first object, kschedx's SnapshotInfo
(sources/fixtures.py FileObjects.own): their objects were served too, and a
150,000-pod snapshot loads as fast as without validation. The SnapshotInfo
itself is kschedx's kind, checked where it is read (state/cluster.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..util.errors import InvalidObjects
from .admission import NAMESPACED_KINDS, object_ref
from .fixtures import is_snapshot_info

MODES = ("strict", "warn", "ignore")
# kubectl's older spellings, which it still accepts
ALIASES = {"true": "strict", "false": "ignore"}

# Errors beyond these are counted in one last line: a dump of a big cluster
# with one systematic problem must not print it 150,000 times.
MAX_ERROR_LINES = 20
# Warnings: objects named per problem
_NAMED = 3


def parse_mode(text: str) -> str:
    mode = ALIASES.get(text.lower(), text.lower())
    if mode not in MODES:
        raise ValueError(f"{text!r}: must be one of strict (or true), warn, ignore (or false)")
    return mode


@dataclass(frozen=True)
class Validation:
    """How a run checks its input: the mode, and --kube-version (None:
    the version the run reproduces is the server's, else the newest)."""

    mode: str = "strict"
    kube_version: str | None = None

    @property
    def notes_duplicates(self) -> bool:
        """Whether duplicate keys are looked for while parsing (they can only be strict problems)."""
        return self.mode != "ignore"

    def version(self, server_git_version: str | None) -> str:
        from ..features.versions import run_version

        return run_version(self.kube_version, server_git_version)[0]


def check(items, version: str, mode: str) -> list[str]:
    """Validate (object, origin, duplicates) triples against `version`
    ("1.36"). Returns the warnings (mode warn); raises InvalidObjects naming
    each problem: the file, the object, the field, the API server's text
    and kschedx's hint."""
    from .schema import validate

    errors: list[str] = []
    objects_in_error = 0
    warned: dict[tuple[str, str], list[str]] = {}
    for obj, origin, duplicates in items:
        if is_snapshot_info(obj):
            continue
        problems = validate(obj, version, duplicates=duplicates)
        if not problems:
            continue
        failed = False
        for problem in problems:
            if problem.strict and mode != "strict":
                if mode == "warn":
                    where = getattr(origin, "path", str(origin))
                    warned.setdefault((where, _text(problem)), []).append((str(origin), _ref(obj)))
                continue
            failed = True
            errors.append(f"{origin}: {_ref(obj)}: {_text(problem)}")
        objects_in_error += failed
    if errors:
        if len(errors) > MAX_ERROR_LINES:
            more = len(errors) - MAX_ERROR_LINES
            errors[MAX_ERROR_LINES:] = [f"{more:,} more problem{'s' if more > 1 else ''} "
                                        f"({len(errors):,} in {objects_in_error:,} objects, checked against "
                                        f"the API of Kubernetes {version})"]
        raise InvalidObjects(errors)
    return [_warning(where, text, refs) for (where, text), refs in warned.items()]


def _ref(obj: dict) -> str:
    """The object as admission's errors name it: a namespaced object
    without a namespace is in "default" (where kubectl apply puts it)."""
    meta = obj.get("metadata")
    if obj.get("kind") in NAMESPACED_KINDS and isinstance(meta, dict) and not meta.get("namespace"):
        return object_ref(dict(obj, metadata=dict(meta, namespace="default")))
    return object_ref(obj)


def _text(problem) -> str:
    """The problem with its field named, unless the API server's text names
    it already; a YAML scalar read as a bool or a number where the API wants
    text gets kschedx's hint."""
    text = str(problem)
    if not problem.hint and problem.message.endswith(" of type string") and (
            "cannot unmarshal bool " in problem.message or "cannot unmarshal number " in problem.message):
        text += " (quote it in YAML)"
    if f'"{problem.field}"' in problem.message:
        return text
    return f"field {problem.field}: {text}"


def _warning(path: str, text: str, found: list[tuple[str, str]]) -> str:
    """One warning per problem text and file, however many objects have it."""
    if len(found) == 1:
        origin, ref = found[0]
        return f"{origin}: {ref}: {text}"
    refs = [ref for _, ref in found]
    named = ", ".join(refs[:_NAMED]) + (f" and {len(refs) - _NAMED:,} more" if len(refs) > _NAMED else "")
    return f"{path}: {text}, in {len(refs):,} objects ({named})"
