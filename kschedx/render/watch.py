"""What `explain --watch` writes: the explain report or JSON Lines, appended
as pods are explained, and one line per pod gone.

-o human (and wide): each explanation is the pod's usual block (HumanSink's,
unchanged), after a rule saying when and why it was explained; a pod gone is
one line, like `kubectl get -w` appends them; the end is a summary of the run.

-o jsonl: each explanation is exactly the line a one-shot `explain -o jsonl`
writes for that pod, with one more key at its end, `watch` (why, when, which
explanation of the pod it is); everything else is a `WatchEvent` line
(Started, PodGone, Unselected, Disconnected, Reconnected, Relisted); the last
line is the closing SchedulingResult, whose `watch` is the run's summary.
"""

from __future__ import annotations

from datetime import datetime

from ..result.document import API_VERSION
from .human import HumanSink
from .blocks import Blank, Line, MUTED, plural, Span, STRONG
from .machine import JsonlSink

WATCH_EVENT_KIND = "WatchEvent"


def local_time(text: str | None) -> str:
    """HH:MM:SS in local time, from an RFC 3339 UTC time."""
    if not text:
        return "--:--:--"
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone().strftime("%H:%M:%S")
    except ValueError:
        return text


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def seconds_text(seconds) -> str:
    seconds = int(seconds or 0)
    if seconds < 120:
        return f"{seconds} s"
    m, s = divmod(seconds, 60)
    if m < 120:
        return f"{m}m{s:02d}s"
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m"


def gone_text(event: dict) -> str:
    """A pod gone, in a sentence: what happened to it and what kschedx had said."""
    p = event["prediction"]
    after = seconds_text(event.get("pendingSeconds"))
    if p["status"] == "Scheduled" or p["node"]:
        said = f"kschedx had predicted {p['node']}"
        others = [n for n in p.get("topNodes") or () if n != p["node"]]
        if event["outcome"] == "Bound" and event["node"] in others:
            said += f", tied at the top score with {event['node']}"
        if p["status"] != "Scheduled":
            said += " (by preemption)"
    elif p["status"] == "Unschedulable":
        said = "kschedx had found no node (Unschedulable)"
    else:
        said = f"kschedx had not predicted a node ({p['status']})"
    if event["outcome"] == "Bound":
        text = f"bound to {event['node']} by {event.get('scheduler') or 'a scheduler'} after {after}: {said}"
    elif event["outcome"] == "Finished":
        text = f"finished after {after} ({said})"
    else:
        text = f"deleted after {after} ({said})"
    if p.get("stale"):
        why = f": {p['staleBecause']}" if p.get("staleBecause") else ""
        text += f" (prediction from {local_time(p.get('explainedAt'))}; the cluster changed since{why})"
    return text


def summary_text(s: dict) -> str:
    gone = s.get("gone") or {}
    pred = s.get("predictions") or {}
    parts = [f"watched {seconds_text(s.get('durationSeconds'))}: {plural(s.get('pods', 0), 'pod')} explained "
             f"{plural(s.get('explanations', 0), 'time')}"]
    if gone.get("Bound") or gone.get("Deleted") or gone.get("Finished"):
        bits = []
        if gone.get("Bound"):
            bits.append(f"{gone['Bound']} bound ({pred.get('hit', 0)} where kschedx predicted, "
                        f"{pred.get('miss', 0)} elsewhere"
                        + (f", {pred['unpredicted']} unpredicted" if pred.get("unpredicted") else "") + ")")
        if gone.get("Deleted"):
            bits.append(f"{gone['Deleted']} deleted")
        if gone.get("Finished"):
            bits.append(f"{gone['Finished']} finished")
        parts.append("gone: " + ", ".join(bits))
    if s.get("goneUnexplained"):
        parts.append(f"{s['goneUnexplained']} bound or gone before being explained")
    pending = s.get("pending") or {}
    total = sum(pending.values())
    if total:
        parts.append(f"still pending: {total} (" + ", ".join(f"{k} {v}" for k, v in pending.items()) + ")")
    else:
        parts.append("none still pending")
    return "; ".join(parts)


class WatchHumanSink(HumanSink):
    """The explain report, one block per explanation, appended."""

    def event(self, event: dict) -> None:
        type_ = event.get("type")
        report = self.report
        if type_ == "Explained":
            if report.pods:
                report.add(Blank())
            n = event.get("explanation") or 1
            nth = f" ({ordinal(n)} time)" if n > 1 else ""
            reason = event.get("reason") or ""
            text = f"── {local_time(event.get('time'))} · {event['pod']}{nth}" + (f" · {reason}" if reason else "")
            report.add(Line([Span(text + " ──", MUTED)]))
        elif type_ == "PodGone":
            if self._after_pod:
                report.add(Blank())
            report.add(Line([Span(f"{local_time(event.get('time'))}  {event['pod']}  ", STRONG),
                             Span(gone_text(event))]))
        elif type_ == "Unselected":
            report.add(Line([Span(f"{local_time(event.get('time'))}  {event['pod']}  no longer selected "
                                  "(its labels or fields changed)", MUTED)]))
        else:
            return
        self._after_pod = False
        self._flush()

    _after_pod = False

    def pod(self, pod: dict) -> None:
        report = self.report
        self._after_pod = True
        report.pods += 1
        report.count(pod)
        report.pod(pod)
        self._flush()

    def end(self, tail: dict) -> None:
        summary = tail.get("watch")
        if summary is not None:
            self.report.add(Blank())
            self.report.add(Line([Span(summary_text(summary), STRONG)]))
            self._flush()
        else:
            super().end(tail)


class WatchJsonlSink(JsonlSink):
    """JSON Lines: one-shot explain's lines with `watch`, and WatchEvent lines."""

    def __init__(self, out):
        super().__init__(out)
        self._watch: dict | None = None

    def event(self, event: dict) -> None:
        if event.get("type") == "Explained":
            self._watch = {"reason": event.get("reason") or "", "time": event.get("time"),
                           "explanation": event.get("explanation") or 1}
            return
        self._line({"apiVersion": API_VERSION, "kind": WATCH_EVENT_KIND, **event})

    def pod(self, pod: dict) -> None:
        self.tally.add(pod)
        line = dict(self.head, pods=[pod])
        if self._watch is not None:
            line["watch"] = self._watch
            self._watch = None
        self._line(line)

    def end(self, tail: dict) -> None:
        summary = tail.get("watch") or {}
        stream = {"pods": self.tally.pods, "statuses": dict(self.tally.statuses),
                  "exitCode": summary.get("exitCode", 0)}
        self._line(dict(self.head, pods=[], **tail, stream=stream))
