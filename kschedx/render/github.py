"""-o github: GitHub Actions workflow commands, one `::error` annotation per
pod (or workload explain judged as a whole) that fails the exit code, on
the POD_FILE line of its metadata.name when it was read from a file, then
one `::notice` per fix `explain --fix` verified for it. Passing cases print
nothing; a last plain line sums up."""

from __future__ import annotations

from .ci import Case, cases, failure_message, scheduler_text, summary


def _data(s: str) -> str:
    # As @actions/core escapes a command's message.
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(s: str) -> str:
    return _data(s).replace(":", "%3A").replace(",", "%2C")


def _where(source: dict | None) -> list[str]:
    props = []
    if source:
        props.append(f"file={_property(source['file'])}")
        if source.get("line"):
            props.append(f"line={source['line']}")
    return props


def annotation(pod: dict) -> str:
    props = _where(pod.get("source")) + [f"title={_property(pod['pod'] + ' is ' + pod['status'])}"]
    return f"::error {','.join(props)}::{_data(failure_message(pod))}"


def _annotation(case: Case) -> str:
    props = _where(case.source) + [f"title={_property(case.title)}"]
    return f"::error {','.join(props)}::{_data(case.message)}"


def _notices(case: Case) -> list[str]:
    """One `::notice` per fix `explain --fix` verified, where the case's annotation is."""
    props = _where(case.source)
    out = []
    for i, line in enumerate(case.fixes or (), 1):
        title = f"title={_property(case.name + ' fix ' + str(i))}"
        out.append(f"::notice {','.join(props + [title])}::{_data(line)}")
    return out


def to_github(doc: dict) -> str:
    from .whatif import checks

    lines = []
    for c in checks(doc):
        # A node is in no POD_FILE: the annotation names no file.
        title = f"title={_property(c['name'] + ('' if c['ok'] else ' is ' + c['kind']))}"
        lines.append(f"::{'notice' if c['ok'] else 'error'} {title}::{_data(c['message'])}")
    for case in cases(doc):
        if case.fails:
            lines.append(_annotation(case))
            lines += _notices(case)
            if case.pools:
                lines.append(f"::notice title={_property(case.name + ' node templates')}::{_data(case.pools)}")
    scheduler = scheduler_text(doc)
    lines.append(f"kschedx {doc.get('mode', 'explain')}{f' ({scheduler})' if scheduler else ''}: {summary(doc)}")
    return "\n".join(lines) + "\n"
