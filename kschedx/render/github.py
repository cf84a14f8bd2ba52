"""-o github: GitHub Actions workflow commands, one `::error` annotation per
pod that fails the exit code, on the POD_FILE line of the pod's
metadata.name when it was read from a file. Passing pods print nothing;
a last plain line sums up."""

from __future__ import annotations

from .ci import failure_message, pod_fails, scheduler_text, summary


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


def to_github(doc: dict) -> str:
    lines = [annotation(p) for p in doc["pods"] if pod_fails(p)]
    scheduler = scheduler_text(doc)
    lines.append(f"kschedx {doc.get('mode', 'explain')}{f' ({scheduler})' if scheduler else ''}: {summary(doc)}")
    return "\n".join(lines) + "\n"
