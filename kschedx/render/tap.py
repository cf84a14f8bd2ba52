"""-o tap: the Test Anything Protocol (version 13, which TAP 14 consumers
read too): one test point per pod, `not ok` for a pod that fails the exit
code, with the FailedScheduling message in a YAML diagnostic block (and,
with --fix, `fixes`: one line per verified fix)."""

from __future__ import annotations

from .ci import failure_message, outcome, pod_fails, scheduler_text
from .fixes import fix_lines


def _description(s: str) -> str:
    # A bare # would start a directive (SKIP, TODO); a line break would end the point.
    return " ".join(s.replace("\\", "\\\\").replace("#", "\\#").split())


def _diagnostics(fields: dict) -> list[str]:
    import yaml

    body = yaml.safe_dump(fields, sort_keys=False, allow_unicode=True, width=1_000_000)
    return ["  ---", *("  " + line for line in body.splitlines()), "  ..."]


def to_tap(doc: dict) -> str:
    from .whatif import checks, templates_summary

    pods = doc["pods"]
    changes = checks(doc)
    lines = ["TAP version 13", f"1..{len(pods) + len(changes)}"]
    scheduler = scheduler_text(doc)
    if scheduler:
        # A comment line (TAP consumers skip it): which scheduler the verdicts are.
        lines.append(f"# {_description(scheduler)}")
    for i, c in enumerate(changes, 1):
        if c["ok"]:
            lines.append(f"ok {i} - {_description(c['name'] + ': ' + c['message'])}")
        else:
            lines.append(f"not ok {i} - {_description(c['name'])}: {c['kind']}")
            lines.extend(_diagnostics({"answer": c["message"], **({"lines": c["lines"]} if c["lines"] else {})}))
    for i, pod in enumerate(pods, len(changes) + 1):
        if pod_fails(pod):
            lines.append(f"not ok {i} - {_description(pod['pod'])}: {pod['status']}")
            fields = {"status": pod["status"], "message": failure_message(pod)}
            if "fixes" in pod:
                fields["fixes"] = fix_lines(pod)
            if pod.get("templates"):
                fields["templates"] = templates_summary(pod)
            source = pod.get("source")
            if source:
                fields["file"] = source["file"]
                if source.get("line"):
                    fields["line"] = source["line"]
            lines.extend(_diagnostics(fields))
        else:
            lines.append(f"ok {i} - {_description(pod['pod'] + ': ' + outcome(pod))}")
    return "\n".join(lines) + "\n"
