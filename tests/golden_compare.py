"""Field-by-field comparison of a kschedx result with a golden expected file.

Returns human-readable differences ("pod default/web node node-a filter
NodeResourcesFit: code Unschedulable != Success") so a failing test says
exactly which field disagrees. Plugins kschedx reports as notEvaluated are
left out, and so are the pod-level outcome fields of pods whose outcome
depends on one of them.
"""

from __future__ import annotations

import json
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"

# The golden corpus is kube-scheduler v1.35.4's: comparisons run pinned to it.
from kschedx.features import default_features  # noqa: E402

V135 = default_features("1.35")


def case_names():
    return sorted(p.stem for p in (GOLDEN / "cases").glob("*.yaml"))


def load_expected(mode: str, name: str) -> dict:
    return json.loads((GOLDEN / "expected" / mode / f"{name}.json").read_text())


def _pod_depends_on(pod: dict, plugins: set[str]) -> bool:
    """True when the expected outcome of a pod involves one of `plugins`."""
    if not plugins:
        return False
    if pod.get("gate") and pod["gate"]["plugin"] in plugins:
        return True
    for st in pod.get("preFilter") or ():
        if st["plugin"] in plugins and st["code"] != "Skip":
            return True
    for node in pod.get("nodes") or ():
        for f in node.get("filters") or ():
            if f["plugin"] in plugins and f["code"] not in ("Skip", "Success"):
                return True
        if node.get("status") and node["status"].get("plugin") in plugins:
            return True
        for s in node.get("scores") or ():
            if s["plugin"] in plugins and not s.get("skipped") and s["weighted"] != 0:
                return True
    if pod.get("preemption") is not None and _preemption_depends_on(pod, plugins):
        return True
    if pod.get("status") == "Error":
        return True
    return False


# Plugins that can change a preemption outcome: every Filter plugin (the dry
# run re-runs them with victims removed) and DynamicResources (its PostFilter
# runs first). All of them have a PreFilter that returns Skip when the pod
# gives them nothing to check.
_PREEMPTION_INPUTS = {
    "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
    "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
    "InterPodAffinity", "DynamicResources",
}


def _preemption_depends_on(pod: dict, plugins: set[str]) -> bool:
    """A preemption result depends on a not-evaluated plugin unless that plugin
    skipped this pod at PreFilter (then it neither filters in the dry run nor,
    for DynamicResources, says more than "no new claims to deallocate")."""
    if "DefaultPreemption" in plugins:
        return True
    skipped = {st["plugin"] for st in pod.get("preFilter") or () if st["code"] == "Skip"}
    return any(p in _PREEMPTION_INPUTS and p not in skipped for p in plugins)


def compare(expected: dict, actual: dict, *, simulate: bool = False) -> list[str]:
    skip = set(actual.get("notEvaluated") or ())
    diffs: list[str] = []
    exp_pods = expected["pods"]
    act_pods = actual["pods"]
    if [p["pod"] for p in exp_pods] != [p["pod"] for p in act_pods]:
        return [f"pods differ: expected {[p['pod'] for p in exp_pods]}, got {[p['pod'] for p in act_pods]}"]
    diverged = False
    for ep, ap in zip(exp_pods, act_pods):
        if diverged:
            # An earlier pod whose outcome depends on a not-evaluated plugin
            # was placed differently: the cluster state differs from here on.
            diffs.extend(_compare_identity(ep, ap))
            continue
        diffs.extend(_compare_pod(ep, ap, skip, simulate))
        if simulate and _pod_depends_on(ep, skip) and _placement(ep) != _placement(ap):
            diverged = True
    return diffs


def _placement(pod: dict):
    """What a simulate step changes in the cluster: where the pod went and
    which pods it evicted."""
    victims = sorted(v["pod"] for v in ((pod.get("preemption") or {}).get("victims") or ()))
    return pod.get("placedNode"), victims


def _compare_identity(ep: dict, ap: dict) -> list[str]:
    return [
        f"pod {ep['pod']} {key}: expected {ep.get(key)!r}, got {ap.get(key)!r}"
        for key in ("uid", "priority", "schedulerName")
        if ep.get(key) != ap.get(key)
    ]


def _compare_pod(ep: dict, ap: dict, skip: set[str], simulate: bool) -> list[str]:
    name = ep["pod"]
    out: list[str] = _compare_identity(ep, ap)

    def diff(field, e, a):
        if e != a:
            out.append(f"pod {name} {field}: expected {e!r}, got {a!r}")

    decided = not _pod_depends_on(ep, skip)
    if decided:
        diff("status", ep["status"], ap["status"])
        diff("topNodes", ep["topNodes"], ap["topNodes"])
        diff("message", ep["message"], ap["message"])
        diff("selectedNode", ep["selectedNode"], ap["selectedNode"])
        if simulate:
            diff("placedNode", ep.get("placedNode"), ap.get("placedNode"))
        if ep.get("gate") or ap.get("gate"):
            diff("gate", ep.get("gate"), _strip((ap.get("gate") or None)))
        diff("preFilterResult", ep.get("preFilterResult"), ap.get("preFilterResult"))
        ep_pre, ap_pre = ep.get("preemption"), ap.get("preemption")
        if (ep_pre is None) != (ap_pre is None):
            diff("preemption", ep_pre, ap_pre)
        elif ep_pre is not None:
            for key in ("code", "message", "nominatedNode", "pdbViolations"):
                diff(f"preemption.{key}", ep_pre.get(key), ap_pre.get(key))
            ev = sorted((v["pod"], v["priority"]) for v in ep_pre.get("victims") or ())
            av = sorted((v["pod"], v["priority"]) for v in ap_pre.get("victims") or ())
            diff("preemption.victims", ev, av)
    pre_e = [(s["plugin"], s["code"], s["reasons"]) for s in ep.get("preFilter") or () if s["plugin"] not in skip]
    pre_a = [(s["plugin"], s["code"], s["reasons"]) for s in ap.get("preFilter") or () if s["plugin"] not in skip]
    if decided:
        diff("preFilter", pre_e, pre_a)

    if ep["status"] == "Error" or ep.get("gate"):
        if decided:
            diff("nodes", [n["name"] for n in ep["nodes"]], [n["name"] for n in ap["nodes"]])
        return out
    if not decided and not ap["nodes"]:
        return out
    en = {n["name"]: n for n in ep["nodes"]}
    an = {n["name"]: n for n in ap["nodes"]}
    diff("node names", sorted(en), sorted(an))
    # Scores depend on the feasible set (PreScore and NormalizeScore see only
    # feasible nodes): when a not-evaluated plugin changed that set, scores
    # cannot be compared.
    same_feasible = {n for n, v in en.items() if v.get("feasible")} == {n for n, v in an.items() if v.get("feasible")}
    for node_name in sorted(set(en) & set(an)):
        out.extend(_compare_node(name, en[node_name], an[node_name], skip, decided, decided or same_feasible))
    return out


def _strip(st):
    if st is None:
        return None
    return {k: v for k, v in st.items() if k != "details"}


def _compare_node(pod: str, en: dict, an: dict, skip: set[str], decided: bool, scores_comparable: bool = True) -> list[str]:
    out = []
    where = f"pod {pod} node {en['name']}"
    ef = {f["plugin"]: f for f in en.get("filters") or ()}
    af = {f["plugin"]: f for f in an.get("filters") or ()}
    if decided and [p for p in ef if p not in skip] != [p for p in af if p not in skip]:
        out.append(f"{where} filter plugins: expected {list(ef)}, got {list(af)}")
    for plugin, f in ef.items():
        if plugin in skip or plugin not in af:
            continue
        a = af[plugin]
        if (f["code"], sorted(f["reasons"])) != (a["code"], sorted(a["reasons"])):
            out.append(f"{where} filter {plugin}: expected {f['code']} {f['reasons']}, got {a['code']} {a['reasons']}")
    ff = en.get("firstFailure")
    if ff is None or all(p not in skip for p in ff.split(", ")):
        if ff != an.get("firstFailure") and (decided or an.get("firstFailure") not in skip):
            out.append(f"{where} firstFailure: expected {ff!r}, got {an.get('firstFailure')!r}")
    if decided:
        if en.get("feasible") != an.get("feasible"):
            out.append(f"{where} feasible: expected {en.get('feasible')}, got {an.get('feasible')}")
        es, as_ = en.get("status"), an.get("status")
        if es is not None or as_ is not None:
            if es is None or as_ is None or (es["code"], es["plugin"], sorted(es["reasons"])) != (
                as_["code"], as_["plugin"], sorted(as_["reasons"])):
                out.append(f"{where} status: expected {es}, got {as_}")
    e_scores = {s["plugin"]: s for s in en.get("scores") or ()}
    a_scores = {s["plugin"]: s for s in an.get("scores") or ()}
    if decided and (en.get("scores") is None) != (an.get("scores") is None):
        out.append(f"{where} scores: expected {'none' if en.get('scores') is None else 'scores'}, "
                   f"got {'none' if an.get('scores') is None else 'scores'}")
    if scores_comparable and en.get("scores") is not None and an.get("scores") is not None:
        for plugin, s in e_scores.items():
            if plugin in skip:
                continue
            a = a_scores.get(plugin)
            if a is None:
                out.append(f"{where} score {plugin}: missing")
                continue
            for key in ("raw", "normalized", "weight", "weighted"):
                if s[key] != a[key]:
                    out.append(f"{where} score {plugin} {key}: expected {s[key]}, got {a[key]}")
            if bool(s.get("skipped")) != bool(a.get("skipped")):
                out.append(f"{where} score {plugin} skipped: expected {bool(s.get('skipped'))}, got {bool(a.get('skipped'))}")
        if decided and en.get("totalScore") != an.get("totalScore"):
            out.append(f"{where} totalScore: expected {en.get('totalScore')}, got {an.get('totalScore')}")
    return out


def golden_simulate_steps():
    """(PodInfo, its PodResult) for every pod of every golden case, each
    case simulated in queue order with explanations settled."""
    from kschedx.commands.load import load_workload
    from kschedx.framework.dispatch import new_schedulers
    from kschedx.framework.simulation import Simulation

    for name in case_names():
        w = load_workload([str(GOLDEN / "cases" / f"{name}.yaml")])
        scheds = new_schedulers(w.cluster, tie_break="name", seed=None, features=V135)
        sim = Simulation(scheds)
        for pi in scheds.queue_order(list(w.pods)):
            yield pi, sim.step(pi, settle=lambda r: True)
