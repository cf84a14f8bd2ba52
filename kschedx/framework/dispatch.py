"""One framework per scheduling profile over one snapshot, and each pod sent
to the profile of its spec.schedulerName, as kube-scheduler's profile.Map
does. A pod no profile serves is left alone by kube-scheduler: kschedx
reports it with status NoProfile instead of evaluating it."""

from __future__ import annotations

import random

from ..config import names
from ..features import Features, default_features
from ..util.gc_policy import freeze_all
from .records import PodResult
from .queue import Nominator
from .runtime import Framework
from .sampling import SamplingState
from ..state.cluster import ClusterState
from ..state.snapshot import build_snapshot
from ..state.types import PodInfo

NO_PROFILE = "NoProfile"


class CountingRandom(random.Random):
    """The run's random source, counting its draws: a cycle whose only draw
    is the final tie-break (PodResult.tie_drawn) can be shared by an identical
    pod or computed in a worker process, the draw itself made again in run
    order (commands/reuse.py, util/workers.py)."""

    draws = 0

    def choice(self, seq):
        self.draws += 1
        return super().choice(seq)

    def randrange(self, *args, **kwargs):
        self.draws += 1
        return super().randrange(*args, **kwargs)
DEFAULT_SCHEDULER_NAME = "default-scheduler"


def sampling_state(mode: str, config=None) -> SamplingState:
    """The scheduler's sampling state: the global percentageOfNodesToScore
    (0, adaptive, without a configuration) and whether extenders filter or
    score, which keeps kube-scheduler searching even without Score plugins."""
    if config is None:
        return SamplingState(mode, 0)
    extenders = config.extenders or []
    return SamplingState(mode, config.percentage_of_nodes_to_score,
                         has_extender_filters=any(e.get("filterVerb") for e in extenders),
                         has_extender_prioritizers=any(e.get("prioritizeVerb") for e in extenders))


class Schedulers:
    """The frameworks of one run. Without a configuration there is one, the
    default profile, and it evaluates every pod whatever its schedulerName
    (kschedx's question is then "where would the default scheduler put it")."""

    def __init__(self, cluster, *, tie_break: str, seed: int | None, config=None, plugin_args=None,
                 sampling: str = "all", features: Features | None = None, snapshot=None, extenders=None,
                 freeze: bool = True):
        """`snapshot`: the cluster's, already built (a watch keeps one up to date,
        state/live.py); `extenders`: the Extenders of an earlier run of the same
        configuration (a watch makes one run per batch of pods); `freeze`: hand
        the snapshot to gc.freeze() (util/gc_policy.py freeze_all) (a one-shot run, whose snapshot lives as long
        as the process)."""
        # One features value for the whole run: the configuration's (it was
        # decoded and planned for it), else the one given, else the newest
        # version's defaults.
        if config is not None and config.features is not None:
            if features is not None and features != config.features:
                raise ValueError(f"the configuration was read for {config.features!r}, not {features!r}")
            features = config.features
        self.features = features = features or default_features()
        if snapshot is not None and snapshot.features != features:
            raise ValueError(f"the snapshot was built for {snapshot.features!r}, not {features!r}")
        self.snapshot = build_snapshot(cluster, features) if snapshot is None else snapshot
        if freeze:
            # The snapshot (millions of objects for a large cluster) lives as long as
            # the run: keep the cyclic GC from walking it again and again.
            freeze_all()
        self.config = config
        self.nominator = Nominator()
        rng = self.rng = CountingRandom(seed)
        plans = config.profiles if config is not None else [None]
        self.extenders = extenders  # framework/extenders.Extenders: shared by every profile, as upstream's
        if extenders is None and config is not None and config.extenders and not config.skip_extenders:
            from .extenders import Extenders

            self.extenders = Extenders.from_config(config.extenders, config.source)
        self.sampling = sampling_state(sampling, config)
        self.frameworks = [Framework(self.snapshot, tie_break=tie_break, plan=plan, nominator=self.nominator,
                                     rng=rng, plugin_args=plugin_args, sampling=self.sampling,
                                     extenders=self.extenders, features=features)
                           for plan in plans]
        self.by_name = {fw.profile.name: fw for fw in self.frameworks}
        self.tie_break = tie_break
        for pod in self.snapshot.pending_pods:
            nominated = (pod.get("status") or {}).get("nominatedNodeName")
            if nominated and self.snapshot.get(nominated) is not None:
                self.nominator.add(self.snapshot.pod_info(pod), nominated)

    @property
    def primary(self) -> Framework:
        return self.frameworks[0]

    def framework_for(self, pi: PodInfo) -> Framework | None:
        if self.config is None:
            return self.primary
        return self.by_name.get(pi.spec.get("schedulerName") or DEFAULT_SCHEDULER_NAME)

    def schedule(self, pi: PodInfo) -> PodResult:
        fw = self.framework_for(pi)
        if fw is None:
            return self.not_served(pi)
        result = fw.schedule(pi)
        result.profile = fw.profile.name
        return result

    def not_served(self, pi: PodInfo) -> PodResult:
        result = PodResult(pi)
        result.status = NO_PROFILE
        result.nodes = []
        result.profile = None
        name = pi.spec.get("schedulerName") or DEFAULT_SCHEDULER_NAME
        served = ", ".join(self.by_name)
        result.message = (f'no profile serves schedulerName "{name}" (this configuration\'s profiles: {served}): '
                          "kube-scheduler leaves the pod to another scheduler")
        return result

    def queue_order(self, pods: list[PodInfo]) -> list[PodInfo]:
        """The pods in the order of the configuration's QueueSort plugin (one
        for every profile, validation makes sure). Pods arrive in
        PrioritySort's order; another QueueSort plugin (registered through
        the kschedx.plugins entry points) reorders them with its `less`,
        stably, so its ties keep PrioritySort's order."""
        queue_sort = self.primary.profile.queue_sort
        if not queue_sort or queue_sort[0].name == names.PrioritySort:
            return pods
        from functools import cmp_to_key

        from ..util.errors import InputError
        from .interface import PluginError

        less = queue_sort[0].less
        try:
            return sorted(pods, key=cmp_to_key(lambda a, b: -1 if less(a, b) else 1 if less(b, a) else 0))
        except PluginError as exc:
            raise InputError(f"QueueSort plugin {queue_sort[0].name}: {exc}",
                             source=self.config.source if self.config is not None else None) from None

    @property
    def profile_names(self) -> list[str]:
        return list(self.by_name)

    @property
    def not_evaluated(self) -> list[str]:
        seen: dict[str, None] = {}
        for fw in self.frameworks:
            for name in fw.profile.not_evaluated:
                seen.setdefault(name, None)
        if self.config is not None and self.config.skip_extenders:
            # --skip-extenders: named as upstream names them, by URL prefix.
            for ext in self.config.extenders:
                seen.setdefault(ext.get("urlPrefix") or "", None)
        return list(seen)


def new_schedulers(cluster: ClusterState, *, tie_break: str, seed: int | None, config=None, sampling: str = "all",
                   features: Features | None = None):
    """The frameworks of a run, one per profile of `config` (the default
    profile without one), over one snapshot (dispatch.Schedulers).
    `sampling`: "all" evaluates every node; "upstream" stops searching where
    kube-scheduler's node sampling would. `features`: the version and gates
    (the configuration's when there is one, else the newest version's
    defaults)."""
    return Schedulers(cluster, tie_break=tie_break, seed=seed, config=config, sampling=sampling, features=features)


def new_framework(cluster: ClusterState, *, tie_break: str, seed: int | None, features: Features | None = None):
    """The default profile's framework over the cluster."""
    return new_schedulers(cluster, tie_break=tie_break, seed=seed, features=features).primary
