"""--metrics-addr: explain --watch's figures in Prometheus' text format.

prometheus_client is the ecosystem's standard for this and an optional
extra (`pip install 'kschedx[metrics]'`): it is imported only when
--metrics-addr is given. Each run has its own registry.

    kschedx_pending_pods{status}                     pods pending, by their last verdict
    kschedx_pending_pods_by_reason{plugin,reason}    pods pending, by what rejects them
    kschedx_explanation_duration_seconds             one pod's explanation
    kschedx_explanations_total{trigger}              explanations, by what asked for them
    kschedx_predictions_total{outcome}               bound pods: hit, miss, unpredicted
    kschedx_pods_gone_total{outcome}                 Bound, Deleted, Finished, Unexplained
    kschedx_watch_events_total{kind,type}            watch events applied
    kschedx_relists_total{kind}                      kinds listed again (410 Gone)
    kschedx_watch_events_queued                      events received, not applied yet
    kschedx_watch_oldest_event_age_seconds           how long the oldest of them has waited
    kschedx_pods_due                                 pods due to be explained (again)
    kschedx_pods_due_oldest_age_seconds              since the event that made the oldest of them due
    kschedx_explanation_staleness_seconds            each explanation: from the event that made it due to it
    kschedx_api_server_up                            1 while the API server answers
    process_*                                        the process (resident memory...)
"""

from __future__ import annotations

import re

import click

from ..commands.watch import WatchObserver

# Label sets of kschedx_pending_pods_by_reason: past this many, the rest count as "other".
MAX_REASON_LABELS = 500

_ADDR = re.compile(r"(?:\[(?P<v6>[0-9a-fA-F:.]+)\]|(?P<host>[^:\[\]]*)):(?P<port>\d{1,5})")


def parse_addr(text: str) -> tuple[str, int]:
    """[HOST]:PORT -> (host, port); an empty host is every interface."""
    m = _ADDR.fullmatch(text or "")
    if not m or int(m["port"]) > 65535:
        raise click.BadParameter(f"{text!r} is not [HOST]:PORT (like :9090, 127.0.0.1:9090 or [::]:9090)",
                                 param_hint="'--metrics-addr'")
    host = m["v6"] if m["v6"] is not None else (m["host"] or "0.0.0.0")
    return host, int(m["port"])


def require_client():
    try:
        import prometheus_client  # noqa: F401
    except ImportError:
        raise click.UsageError("--metrics-addr needs the prometheus_client package: "
                               "pip install 'kschedx[metrics]'") from None


class PrometheusObserver(WatchObserver):
    """The watch's figures, served on HOST:PORT at /metrics."""

    def __init__(self, host: str, port: int):
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
        from prometheus_client.core import GaugeMetricFamily
        from prometheus_client.process_collector import ProcessCollector

        self.registry = registry = CollectorRegistry(auto_describe=True)
        self._by_status: dict[str, int] = {}
        self._by_reason: dict[tuple[str, str], int] = {}
        observer = self

        class Pending:
            def collect(self):
                statuses = GaugeMetricFamily("kschedx_pending_pods", "Pending pods, by their last verdict",
                                             labels=["status"])
                for status, n in sorted(observer._by_status.items()):
                    statuses.add_metric([status], n)
                yield statuses
                reasons = GaugeMetricFamily("kschedx_pending_pods_by_reason",
                                            "Pending pods, by the plugin and reason that reject them",
                                            labels=["plugin", "reason"])
                for (plugin, reason), n in sorted(observer._by_reason.items()):
                    reasons.add_metric([plugin, reason], n)
                yield reasons

            def describe(self):
                return []

        registry.register(Pending())
        self.duration = Histogram("kschedx_explanation_duration_seconds", "Time to explain one pod",
                                  buckets=(.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30), registry=registry)
        self.explanations = Counter("kschedx_explanations", "Explanations, by what asked for them", ["trigger"],
                                    registry=registry)
        self.predictions = Counter("kschedx_predictions", "Pods bound: whether kschedx had predicted the node",
                                   ["outcome"], registry=registry)
        self.gone_pods = Counter("kschedx_pods_gone", "Pending pods gone, by how", ["outcome"], registry=registry)
        self.events = Counter("kschedx_watch_events", "Watch events applied", ["kind", "type"], registry=registry)
        self.relists = Counter("kschedx_relists", "Kinds listed again", ["kind"], registry=registry)
        self.up = Gauge("kschedx_api_server_up", "1 while the API server answers", registry=registry)
        self.up.set(1)
        # How far behind the cluster the watch is.
        self.events_queued = Gauge("kschedx_watch_events_queued", "Watch events received and not applied yet",
                                   registry=registry)
        self.oldest_event = Gauge("kschedx_watch_oldest_event_age_seconds",
                                  "How long the oldest event not applied yet has waited", registry=registry)
        self.pods_due = Gauge("kschedx_pods_due", "Pending pods due to be explained (again)", registry=registry)
        self.oldest_due = Gauge("kschedx_pods_due_oldest_age_seconds",
                                "Since the event that made the oldest pod due", registry=registry)
        self.staleness_seconds = Histogram(
            "kschedx_explanation_staleness_seconds",
            "From the event that made a pod due to its explanation written",
            buckets=(.1, .25, .5, 1, 2, 3, 5, 10, 20, 30, 60, 120, 300), registry=registry)
        ProcessCollector(registry=registry)
        try:
            self.server, self.thread = start_http_server(port, addr=host, registry=registry)
        except OSError as e:
            raise click.BadParameter(f"cannot serve metrics on {host}:{port}: {(e.strerror or str(e)).lower()}",
                                     param_hint="'--metrics-addr'") from None
        self.port = self.server.server_address[1]
        self.host = host

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # -- WatchObserver ------------------------------------------------------------------
    def explained(self, doc, seconds, trigger):
        self.duration.observe(seconds)
        self.explanations.labels(trigger).inc()

    def pending(self, by_status, by_reason):
        reasons: dict[tuple[str, str], int] = {}
        for pair, n in sorted(by_reason.items(), key=lambda kv: -kv[1]):
            key = pair if len(reasons) < MAX_REASON_LABELS else ("other", "other")
            reasons[key] = reasons.get(key, 0) + n
        # Replaced whole: the scrape thread reads one dict or the other.
        self._by_status = dict(by_status)
        self._by_reason = reasons

    def gone(self, outcome, prediction):
        self.gone_pods.labels(outcome).inc()
        if prediction is not None:
            self.predictions.labels(prediction).inc()

    def event(self, kind, type_):
        self.events.labels(kind, type_).inc()

    def connection(self, up):
        self.up.set(1 if up else 0)

    def relisted(self, kind, reason):
        self.relists.labels(kind).inc()

    def lag(self, events_queued, oldest_event_seconds, pods_due, oldest_due_seconds):
        self.events_queued.set(events_queued)
        self.oldest_event.set(oldest_event_seconds)
        self.pods_due.set(pods_due)
        self.oldest_due.set(oldest_due_seconds)

    def staleness(self, seconds):
        self.staleness_seconds.observe(seconds)
