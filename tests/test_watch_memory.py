"""A long watch stays within the memory the cluster needs, whatever the hours:
thousands of pod events (pods made, bound, deleted; new Jobs with label sets
never seen before) leave the objects the collector tracks (every dict and
list: what a leak here would be made of), the tables that grow with what is
seen (label signatures, parsed terms, shared specs and facts), the threads and
the connections where they were after a warm-up. (The figures at 50,000 pods,
resident memory included, are benchmarks/bench_watch.py's.)"""

from __future__ import annotations

import gc
import random
import threading

import pytest

from builders import api_node, api_pod
from cluster_scenarios import no_ambient_config  # noqa: F401 (fixture)
from kubeapi_churn import Churn
from kschedx.render.watch import WatchJsonlSink
from kschedx.state import live as live_module
from kschedx.state.types import signature_count
from watching import Watching


class Null:
    def write(self, text):
        pass

    def flush(self):
        pass


def test_memory_is_bounded_by_the_cluster_not_by_the_events(kube_api, monkeypatch):
    monkeypatch.setattr(live_module, "SIGNATURE_SLACK", 50)  # compaction within the test's length
    api = kube_api
    api.bookmark_interval = 0.05
    rng = random.Random(5)
    nodes = [f"node-{i:03d}" for i in range(50)]
    api.add(*[api_node(n, cpu="64", labels={"topology.kubernetes.io/zone": f"z{i % 3}"})
              for i, n in enumerate(nodes)])
    api.add(*[api_pod(f"base-{i:04d}", node_name=rng.choice(nodes), cpu="100m", namespace="base",
                      labels={"app": f"a{i % 10}"}) for i in range(1000)])
    churn = Churn(api.store, rng, nodes)
    from kschedx.result.node_choice import parse_node_choice

    w = Watching(api, sink=WatchJsonlSink(Null()), settle=0.05, nodes=parse_node_choice("top=1"))
    if True:
        try:
            w.sync(timeout=60)
            for _ in range(2):  # warm-up: caches and tables reach their working size
                churn.run(500)
                w.sync(timeout=60)
            gc.collect()
            tables_before = tables(w.run)
            objects_before = len(gc.get_objects()) + gc.get_freeze_count()
            threads_before = threading.active_count()
            watches_before = api.open_watches()
            compactions = 0
            before_signatures = signature_count()
            for _ in range(12):  # 6,000 events more
                churn.run(500)
                w.sync(timeout=60)
                compactions += signature_count() < before_signatures
                before_signatures = signature_count()
            gc.collect()
            tables_after = tables(w.run)
            objects_after = len(gc.get_objects()) + gc.get_freeze_count()
            run = w.run
            assert run.summary.explanations > 300  # the watch did explain pods all along
            assert compactions  # label signatures were compacted on the way
            assert len(run.tracked) <= 60 and len(run.live.pods) < 2000
            assert threading.active_count() == threads_before
            assert api.open_watches() == watches_before
        finally:
            w.finish()
    assert sum(churn.counts.values()) == 7_000
    assert objects_after <= 1.10 * objects_before, (objects_before, objects_after)
    for name, size in tables_after.items():
        assert size <= 1.5 * tables_before[name] + 100, (name, tables_before[name], size)


def tables(run) -> dict[str, int]:
    """The sizes of what grows with what a watch sees."""
    from kschedx.state import podaffinity
    from kschedx.storage import objects

    live = run.live
    specs = live.admission._specs
    return {"signatures": signature_count(), **podaffinity.cache_sizes(), **objects.cache_sizes(),
            "facts": len(live.facts), "specTemplates": len(specs.by_key) if specs is not None else 0,
            "replacedSpecs": len(live.admission.replaced), "tracked": len(run.tracked), "pods": len(live.pods),
            "said": len(run.said), "queue": run.watcher.events.qsize()}
