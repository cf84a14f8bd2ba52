"""One verdict per combination of label values, for all nodes at once.

Filters whose verdict on a node depends only on the node's values of a few
label keys (a zone constraint, a nodeSelector) decide once per distinct
combination of those values; the nodes are grouped by C-level loops over
columns of label values instead of one Python step per node.
"""

from __future__ import annotations

from itertools import repeat


def verdict_per_combination(nodes: list, labels: list[dict], keys, verdict_of, missing=None) -> list:
    """verdict_of(node) for each of `nodes`, asked once per combination of
    the values of `keys` in `labels` (each node's label dict; a missing key
    reads `missing`), of the first node with that combination."""
    n = len(nodes)
    columns = [list(map(dict.get, labels, repeat(k), repeat(missing))) for k in keys]
    if not columns:
        combos = [()] * n
    elif len(columns) == 1:
        combos = columns[0]
    else:
        combos = list(zip(*columns))
    # Walked backwards, a combination's last assignment is its first node.
    first = dict(zip(reversed(combos), range(n - 1, -1, -1)))
    verdicts = {combo: verdict_of(nodes[i]) for combo, i in sorted(first.items(), key=lambda kv: kv[1])}
    return list(map(verdicts.__getitem__, combos))
