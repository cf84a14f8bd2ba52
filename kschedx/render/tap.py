"""-o tap: the Test Anything Protocol (version 13, which TAP 14 consumers
read too): one test point per pod (and per workload explain judged as a
whole), `not ok` for one that fails the exit code, with the FailedScheduling message in a YAML diagnostic block (and,
with --fix, `fixes`: one line per verified fix)."""

from __future__ import annotations

from .ci import cases, scheduler_text


def _description(s: str) -> str:
    # A bare # would start a directive (SKIP, TODO); a line break would end the point.
    return " ".join(s.replace("\\", "\\\\").replace("#", "\\#").split())


def _diagnostics(fields: dict) -> list[str]:
    import yaml

    body = yaml.safe_dump(fields, sort_keys=False, allow_unicode=True, width=1_000_000)
    return ["  ---", *("  " + line for line in body.splitlines()), "  ..."]


def to_tap(doc: dict) -> str:
    from .whatif import checks

    all_cases = cases(doc)
    changes = checks(doc)
    lines = ["TAP version 13", f"1..{len(all_cases) + len(changes)}"]
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
    for i, case in enumerate(all_cases, len(changes) + 1):
        if case.fails:
            lines.append(f"not ok {i} - {_description(case.name)}: "
                         f"{_description(case.status_words if case.workload else case.status)}")
            fields = {"status": case.status, "message": case.message}
            if case.fixes is not None:
                fields["fixes"] = case.fixes
            if case.pools:
                fields["templates"] = case.pools
            if case.source:
                fields["file"] = case.source["file"]
                if case.source.get("line"):
                    fields["line"] = case.source["line"]
            lines.extend(_diagnostics(fields))
        else:
            lines.append(f"ok {i} - {_description(case.name + ': ' + case.text)}")
    return "\n".join(lines) + "\n"
