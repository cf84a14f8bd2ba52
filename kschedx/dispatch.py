"""One framework per scheduling profile over one snapshot, and each pod sent
to the profile of its spec.schedulerName, as kube-scheduler's profile.Map
does. A pod no profile serves is left alone by kube-scheduler: kschedx
reports it with status NoProfile instead of evaluating it."""

from __future__ import annotations

import gc
import random

from .framework.records import PodResult
from .framework.runner import Framework, Nominator
from .snapshot import PodInfo, build_snapshot

NO_PROFILE = "NoProfile"


class CountingRandom(random.Random):
    """The run's random source, counting its draws: a cycle whose only draw
    is the final tie-break (PodResult.tie_drawn) can be shared by an identical
    pod or computed in a worker process, the draw itself made again in run
    order (kschedx/reuse.py, kschedx/workers.py)."""

    draws = 0

    def choice(self, seq):
        self.draws += 1
        return super().choice(seq)

    def randrange(self, *args, **kwargs):
        self.draws += 1
        return super().randrange(*args, **kwargs)
DEFAULT_SCHEDULER_NAME = "default-scheduler"


class Schedulers:
    """The frameworks of one run. Without a configuration there is one, the
    default profile, and it evaluates every pod whatever its schedulerName
    (kschedx's question is then "where would the default scheduler put it")."""

    def __init__(self, cluster, *, tie_break: str, seed: int | None, config=None, plugin_args=None):
        self.snapshot = build_snapshot(cluster)
        # The snapshot (millions of objects for a large cluster) lives as long as
        # the run: keep the cyclic GC from walking it again and again.
        gc.freeze()
        self.config = config
        self.nominator = Nominator()
        rng = self.rng = CountingRandom(seed)
        plans = config.profiles if config is not None else [None]
        self.frameworks = [Framework(self.snapshot, tie_break=tie_break, plan=plan, nominator=self.nominator,
                                     rng=rng, plugin_args=plugin_args) for plan in plans]
        self.by_name = {fw.profile.name: fw for fw in self.frameworks}
        self.tie_break = tie_break
        for pod in cluster.pending_pods():
            nominated = (pod.get("status") or {}).get("nominatedNodeName")
            if nominated and self.snapshot.get(nominated) is not None:
                self.nominator.add(PodInfo(pod), nominated)

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

    @property
    def profile_names(self) -> list[str]:
        return list(self.by_name)

    @property
    def not_evaluated(self) -> list[str]:
        seen: dict[str, None] = {}
        for fw in self.frameworks:
            for name in fw.profile.not_evaluated:
                seen.setdefault(name, None)
        return list(seen)
