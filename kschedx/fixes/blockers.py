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
        # Node dicts share equal `filters` lists and statuses (result/node_dicts.py):
        # each distinct one is read once, and nodes share what it gives (read only).
        seen: dict[tuple, tuple] = {}
        self._sets: list[tuple[str, frozenset]] = []
        self._only: dict[frozenset, list[str]] = {}
        for node in pod_doc.get("nodes") or ():
            filters, status = node.get("filters"), node.get("status")
            key = (id(filters), id(status), bool(node.get("feasible")), node.get("firstFailure"))
            hit = seen.get(key)
            if hit is None:
                hit = seen[key] = self._read(node) + (filters, status)
            failing, details = hit[0], hit[1]
            if (status or {}).get("code") == "Unschedulable":
                self.resolvable.append(node["name"])
            self.by_node[node["name"]] = failing
            self.details[node["name"]] = details
            self._sets.append((node["name"], hit[2]))

    @staticmethod
    def _read(node: dict) -> tuple:
        failing: dict[str, list[str]] = {}
        details: dict[str, object] = {}
        for f in node.get("filters") or ():
            code = f["code"]
            if code != "Success" and code != "Skip":
                failing[f["plugin"]] = f.get("reasons") or []  # read only: shared with the document
            d = f.get("details")
            if d is not None:
                details[f["plugin"]] = d
        if not node.get("feasible"):
            st = node.get("status") or {}
            if st.get("plugin"):
                failing.setdefault(st["plugin"], list(st.get("reasons") or ()))
            elif node.get("firstFailure"):
                for plugin in node["firstFailure"].split(", "):
                    failing.setdefault(plugin, list(st.get("reasons") or ()))
        return failing, details, frozenset(failing)

    @classmethod
    def from_result(cls, result) -> "Blockers":
        """The blockers of a cycle's PodResult (a candidate's failed check)."""
        from ..result.document import pod_dict

        return cls(pod_dict(result, "explain"))

    def only(self, *plugins: str) -> list[str]:
        """Nodes kept off by these plugins and no other (in node order)."""
        allowed = frozenset(plugins)
        hit = self._only.get(allowed)
        if hit is None:
            ok = {s: bool(s) and s <= allowed for _, s in set(self._sets)} if len(self._sets) < 64 else {}
            if not ok:
                for _, s in self._sets:
                    if s not in ok:
                        ok[s] = bool(s) and s <= allowed
            hit = self._only[allowed] = [name for name, s in self._sets if ok[s]]
        return list(hit)

    def failing_anywhere(self) -> frozenset:
        """Every plugin that keeps the pod off some node."""
        return frozenset().union(*self.groups())

    def groups(self) -> dict[frozenset, list[str]]:
        """Nodes by the set of plugins failing there (in node order)."""
        out = self.__dict__.get("_groups")
        if out is None:
            out = self.__dict__["_groups"] = {}
            for name, s in self._sets:
                out.setdefault(s, []).append(name)
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
