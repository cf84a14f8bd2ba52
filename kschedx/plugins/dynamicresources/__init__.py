"""DynamicResources (DRA): structured-parameters device allocation.

Pods without resource claims take the fast paths upstream takes (PreFilter
Skip, score 0, PostFilter "no new claims to deallocate"); pods with claims
are evaluated by the allocator.
"""

from __future__ import annotations

from ...framework.interface import Plugin, PluginError
from ...framework.status import Code, Status

STATE_KEY = "DynamicResources"


class _StateData:
    __slots__ = ("claims",)

    def __init__(self, claims):
        self.claims = claims

    def clone(self):
        return self


def pod_has_claims(pod_info) -> bool:
    return bool(pod_info.spec.get("resourceClaims"))


class DynamicResources(Plugin):
    name = "DynamicResources"
    # Pods with claims are not evaluated yet: kschedx says so rather than guess.
    complete = False

    def pre_enqueue(self, pod_info):
        return None

    def pre_filter(self, state, pod_info, nodes):
        if not pod_has_claims(pod_info):
            state.write(STATE_KEY, _StateData([]))
            return None, Status(Code.SKIP)
        state.write(STATE_KEY, _StateData(list(pod_info.spec["resourceClaims"])))
        return None, None

    def filter(self, state, pod_info, node_info):
        return None

    def post_filter(self, state, pod_info, node_to_status):
        data = state.read(STATE_KEY)
        if data is None:
            raise PluginError("not found")
        if not data.claims:
            return None, Status(Code.UNSCHEDULABLE, "no new claims to deallocate")
        return None, Status(Code.UNSCHEDULABLE, "still not schedulable")

    def score(self, state, pod_info, node_info) -> int:
        data = state.read(STATE_KEY)
        if data is None:
            raise PluginError("not found")
        return 0

    def normalize_score(self, state, pod_info, scores):
        return None


PLUGIN = DynamicResources
