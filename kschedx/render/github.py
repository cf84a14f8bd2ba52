"""-o github: GitHub Actions workflow commands, one `::error` annotation per
pod that fails the exit code, on the POD_FILE line of the pod's
metadata.name when it was read from a file, then one `::notice` per fix
`explain --fix` verified for it. Passing pods print nothing; a last plain
line sums up."""

from __future__ import annotations

from .ci import failure_message, pod_fails, scheduler_text, summary
from .fixes import fix_lines


def _data(s: str) -> str:
    # As @actions/core escapes a command's message.
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(s: str) -> str:
    return _data(s).replace(":", "%3A").replace(",", "%2C")


def annotation(pod: dict) -> str:
    props = []
    source = pod.get("source")
    if source:
        props.append(f"file={_property(source['file'])}")
        if source.get("line"):
            props.append(f"line={source['line']}")
    props.append(f"title={_property(pod['pod'] + ' is ' + pod['status'])}")
    return f"::error {','.join(props)}::{_data(failure_message(pod))}"


def fix_notices(pod: dict) -> list[str]:
    """One `::notice` per verified fix (explain --fix), where the pod's
    annotation is."""
    props = []
    source = pod.get("source")
    if source:
        props.append(f"file={_property(source['file'])}")
        if source.get("line"):
            props.append(f"line={source['line']}")
    out = []
    for i, line in enumerate(fix_lines(pod), 1):
        title = f"title={_property(pod['pod'] + ' fix ' + str(i))}"
        out.append(f"::notice {','.join(props + [title])}::{_data(line)}")
    return out


def to_github(doc: dict) -> str:
    from .whatif import checks, templates_summary

    lines = []
    for c in checks(doc):
        # A node is in no POD_FILE: the annotation names no file.
        title = f"title={_property(c['name'] + ('' if c['ok'] else ' is ' + c['kind']))}"
        lines.append(f"::{'notice' if c['ok'] else 'error'} {title}::{_data(c['message'])}")
    for p in doc["pods"]:
        if pod_fails(p):
            lines.append(annotation(p))
            lines += fix_notices(p)
            pools = templates_summary(p)
            if pools:
                lines.append(f"::notice title={_property(p['pod'] + ' node templates')}::{_data(pools)}")
    scheduler = scheduler_text(doc)
    lines.append(f"kschedx {doc.get('mode', 'explain')}{f' ({scheduler})' if scheduler else ''}: {summary(doc)}")
    return "\n".join(lines) + "\n"
