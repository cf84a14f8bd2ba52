"""-o junit: one JUnit test case per pod (and per workload explain judged
as a whole), for the test reporters of GitLab, Jenkins and GitHub. A case
that fails the exit code (Unschedulable, Gated, Error; a workload with a
replica not placed) is a <failure> whose message is the exact
FailedScheduling text; with --fix its text adds one line per verified fix.

No timestamps, host names or durations: the same input gives the same file.
"""

from __future__ import annotations

import re

from .ci import cases

# Characters XML 1.0 cannot carry at all, even escaped.
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(s: str) -> str:
    return _NOT_XML.sub("\ufffd", s)


def to_junit(doc: dict) -> str:
    import xml.etree.ElementTree as ET

    from .whatif import checks

    mode = doc.get("mode", "explain")
    all_cases = cases(doc)
    changes = checks(doc)
    failures = sum(1 for c in all_cases if c.fails) + sum(1 for c in changes if not c["ok"])
    counts = {"tests": str(len(all_cases) + len(changes)), "failures": str(failures), "errors": "0"}
    root = ET.Element("testsuites", {"name": "kschedx", **counts})
    suite = ET.SubElement(root, "testsuite", {"name": f"kschedx {mode}", **counts, "skipped": "0"})
    props = ET.SubElement(suite, "properties")
    for name, value in (("profile", doc.get("profile")), ("tieBreak", doc.get("tieBreak")),
                        ("kubernetes", (doc.get("reference") or {}).get("kubernetes")),
                        ("kubeVersion", doc.get("kubeVersion")),
                        ("featureGates", ",".join(f"{k}={'true' if v else 'false'}"
                                                  for k, v in (doc.get("featureGates") or {}).items())),
                        ("notEvaluated", ", ".join(doc.get("notEvaluated") or ()))):
        if value:
            ET.SubElement(props, "property", {"name": name, "value": _text(str(value))})
    for c in changes:
        # What the cluster change does comes before the pods it moves.
        case = ET.SubElement(suite, "testcase", {"name": _text(c["name"]), "classname": f"kschedx.{mode}.whatif"})
        body = _text("\n".join([c["message"], *c["lines"]]))
        if c["ok"]:
            ET.SubElement(case, "system-out").text = body
        else:
            ET.SubElement(case, "failure", {"type": c["kind"], "message": _text(c["message"])}).text = body
    for c in all_cases:
        case = ET.SubElement(suite, "testcase", {"name": _text(c.name), "classname": f"kschedx.{mode}"})
        where = ""
        if c.source:
            where = f"\n{c.source['file']}" + (f":{c.source['line']}" if c.source.get("line") else "")
        if c.fails:
            message = _text(c.message)
            failure = ET.SubElement(case, "failure", {"type": c.status, "message": message})
            fixes = "".join(f"\nfix {i}: {line}" for i, line in enumerate(c.fixes or (), 1))
            failure.text = message + _text(where) + _text(fixes) + _text(f"\n{c.pools}" if c.pools else "")
        else:
            ET.SubElement(case, "system-out").text = _text(c.text + where)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
