"""DefaultPreemption: when a pod fits nowhere, find lower-priority pods whose
removal would let it fit, and nominate the node where that hurts least.

The plugin decides who may preempt and whom (PodEligibleToPreemptOthers,
isPreemptionAllowed), how many nodes to dry-run (GetOffsetAndNumCandidates)
and which pods to evict on one node (SelectVictimsOnNode); the Evaluator in
framework/preemption.py runs the dry runs and picks the candidate, as in
kube-scheduler v1.35 with its default feature gates and the configured
minCandidateNodesPercentage / minCandidateNodesAbsolute.
"""

from __future__ import annotations

from ..config import names
from ..config.pluginargs import checked_plugin_args
from ..framework.declaration import Declaration, reads
from ..framework.events import ActionType as A, POD, Register
from ..framework.interface import Plugin, PluginError, features_of
from ..framework.preemption import Evaluator, importance_key, split_by_pdb_violation
from ..framework.gosort import sort_slice_by_key
from ..framework.status import Code, Status

NAME = names.DefaultPreemption

NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
NO_VICTIMS = "No preemption victims found for incoming pod"

def validate_args(args: dict | None) -> dict:
    """The defaulted args; ValueError with upstream's text when invalid."""
    return checked_plugin_args(NAME, args)


def pod_terminating_by_preemption(pod: dict) -> bool:
    """Being deleted, and the first DisruptionTarget condition says the
    scheduler preempted it."""
    if not (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "DisruptionTarget":
            return cond.get("status") == "True" and cond.get("reason") == "PreemptionByScheduler"
    return False


class DefaultPreemption(Plugin):
    name = NAME

    def __init__(self, handle, args: dict | None = None):
        super().__init__(handle, validate_args(args))
        self.min_candidate_nodes_percentage = self.args["minCandidateNodesPercentage"]
        self.min_candidate_nodes_absolute = self.args["minCandidateNodesAbsolute"]
        self.evaluator = Evaluator(self.name, handle, self)
        self.pdb_first_violation_stops = features_of(handle).pdb_violation_stops_at_first_budget
        # Optional offset override (tests port upstream's seeded offsets).
        self.offset_override = None

    # -- PostFilter --------------------------------------------------------------
    def post_filter(self, state, pod_info, node_to_status):
        result, status = self.evaluator.preempt(state, pod_info, node_to_status)
        msg = status.message()
        if msg:
            return result, Status(status.code, "preemption: " + msg, details=status.details)
        return result, status

    # -- the preemption.Interface of upstream ---------------------------------------
    def calculate_num_candidates(self, num_nodes: int) -> int:
        n = (num_nodes * self.min_candidate_nodes_percentage) // 100
        if n < self.min_candidate_nodes_absolute:
            n = self.min_candidate_nodes_absolute
        if n > num_nodes:
            n = num_nodes
        return n

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """Upstream draws the offset at random (rand.Int31n). kschedx uses 0
        with --tie-break name (what the golden cases use), else the seeded
        generator of the run, so --seed makes it reproducible."""
        if self.offset_override is not None:
            offset = self.offset_override(num_nodes)
        elif getattr(self.handle, "tie_break", "name") == "name":
            offset = 0
        else:
            offset = self.handle.rng.randrange(num_nodes)
        return offset, self.calculate_num_candidates(num_nodes)

    def pod_eligible_to_preempt_others(self, pod_info, nominated_node_status: Status | None) -> tuple[bool, str]:
        if pod_info.spec.get("preemptionPolicy") == "Never":
            return False, NOT_ELIGIBLE_NEVER
        nominated = ((pod_info.pod.get("status") or {}).get("nominatedNodeName")) or ""
        if nominated:
            # A nominated node the filters now reject outright: preempt again elsewhere.
            if nominated_node_status is not None and nominated_node_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            node_info = self.handle.snapshot.get(nominated)
            if node_info is not None:
                for p in node_info.pods:
                    if self.is_preemption_allowed(node_info, p, pod_info) and pod_terminating_by_preemption(p.pod):
                        return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def is_preemption_allowed(self, node_info, victim, preemptor) -> bool:
        # Default IsEligiblePod: no filtering beyond the lower priority.
        return victim.priority < preemptor.priority

    def select_victims_on_node(self, state, pod_info, node_info, pdbs) -> tuple[list, int, Status | None]:
        """The fewest pods to remove from this node (a copy) so the pod fits.

        Remove every lower-priority pod, check the pod fits with the full
        filter set (nominated pods included), then add pods back from the
        most important down, PDB-violating ones first, keeping each one that
        still lets the pod fit. Returns (victims, PDB violations, status);
        status None means Success.
        """
        fh = self.handle
        extensions = getattr(fh, "pre_filter_extensions", None)
        if extensions is not None and not extensions(state):
            # No PreFilter state follows the node's pods: only the node changes.
            remove_pod = node_info.remove_pod
            add_pod = node_info.add_pod
        else:
            def remove_pod(pi):
                node_info.remove_pod(pi)
                fh.run_pre_filter_extension_remove_pod(state, pod_info, pi, node_info)

            def add_pod(pi):
                node_info.add_pod(pi)
                fh.run_pre_filter_extension_add_pod(state, pod_info, pi, node_info)

        def fits() -> Status | None:
            try:
                return fh.run_filter_plugins_with_nominated_pods(state, pod_info, node_info)
            except PluginError as exc:
                return Status.as_error(str(exc))

        potential = []
        try:
            for pi in list(node_info.pods):
                if self.is_preemption_allowed(node_info, pi, pod_info):
                    potential.append(pi)
                    remove_pod(pi)
        except PluginError as exc:
            return [], 0, Status.as_error(str(exc))
        if not potential:
            return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS)

        # Not fitting with every lower-priority pod gone: preemption cannot
        # help here (affinity to a victim is deliberately not considered).
        st = fits()
        if st is not None and not st.is_success():
            return [], 0, st

        sort_slice_by_key(potential, importance_key)
        violating, non_violating = split_by_pdb_violation(potential, pdbs, self.pdb_first_violation_stops)
        victims = []
        num_violating = 0

        def reprieve(pi) -> bool:
            add_pod(pi)
            st = fits()
            ok = st is None or st.is_success()
            if not ok:
                remove_pod(pi)
                victims.append(pi)
            return ok

        try:
            for pi in violating:
                if not reprieve(pi):
                    num_violating += 1
            for pi in non_violating:
                reprieve(pi)
        except PluginError as exc:
            return [], 0, Status.as_error(str(exc))
        if violating and non_violating:
            sort_slice_by_key(victims, importance_key)
        return victims, num_violating, None


DECLARATION = Declaration(
    name=names.DefaultPreemption,
    factory=DefaultPreemption,
    points=frozenset({"preEnqueue", "postFilter"}),
    # 1.37's PodGroupPostFilter preempts for pod groups (never run by kschedx).
    points_from=(("1.37", frozenset({"podGroupPostFilter"})),),
    # Its PreEnqueue holds a pod back while the victims of its own preemption
    # are being deleted (SchedulerAsyncPreemption): a wait in time, which an
    # offline cycle has not.
    not_run=frozenset({"preEnqueue"}),
    reads=(reads("PodDisruptionBudget", pods=("preempting",)),),
    events=(Register(POD, A.Delete, gate="SchedulerAsyncPreemption"),),
    gates=frozenset({"SchedulerAsyncPreemption"}),
)
