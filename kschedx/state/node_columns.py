"""The snapshot's nodes as columns of numbers, and per-pod results over them.

NodeResourcesFit and NodeResourcesBalancedAllocation read a handful of
integers per node (allocatable, requested, non-zero requested, pod count).
Read through each NodeInfo's Resource objects that cost about a microsecond
per node and plugin, every cycle. Here each quantity is one list, row r
belonging to the NodeInfo whose `row` is r, kept up to date by
NodeInfo.add_pod / remove_pod / set_node of the snapshot's own nodes
(clones for preemption dry runs and nominated pods, and nodes added later,
have row -1: plugins take their per-node path for a list holding one).

A plugin's value for every row (a score, whether a pod fits at first sight)
depends only on the pod's requests and that row, so it is kept per key (the
plugin's settings and the pod's requests) and, when asked again, computed
again only for the rows changed since: in `simulate` a cycle changes one
node, and pods of one controller have the same requests. The per-node
methods stay the reference (`tests/test_node_columns.py`).
"""

from __future__ import annotations

# False: plugins read every NodeInfo as before (tests compare the two).
ENABLED = True

# Values kept for at most this many keys; then they start again.
MAX_KEYS = 32


class NodeColumns:
    __slots__ = ("alloc_cpu", "alloc_mem", "alloc_eph", "allowed_pods", "req_cpu", "req_mem", "req_eph", "nz_cpu",
                 "nz_mem", "num_pods", "changed", "epoch", "values_by_key", "_last_nodes", "_last_rows")

    def __init__(self, node_infos):
        n = len(node_infos)
        for name in ("alloc_cpu", "alloc_mem", "alloc_eph", "allowed_pods", "req_cpu", "req_mem", "req_eph",
                     "nz_cpu", "nz_mem", "num_pods"):
            setattr(self, name, [0] * n)
        # Rows changed, in order; cleared (a new epoch) when it grows long.
        self.changed: list[int] = []
        self.epoch = 0
        self.values_by_key: dict = {}  # key -> (epoch, len(changed) then, values per row)
        self._last_nodes = None
        self._last_rows = None
        for r, ni in enumerate(node_infos):
            ni.row = r
            ni.columns = self
            self._fill(ni, r)

    def _fill(self, ni, r: int) -> None:
        alloc = ni.allocatable
        req = ni.requested
        nz = ni.non_zero_requested
        self.alloc_cpu[r] = alloc.milli_cpu
        self.alloc_mem[r] = alloc.memory
        self.alloc_eph[r] = alloc.ephemeral_storage
        self.allowed_pods[r] = alloc.allowed_pod_number
        self.req_cpu[r] = req.milli_cpu
        self.req_mem[r] = req.memory
        self.req_eph[r] = req.ephemeral_storage
        self.nz_cpu[r] = nz.milli_cpu
        self.nz_mem[r] = nz.memory
        self.num_pods[r] = len(ni.pods)

    def refresh(self, ni) -> None:
        """The node's row again, after its pods or allocatable changed."""
        r = ni.row
        self._fill(ni, r)
        changed = self.changed
        changed.append(r)
        if len(changed) > 4 * len(self.num_pods) + 64:
            changed.clear()
            self.epoch += 1

    def rows(self, nodes) -> list[int] | None:
        """The rows of `nodes`, or None when one of them has none."""
        if nodes is self._last_nodes and len(self._last_rows) == len(nodes):
            return self._last_rows
        rows = [ni.row for ni in nodes]
        if rows and min(rows) < 0:
            return None
        self._last_nodes, self._last_rows = nodes, rows
        return rows

    def values(self, key, compute) -> list:
        """Every row's value for `key`. `compute(rows)` gives the values of
        those rows (None: all rows, in order); only rows changed since the
        last call with this key are computed again."""
        kept = self.values_by_key.get(key)
        mark = len(self.changed)
        if kept is not None and kept[0] == self.epoch:
            values = kept[2]
            if kept[1] < mark:
                rows = sorted(set(self.changed[kept[1]:]))
                if len(rows) * 8 > len(values):
                    values = compute(None)
                else:
                    for r, v in zip(rows, compute(rows)):
                        values[r] = v
        else:
            if len(self.values_by_key) >= MAX_KEYS:
                self.values_by_key.clear()
            values = compute(None)
        self.values_by_key[key] = (self.epoch, mark, values)
        return values

    def take(self, rows, *names) -> list[list]:
        """The named columns, whole (rows None) or at those rows."""
        if rows is None:
            return [getattr(self, name) for name in names]
        return [[col[r] for r in rows] for col in (getattr(self, name) for name in names)]


def columns_for(handle, nodes):
    """(the snapshot's NodeColumns, the rows of `nodes`), or None when the
    per-node path must be taken (no snapshot, or a node without a row)."""
    if not ENABLED or not nodes:
        return None
    snapshot = getattr(handle, "snapshot", None)
    if snapshot is None:
        return None
    cols = snapshot.node_columns
    if cols is None:
        cols = snapshot.node_columns = NodeColumns(snapshot.node_infos)
    rows = cols.rows(nodes) if nodes[0].columns is cols else None
    if rows is None:
        return None
    return cols, rows
