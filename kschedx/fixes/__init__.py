"""`explain --fix`: for a pod that does not fit, a short ranked list of
concrete changes, each checked by running the scheduling cycle again with
the change applied (see verify.py). A change that does not make the pod
fit is never proposed.

Each fix kind lives in a module of its own and proposes candidates from the
pod's Filter results (blockers.py: which plugins keep it off which node);
the search runs at most MAX_RUNS cycles per pod. Fixes are ranked by how
small the change is: one object before many, a change to the pod before a
change to the cluster, then kind, then a smaller quantity first.
"""
