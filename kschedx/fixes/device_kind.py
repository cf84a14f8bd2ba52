"""What the device kinds that change the pod's claims do alike: options
drawn for the nodes only DynamicResources keeps the pod off (or one node,
for a join), each a JSON Patch of claims (claims.py writes it to the claim
or its template), checked smallest first."""

from __future__ import annotations
from ..config import names

def find(search, kind: str, order: int, options, *, all_verified: bool = False) -> list:
    """Check the kind's options (magnitude, words, edits), at most
    MAX_CANDIDATES; stop at the first that verifies unless `all_verified`."""
    from .parts import Context
    from .search import MAX_CANDIDATES, POD, Candidate

    ctx = Context.of(search)
    seen, fixes = set(), []
    for magnitude, words, edits in sorted(options(ctx, None), key=lambda o: o[0]):
        key = repr(sorted(edits.items()))
        if key in seen:
            continue
        seen.add(key)
        if len(seen) > MAX_CANDIDATES or search.done():
            break
        fix = search.check(Candidate(kind, POD, words, claim_edits=edits, magnitude=magnitude, order=order))
        if fix is not None:
            fixes.append(fix)
            if not all_verified:
                break
    return fixes


def parts(ctx, node: str, kind: str, options, limit: int = 2) -> list:
    from .parts import Part
    from .search import POD

    out = []
    for magnitude, words, edits in sorted(options(ctx, node), key=lambda o: o[0])[:limit]:
        out.append(Part(kind, names.DynamicResources, POD, words, claim_edits=edits, magnitude=magnitude))
    return out
