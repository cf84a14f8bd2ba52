"""--nodes all|failing|top=N|NAME,...: which nodes a pod's `nodes` list keeps.

On thousands of nodes a pod's per-node records are most of the document;
a CI job usually wants only the nodes that failed, or the few best ones.
The choice changes nothing else: every pod-level field (status, message,
filterSummary, nodeCounts ...) is computed from every node. The kept nodes
stay in node order, so the list is always a part of the `--nodes all` one.

- all: every node (the default).
- failing: the nodes that are not feasible (`feasible: false`: a Filter
  plugin rejects them, or PreFilter left them out), and the selected node.
- top=N: the N best-scored feasible nodes (highest totalScore, then name);
  the selected node is always one of them (a random tie-break may have
  chosen one past the N-th, it then takes the N-th place).
- NAME,NAME,...: exactly those nodes (a value with a comma is a list: a node
  literally named `all` or `failing` is `all,`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

ALL = "all"
FAILING = "failing"
TOP = "top"


@dataclass(frozen=True)
class NodeChoice:
    kind: str = ALL  # all | failing | top | names
    top: int = 0
    names: tuple[str, ...] = ()
    also: frozenset = field(default_factory=frozenset)  # kept whatever the choice (--node NAME)

    @property
    def is_all(self) -> bool:
        return self.kind == ALL

    @property
    def text(self) -> str:
        """The choice as --nodes spells it (the document's `nodeDetail`)."""
        if self.kind == TOP:
            return f"top={self.top}"
        if self.kind == "names":
            text = ",".join(self.names)
            return text + "," if text in (ALL, FAILING) or text.startswith(TOP + "=") else text
        return self.kind

    def keeping(self, name: str | None) -> "NodeChoice":
        """The same choice, also keeping node `name` (None: unchanged)."""
        if name is None or self.is_all:
            return self
        return NodeChoice(self.kind, self.top, self.names, self.also | {name})

    def pick(self, outline, selected: str | None) -> set[str] | None:
        """The names of the nodes to keep, from `outline`: (name, feasible,
        totalScore or None) of every node. None means every node."""
        if self.kind == ALL:
            return None
        keep = set(self.also)
        if self.kind == "names":
            keep.update(self.names)
        elif self.kind == FAILING:
            keep.update(name for name, feasible, _ in outline if not feasible)
            if selected:
                keep.add(selected)
        else:
            # Feasible nodes without a score (scoring failed) rank last.
            ranked = sorted((-total if total is not None else 1, name) for name, feasible, total in outline
                            if feasible)
            best = [name for _, name in ranked[:self.top]]
            if selected and selected not in best:
                best = best[:self.top - 1] + [selected]
            keep.update(best)
        return keep


EVERY_NODE = NodeChoice()


class NodeChoiceError(ValueError):
    """A --nodes value that is not a choice."""


def parse_node_choice(value: str | None) -> NodeChoice:
    """all | failing | top=N (N >= 1) | NAME[,NAME...]"""
    if value is None:
        return EVERY_NODE
    text = value.strip()
    if text in (ALL, FAILING):
        return NodeChoice(text)
    if "," in text:
        names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
        if not names:
            raise NodeChoiceError(f"{value!r} names no node")
        return NodeChoice("names", names=names)
    if text.startswith(TOP + "="):
        n = text[len(TOP) + 1:]
        if not n.isdigit() or int(n) < 1:
            raise NodeChoiceError(f"{value!r}: top=N takes a whole number N of at least 1")
        return NodeChoice(TOP, top=int(n))
    if not text:
        raise NodeChoiceError("an empty value: all, failing, top=N or node names separated by commas")
    return NodeChoice("names", names=(text,))


def unknown_names(choice: NodeChoice, node_names) -> list[tuple[str, list[str]]]:
    """Named nodes the cluster does not have, each with close names."""
    import difflib

    known = set(node_names)
    missing = [n for n in choice.names if n not in known]
    if not missing:
        return []
    ordered = list(node_names)
    return [(n, difflib.get_close_matches(n, ordered, n=3)) for n in missing]
