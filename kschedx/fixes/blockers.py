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
        # A PreFilter plugin that rejected the pod (no Filter ran then):
        # plugin -> {"reasons", "details"}.
        self.pre_filter: dict[str, dict] = {}
        for st in pod_doc.get("preFilter") or ():
            if st.get("code") not in _PASSING:
                self.pre_filter[st["plugin"]] = {"reasons": list(st.get("reasons") or ()),
                                                 "details": st.get("details")}
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

    @classmethod
    def from_result(cls, result) -> "Blockers":
        """The blockers of a cycle's PodResult (a candidate's failed check)."""
        from ..result.document import pod_dict

        return cls(pod_dict(result, "explain"))

    def only(self, *plugins: str) -> list[str]:
        """Nodes kept off by these plugins and no other (in node order)."""
        allowed = set(plugins)
        return [name for name, failing in self.by_node.items() if failing and failing.keys() <= allowed]

    def failing_anywhere(self) -> set[str]:
        """Every plugin that keeps the pod off some node."""
        out: set[str] = set()
        for failing in self.by_node.values():
            out.update(failing)
        return out

    def filter_failures(self) -> bool:
        """Whether some node failed a Filter (not only a PreFilter rejection)."""
        return not self.pre_filter and any(self.by_node.values())

    def rejected_by(self, plugin: str) -> bool:
        """Whether `plugin`'s PreFilter rejected the pod (on every node)."""
        return plugin in self.pre_filter

    def reasons(self, node: str, plugin: str) -> list[str]:
        return self.by_node.get(node, {}).get(plugin, [])

    def detail(self, node: str, plugin: str):
        return self.details.get(node, {}).get(plugin)
