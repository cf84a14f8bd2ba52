"""The order in which kube-scheduler lists nodes: its cache's node tree.

Nodes are grouped by zone (region and zone labels), zones kept in the order
their first node was added, nodes in a zone in the order they were added;
the list takes one node from each zone in turn. kube-scheduler's node
sampling walks the nodes in this order, so it decides which nodes a sampled
search looks at. For a fixture, nodes are added in the order they are read.
"""

from __future__ import annotations

LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
LABEL_TOPOLOGY_REGION = "topology.kubernetes.io/region"
LABEL_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_BETA_REGION = "failure-domain.beta.kubernetes.io/region"


def zone_key(labels: dict | None) -> str:
    """GetZoneKey (component-helpers): the deprecated beta labels win when
    present, even empty; no region and no zone is the empty key. The NUL
    keeps "a:b" + "c" apart from "a" + "b:c"."""
    if not labels:
        return ""
    zone = labels[LABEL_BETA_ZONE] if LABEL_BETA_ZONE in labels else labels.get(LABEL_TOPOLOGY_ZONE, "")
    region = labels[LABEL_BETA_REGION] if LABEL_BETA_REGION in labels else labels.get(LABEL_TOPOLOGY_REGION, "")
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


class NodeTree:
    """The cache's nodeTree: zone key -> node names, zones in insertion order."""

    def __init__(self, nodes=()):
        self.tree: dict[str, list[str]] = {}
        self.zones: list[str] = []
        self.num_nodes = 0
        self._members: dict[str, set] = {}  # zone -> its names, for the duplicate check
        for name, labels in nodes:
            self.add_node(name, labels)

    def add_node(self, name: str, labels: dict | None) -> None:
        zone = zone_key(labels)
        names = self.tree.get(zone)
        if names is None:
            self.zones.append(zone)
            self.tree[zone] = [name]
            self._members[zone] = {name}
        elif name in self._members[zone]:
            return  # already in its zone: kube-scheduler logs it and adds nothing
        else:
            names.append(name)
            self._members[zone].add(name)
        self.num_nodes += 1

    def remove_node(self, name: str, labels: dict | None) -> bool:
        """False when the node is not in its zone (kube-scheduler's error)."""
        zone = zone_key(labels)
        names = self.tree.get(zone)
        if names is None or name not in self._members[zone]:
            return False
        names.remove(name)
        self._members[zone].discard(name)
        if not names:
            del self.tree[zone]
            del self._members[zone]
            self.zones.remove(zone)
        self.num_nodes -= 1
        return True

    def update_node(self, old_labels: dict | None, name: str, new_labels: dict | None) -> None:
        """A relabelled node moves to the end of its new zone only when its
        zone changed."""
        if old_labels is not None and zone_key(old_labels) == zone_key(new_labels):
            return
        self.remove_node(name, old_labels)
        self.add_node(name, new_labels)

    def list(self) -> list[str]:
        """Round robin over the zones: the i-th node of every zone that has
        one, for i = 0, 1, ..."""
        if len(self.zones) == 1:
            return list(self.tree[self.zones[0]])
        out: list[str] = []
        columns = [self.tree[z] for z in self.zones]
        depth = max((len(c) for c in columns), default=0)
        for i in range(depth):
            for c in columns:
                if i < len(c):
                    out.append(c[i])
        return out


def node_tree_order(nodes, by_name: dict, node_infos=()) -> list:
    """NodeInfos (`by_name`) in node-tree order, the node tree built from
    `nodes`, Node objects in the order they were added (a fixture's order;
    the snapshot's own list is sorted by name), then from the NodeInfos of
    `node_infos` not among them: nodes added to the snapshot later, each
    added to the tree last, as the cache adds a new node."""
    tree = NodeTree((n["metadata"]["name"], n["metadata"].get("labels")) for n in nodes)
    if len(by_name) != tree.num_nodes:
        for ni in node_infos:
            tree.add_node(ni.name, ni.labels)
    return [by_name[name] for name in tree.list() if name in by_name]
