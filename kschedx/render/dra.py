"""Text lines for DynamicResources' explanation of one node (`--node`)."""

from __future__ import annotations


def dra_lines(details: dict, indent: str = "    ") -> list[str]:
    """Per claim and request: devices considered, the first reason each was
    rejected, and the allocation kube-scheduler would make."""
    lines: list[str] = []
    for c in details.get("allocatedClaims") or ():
        where = "available on this node" if c.get("availableOnNode") else "allocated for other nodes"
        if c.get("binding"):
            where = f"not usable: {c['binding']}"
        lines.append(f"{indent}claim {c['claim']}: already allocated, {where}")
    for c in details.get("claims") or ():
        lines.append(f"{indent}claim {c['claim']}")
        for con in c.get("constraints") or ():
            reqs = ", ".join(con["requests"]) or "all requests"
            if "distinctAttribute" in con:
                lines.append(f"{indent}  constraint: a different {con['distinctAttribute']} for each of {reqs}")
            else:
                lines.append(f"{indent}  constraint: same {con['matchAttribute']} for {reqs}")
        for r in c.get("requests") or ():
            want = f"{r['count']}" if r.get("allocationMode") == "ExactCount" else "all"
            lines.append(f"{indent}  request {r['request']}: {want} of class {r['deviceClass']}"
                         f"{' (admin access)' if r.get('adminAccess') else ''}, {r['eligible']} usable")
            for p in r.get("pools") or ():
                lines.append(f"{indent}    pool {p['pool']}: {p['reason']}")
            for d in r.get("candidates") or ():
                mark = "✓" if d.get("allocated") else ("·" if d["reason"] is None else "✗")
                text = "allocated" if d.get("allocated") else (d["reason"] or "usable")
                lines.append(f"{indent}    {mark} {d['device']}: {text}")
        alloc = c.get("allocation")
        if alloc:
            picked = ", ".join(f"{x['request']} → {x['driver']}/{x['pool']}/{x['device']}"
                               for x in alloc["devices"]["results"])
            lines.append(f"{indent}  allocation: {picked or 'nothing'}")
    return lines
