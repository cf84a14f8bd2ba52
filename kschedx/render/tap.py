"""-o tap: the Test Anything Protocol (version 13, which TAP 14 consumers
read too): one test point per pod, `not ok` for a pod that fails the exit
code, with the FailedScheduling message in a YAML diagnostic block."""

from __future__ import annotations

from .ci import failure_message, outcome, pod_fails, scheduler_text


def _description(s: str) -> str:
    # A bare # would start a directive (SKIP, TODO); a line break would end the point.
    return " ".join(s.replace("\\", "\\\\").replace("#", "\\#").split())


def _diagnostics(fields: dict) -> list[str]:
    import yaml

    body = yaml.safe_dump(fields, sort_keys=False, allow_unicode=True, width=1_000_000)
    return ["  ---", *("  " + line for line in body.splitlines()), "  ..."]


def to_tap(doc: dict) -> str:
    pods = doc["pods"]
    lines = ["TAP version 13", f"1..{len(pods)}"]
    scheduler = scheduler_text(doc)
    if scheduler:
        # A comment line (TAP consumers skip it): which scheduler the verdicts are.
        lines.append(f"# {_description(scheduler)}")
    for i, pod in enumerate(pods, 1):
        if pod_fails(pod):
            lines.append(f"not ok {i} - {_description(pod['pod'])}: {pod['status']}")
            fields = {"status": pod["status"], "message": failure_message(pod)}
            source = pod.get("source")
            if source:
                fields["file"] = source["file"]
                if source.get("line"):
                    fields["line"] = source["line"]
            lines.extend(_diagnostics(fields))
        else:
            lines.append(f"ok {i} - {_description(pod['pod'] + ': ' + outcome(pod))}")
    return "\n".join(lines) + "\n"
