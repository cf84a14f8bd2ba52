"""Parts: what opens one plugin on one node (a toleration for its taints,
the requests cut to what it has free, a device copied onto it...), which
combine.py joins when no single change verifies; and the context parts
are computed against. Each kind module with parts gives them from
`parts(ctx, node)`."""

from __future__ import annotations

from dataclasses import dataclass, field

from .search import Candidate


@dataclass
class Part:
    kind: str  # the single kind it belongs to
    plugin: str  # the Filter plugin it opens
    side: str  # POD or CLUSTER
    words: str
    pod_patch: list | None = None
    claim_edits: dict = field(default_factory=dict)
    node_patches: dict = field(default_factory=dict)
    objects: list = field(default_factory=list)
    removed: list = field(default_factory=list)
    new_nodes: list = field(default_factory=list)
    changes: list = field(default_factory=list)
    magnitude: float = 1.0
    covers: frozenset | None = None  # plugins it opens, when more than `plugin`

    def opens(self) -> frozenset:
        return self.covers or frozenset((self.plugin,))


@dataclass
class Context:
    """What parts are computed against: the pod as written and admitted,
    and what keeps it off each node. In a chain: the pod with the first
    change made, and that change's own cycle's blockers."""

    search: object
    raw_pod: dict
    pod_info: object
    blockers: object
    base: Candidate | None = None

    @classmethod
    def of(cls, search) -> "Context":
        return cls(search, search.raw_pod, search.pod_info, search.blockers)

    def claim_edits(self) -> dict:
        return dict(self.base.claim_edits) if self.base is not None else {}


