"""What keeps a pod off each node, read from its result: every Filter plugin
that failed there (kschedx evaluates all of them, not only the first one
kube-scheduler reports), a PreFilter rejection, or the PreFilterResult
leaving the node out. Fix candidates start from here: a change is worth a
cycle only for the nodes it could open."""

from __future__ import annotations

_PASSING = ("Success", "Skip")


class Blockers:
    def __init__(self, pod_doc: dict):
        self.by_node: dict[str, dict[str, list[str]]] = {}
        self.details: dict[str, dict[str, object]] = {}
        # Nodes whose recorded status is Unschedulable (not Unresolvable):
        # the only ones preemption considers.
        self.resolvable: list[str] = []
        for node in pod_doc.get("nodes") or ():
            failing: dict[str, list[str]] = {}
            details: dict[str, object] = {}
            for f in node.get("filters") or ():
                if f.get("code") not in _PASSING:
                    failing[f["plugin"]] = list(f.get("reasons") or ())
                if f.get("details") is not None:
                    details[f["plugin"]] = f["details"]
            if not node.get("feasible"):
                st = node.get("status") or {}
                if st.get("plugin"):
                    failing.setdefault(st["plugin"], list(st.get("reasons") or ()))
                elif node.get("firstFailure"):
                    for plugin in node["firstFailure"].split(", "):
                        failing.setdefault(plugin, list(st.get("reasons") or ()))
            if (node.get("status") or {}).get("code") == "Unschedulable":
                self.resolvable.append(node["name"])
            self.by_node[node["name"]] = failing
            self.details[node["name"]] = details

    def only(self, *plugins: str) -> list[str]:
        """Nodes kept off by these plugins and no other (in node order)."""
        allowed = set(plugins)
        return [name for name, failing in self.by_node.items() if failing and failing.keys() <= allowed]

    def reasons(self, node: str, plugin: str) -> list[str]:
        return self.by_node.get(node, {}).get(plugin, [])

    def detail(self, node: str, plugin: str):
        return self.details.get(node, {}).get(plugin)
