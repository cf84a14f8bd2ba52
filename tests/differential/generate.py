"""Random clusters for the differential tests, each a function of its seed.

`generate(seed)` returns a Case: the objects of a kschedx fixture (nodes,
bound and pending pods and everything the default plugins read) and, for
some seeds, a KubeSchedulerConfiguration. A case draws a few feature
groups (taints, pod affinity, spreading, volumes, DRA, preemption, ...) and
builds a small cluster around them: small so that a difference is easy to
read and quick to shrink, random so that the groups meet in combinations
nobody wrote by hand. Values are drawn from short lists that make the
interesting edges likely (a request equal to what is left, a taint the pod
half tolerates, a spread domain with no node, a claim with nothing left to
allocate).

Every object is one the API server would accept (the shrinker only removes
fields and objects, and keeps what it removes valid). Upstream orders some
things by Go map iteration or by chance; the generator keeps away from what
the oracle cannot make deterministic (docs/development.md, "The differential
tests").
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
HOST = "kubernetes.io/hostname"
GPU = "example.com/gpu"
DRIVER = "gpu.example.com"
CSI = "csi.example.com"

# "gates" is listed twice: drawn twice as often as another group (its
# cases are the only ones that leave the version's default gates).
GROUPS = (
    "extended", "allocatable", "taints", "nodeaffinity", "podaffinity", "spread", "defaultspread",
    "ports", "images", "volumes", "dra", "preemption", "gates", "nominated", "unschedulable",
    "runtimeclass", "sidecars", "config", "profiles", "replicas", "gates",
)

# Gates kschedx reproduces that the generated objects reach: a case of the
# "gates" group turns one or two of them away from their default.
# (StorageCapacityScoring is left out while kschedx's VolumeBinding has no
# Score: turned on, upstream scores by capacity and kschedx skips.)
GATES = (
    "DRADeviceTaints", "DRADeviceTaintRules", "DRAExtendedResource",
    "DRAPrioritizedList", "DRAAdminAccess", "VolumeLimitScaling", "NodeDeclaredFeatures",
    "PodLevelResources", "MatchLabelKeysInPodTopologySpread",
)
# Of those, the ones on by default in every supported version: a case turns them off.
GATES_ON = frozenset({"DRAPrioritizedList", "DRAAdminAccess", "PodLevelResources", "MatchLabelKeysInPodTopologySpread"})

# Off by default in every supported version; drawn apart from GATES (see
# _Generator.comparisons), so that adding it left the other cases unchanged.
COMPARISON_GATE = "TaintTolerationComparisonOperators"
# Mostly small integers that split the nodes; now and then a value that is
# no int64 in canonical form (it never compares) or the largest int64. A
# taint's value is a label value: it cannot start with a sign, so a node's
# number is never negative (a toleration's may be).
TAINT_NUMBERS = ["0", "1", "5", "5", "10", "20"]
ODD_TAINT_NUMBERS = ["007", "abc", "5.0", "9223372036854775807", "9223372036854775808"]
TOLERATION_NUMBERS = ["0", "1", "4", "5", "10", "-3", "9223372036854775807"]

IMAGES = {
    # name as pods write it -> (the names a node reports, size in bytes)
    "nginx:1.25": (["docker.io/library/nginx:1.25", "nginx:1.25"], 70_000_000),
    "redis:7": (["docker.io/library/redis:7"], 120_000_000),
    "busybox": (["docker.io/library/busybox:latest"], 4_000_000),
    "registry.example.com/ml/train:v2": (["registry.example.com/ml/train:v2"], 1_600_000_000),
    "registry.example.com/web:v1": (["registry.example.com/web:v1"], 300_000_000),
    "postgres:16": (["docker.io/library/postgres:16"], 450_000_000),
}

CPU = ["100m", "200m", "250m", "500m", "500m", "750m", "1", "1", "1500m", "2", "3", "4"]
SMALL_CPU = CPU[:8]
MEMORY = ["64Mi", "128Mi", "256Mi", "512Mi", "1Gi", "1Gi", "2Gi", "3Gi", "4Gi", "6Gi"]
SMALL_MEMORY = MEMORY[:7]
NODE_CPU = ["1", "2", "2", "4", "4", "8"]
NODE_MEMORY = ["2Gi", "4Gi", "4Gi", "8Gi", "16Gi"]

BASE_TIME = "2024-05-01T10:{:02d}:{:02d}Z"


def timestamp(i: int) -> str:
    return BASE_TIME.format((i // 60) % 60, i % 60)


@dataclass
class Case:
    seed: int
    groups: list[str]
    objects: list[dict]
    config: dict | None = None
    # Feature gates set otherwise than the version's defaults, on both sides;
    # the ones a version does not have, or locks, are left out for it.
    feature_gates: dict[str, bool] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def header(self) -> str:
        gates = ",".join(f"{k}={'true' if v else 'false'}" for k, v in sorted(self.feature_gates.items()))
        return (f"# differential case seed={self.seed}\n# groups={','.join(self.groups) or 'resources'}\n"
                + (f"# feature-gates={gates}\n" if gates else "") +
                f"# nodes={sum(1 for o in self.objects if o['kind'] == 'Node')} "
                f"pods={sum(1 for o in self.objects if o['kind'] == 'Pod')} objects={len(self.objects)}\n")


def generate(seed: int) -> Case:
    return _Generator(seed).case()


class _Generator:
    def __init__(self, seed: int):
        self.seed = seed
        self.r = random.Random(seed)
        self.objects: list[dict] = []
        self.groups: list[str] = []
        self.tick = 0
        self.nodes: list[dict] = []
        self.namespaces = ["default"]
        self.pending: list[dict] = []
        self.bound: list[dict] = []
        self.admin_access = False  # claims may ask for admin access (their namespace allows it)
        self.nic_class = False  # shared NICs exist: claims may ask for bandwidth

    # -- helpers -------------------------------------------------------------------

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    def pick(self, seq):
        return self.r.choice(list(seq))

    def some(self, seq, lo=1, hi=None):
        seq = list(seq)
        hi = len(seq) if hi is None else min(hi, len(seq))
        return self.r.sample(seq, self.r.randint(min(lo, hi), hi))

    def on(self, group: str) -> bool:
        return group in self.groups

    def next_time(self) -> str:
        self.tick += self.r.choice([0, 1, 1, 1, 7])
        return timestamp(self.tick)

    def add(self, obj: dict) -> dict:
        self.objects.append(obj)
        return obj

    # -- the case ------------------------------------------------------------------

    def case(self) -> Case:
        r = self.r
        n_groups = r.choice([1, 2, 2, 3, 3, 4, 5])
        self.groups = sorted(set(r.sample(GROUPS, n_groups)))
        if "profiles" in self.groups and "config" not in self.groups:
            self.groups = sorted(self.groups + ["config"])
        self.namespaces_()
        self.priority_classes()
        # A tenth of the cases are larger: more topology domains, more
        # preemption candidates, more pods to spread over.
        large = r.random() < 0.1
        n_nodes = r.choice([7, 8, 10, 12] if large else [1, 2, 3, 3, 4, 4, 5, 6])
        for i in range(n_nodes):
            self.nodes.append(self.add(self.node(i)))
        self.storage()
        self.dra_cluster()
        self.runtime_classes()
        n_bound = r.choice([0, 1, 2, 3, 4, 6, 8, 10] if not self.on("preemption") else [4, 6, 8, 10, 12])
        if large:
            n_bound = r.choice([12, 20, 30])
        for i in range(n_bound):
            node = self.pick(self.nodes)
            self.bound.append(self.pod(f"run-{i}", node=node["metadata"]["name"]))
        n_pending = r.choice([1, 1, 2, 2, 3, 4])
        for i in range(n_pending):
            self.pending.append(self.pod(f"p{i}"))
        if self.on("replicas"):
            # A workload's replicas: copies of one pending pod, one after
            # another in the queue (simulate places each where the last left).
            template = self.pending[0]
            shareable = not template["spec"].get("volumes") and not template["spec"].get("resourceClaims")
            if shareable:
                for i in range(r.choice([2, 3, 5, 8])):
                    copy_ = copy.deepcopy(template)
                    copy_["metadata"]["name"] = f"{template['metadata']['name']}-r{i}"
                    if "creationTimestamp" in copy_["metadata"]:
                        copy_["metadata"]["creationTimestamp"] = self.next_time()
                    self.pending.append(copy_)
        for pod in self.bound + self.pending:
            self.add(pod)
        self.owners()
        self.pdbs()
        config = self.config() if self.on("config") else None
        gates = {}
        if self.on("gates"):
            for gate in r.sample(GATES, r.choice([1, 1, 2])):
                gates[gate] = gate not in GATES_ON
                if gate == "VolumeLimitScaling" and r.random() < 0.3:
                    gates[gate] = False
            if gates.get("DRADeviceTaintRules"):
                gates["DRADeviceTaints"] = True  # its dependency
        self.comparisons(gates)
        return Case(self.seed, self.groups, self.objects, config, gates)

    # -- Lt and Gt tolerations -------------------------------------------------------

    def comparisons(self, gates: dict) -> None:
        """Numeric taints and `Lt`/`Gt` tolerations, in some cases of the
        "taints" group and in every case that turns COMPARISON_GATE on (a
        quarter of the "gates" cases). Drawn from a generator of their own,
        so that the cases without them are the ones earlier seeds gave.

        The API server stores such tolerations only with the gate on (its
        own --feature-gates); kube-scheduler's may be off, and then they
        tolerate nothing: both sides are compared. A taint's value is any
        label value, numeric or not ("007", past int64); a toleration's is
        an integer in canonical form, as the API server requires."""
        r = random.Random(f"{self.seed}/comparison")
        on = self.on("gates") and r.random() < 0.25
        if not on and not (self.on("taints") and r.random() < 0.3):
            return
        if on:
            gates[COMPARISON_GATE] = True
        for node in self.nodes:
            if r.random() < 0.7:
                taints = node.setdefault("spec", {}).setdefault("taints", [])
                effect = r.choice(["NoSchedule", "NoSchedule", "PreferNoSchedule", "NoExecute"])
                value = r.choice(ODD_TAINT_NUMBERS if r.random() < 0.15 else TAINT_NUMBERS)
                if not any(t["key"] == "tier" and t["effect"] == effect for t in taints):
                    taints.append({"key": "tier", "value": value, "effect": effect})
        for i, pod in enumerate(self.pending):
            if r.random() < 0.75 or (on and i == 0):
                tol = {"key": "tier", "operator": r.choice(["Lt", "Gt"]), "value": r.choice(TOLERATION_NUMBERS)}
                if r.random() < 0.5:
                    tol["effect"] = r.choice(["NoSchedule", "PreferNoSchedule", "NoExecute"])
                pod["spec"].setdefault("tolerations", []).append(tol)

    # -- namespaces, classes -------------------------------------------------------

    def namespaces_(self):
        if self.on("podaffinity") or self.chance(0.3):
            self.namespaces = ["default", "team-a", "team-b"]
            labels = {"team-a": {"team": "a", "env": "prod"}, "team-b": {"team": "b"}}
            for name in self.namespaces:
                if name != "default" and self.chance(0.15):
                    continue  # implicit: exists without labels
                ns = {"apiVersion": "v1", "kind": "Namespace",
                      "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name,
                                                            **labels.get(name, {})}}}
                self.add(ns)

    def priority_classes(self):
        if not self.on("preemption"):
            return
        for name, value in (("low", 100), ("mid", 1000), ("high", 10000)):
            pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                  "metadata": {"name": name}, "value": value}
            if name == "high" and self.chance(0.15):
                pc["preemptionPolicy"] = "Never"
            if name == "low" and self.chance(0.2):
                pc["globalDefault"] = True
            self.add(pc)

    def runtime_classes(self):
        if not self.on("runtimeclass"):
            return
        rc = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "kata"},
              "handler": "kata", "overhead": {"podFixed": {"cpu": self.pick(["100m", "250m", "1"]),
                                                           "memory": self.pick(["64Mi", "256Mi"])}}}
        if self.chance(0.5):
            rc["scheduling"] = {"nodeSelector": {"sandbox": "kata"}}
            if self.chance(0.5):
                rc["scheduling"]["tolerations"] = [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}]
        self.add(rc)
        self.add({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "runc"},
                  "handler": "runc"})

    # -- nodes ---------------------------------------------------------------------

    def node(self, i: int) -> dict:
        name = f"n{i}"
        labels = {HOST: name, "kubernetes.io/os": "linux"}
        if self.chance(0.85):
            labels[ZONE] = self.pick(["z1", "z1", "z2", "z3"])
            if self.chance(0.5):
                labels[REGION] = "r1" if labels[ZONE] != "z3" else "r2"
        if self.chance(0.5):
            labels["disk"] = self.pick(["ssd", "hdd"])
        if self.chance(0.4):
            labels["pool"] = self.pick(["a", "b"])
        if self.chance(0.3):
            labels["cores"] = self.pick(["2", "8", "16"])
        if self.on("runtimeclass") and self.chance(0.6):
            labels["sandbox"] = "kata"
        cpu, memory = self.pick(NODE_CPU), self.pick(NODE_MEMORY)
        capacity = {"cpu": cpu, "memory": memory, "pods": self.pick(["110", "110", "110", "3", "5"])}
        if self.on("extended"):
            if self.chance(0.6):
                capacity[GPU] = str(self.pick([0, 1, 2, 4]))
            if self.chance(0.5):
                capacity["hugepages-2Mi"] = self.pick(["0", "128Mi", "1Gi"])
            if self.chance(0.5):
                capacity["ephemeral-storage"] = self.pick(["10Gi", "50Gi"])
        status = {"capacity": capacity}
        if self.on("allocatable") and self.chance(0.8):
            alloc = dict(capacity)
            alloc["cpu"] = self.pick({"1": ["900m", "1"], "2": ["1900m", "1500m"], "4": ["3800m", "3"],
                                      "8": ["7500m", "6"]}[cpu])
            alloc["memory"] = self.pick({"2Gi": ["1536Mi"], "4Gi": ["3Gi", "3500Mi"], "8Gi": ["7Gi"],
                                         "16Gi": ["15Gi", "14Gi"]}[memory])
            status["allocatable"] = alloc
        if self.on("images") and self.chance(0.8):
            status["images"] = [{"names": IMAGES[img][0], "sizeBytes": IMAGES[img][1]}
                                for img in self.some(IMAGES, 1, 4)]
        node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                "spec": {}, "status": status}
        taints = []
        if self.on("taints"):
            for _ in range(self.pick([0, 1, 1, 2])):
                taints.append(self.taint())
        if self.on("unschedulable") and self.chance(0.4):
            node["spec"]["unschedulable"] = True
            if self.chance(0.7):
                taints.append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"})
        if self.on("runtimeclass") and labels.get("sandbox") and self.chance(0.5):
            taints.append({"key": "sandbox", "value": "kata", "effect": "NoSchedule"})
        if taints:
            seen, unique = set(), []
            for t in taints:  # the API server refuses two taints of one key and effect
                if (t["key"], t["effect"]) not in seen:
                    seen.add((t["key"], t["effect"]))
                    unique.append(t)
            node["spec"]["taints"] = unique
        if not node["spec"]:
            del node["spec"]
        return node

    def taint(self) -> dict:
        key = self.pick(["dedicated", "dedicated", "gpu", "maintenance", "node.kubernetes.io/not-ready"])
        t = {"key": key, "effect": self.pick(["NoSchedule", "NoSchedule", "PreferNoSchedule", "NoExecute"])}
        if key != "node.kubernetes.io/not-ready" and self.chance(0.7):
            t["value"] = self.pick(["infra", "batch", "true"])
        return t

    # -- pods ----------------------------------------------------------------------

    def requests(self, big: bool = False) -> dict:
        req = {}
        if self.chance(0.85):
            req["cpu"] = self.pick(["1", "1", "1500m", "2"] if big else CPU if self.chance(0.3) else SMALL_CPU)
        if self.chance(0.75):
            req["memory"] = self.pick(["1Gi", "2Gi", "3Gi"] if big else MEMORY if self.chance(0.3) else SMALL_MEMORY)
        if self.on("extended"):
            if self.chance(0.35):
                req[GPU] = str(self.pick([1, 1, 2, 3]))
            if self.chance(0.25):
                req["hugepages-2Mi"] = self.pick(["64Mi", "128Mi", "512Mi"])
            if self.chance(0.25):
                req["ephemeral-storage"] = self.pick(["1Gi", "20Gi"])
            if "hugepages-2Mi" in req and "cpu" not in req and "memory" not in req:
                # The API server refuses hugepages without cpu or memory
                # (no draw: every other case stays as it was).
                req["memory"] = "64Mi"
        return req

    def container(self, name: str, big: bool = False) -> dict:
        c = {"name": name, "image": self.pick(list(IMAGES) if self.on("images") else ["busybox", "nginx:1.25"])}
        req = self.requests(big)
        if req:
            style = self.r.random()
            needs_both = any(k.startswith("hugepages-") or k == GPU for k in req)
            if style < 0.7 or needs_both and style < 0.85:
                c["resources"] = {"requests": req}
                if needs_both:
                    c["resources"]["limits"] = {k: v for k, v in req.items() if k.startswith("hugepages-") or k == GPU}
            elif needs_both:
                c["resources"] = {"limits": req}
            else:
                c["resources"] = {"limits": req}  # requests default to limits
        if self.on("ports") and self.chance(0.5):
            port = {"containerPort": 80, "hostPort": self.pick([8080, 8080, 9090])}
            if self.chance(0.3):
                port["protocol"] = self.pick(["UDP", "TCP"])
            if self.chance(0.3):
                port["hostIP"] = self.pick(["127.0.0.1", "0.0.0.0", "10.0.0.1"])
            c["ports"] = [port]
        return c

    def labels(self) -> dict:
        labels = {"app": self.pick(["web", "web", "db", "cache"])}
        if self.chance(0.5):
            labels["tier"] = self.pick(["fe", "be"])
        if self.chance(0.4):
            labels["version"] = self.pick(["v1", "v2"])
        return labels

    def pod(self, name: str, node: str | None = None) -> dict:
        ns = self.pick(self.namespaces) if len(self.namespaces) > 1 and self.chance(0.5) else "default"
        meta = {"name": name, "namespace": ns, "labels": self.labels()}
        if self.chance(0.9):
            meta["creationTimestamp"] = self.next_time()
        # With preemption in the case, pending pods ask for more: some fit
        # only once lower-priority pods go.
        big = self.on("preemption") and self.chance(0.5 if node is None else 0.3)
        spec: dict = {"containers": [self.container("c", big)]}
        if self.chance(0.2):
            spec["containers"].append(self.container("side"))
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {}}
        if node is not None:
            spec["nodeName"] = node
            pod["status"] = {"phase": "Running"}
            if self.chance(0.7):
                pod["status"]["startTime"] = self.next_time()
            if self.chance(0.06):
                # being deleted: still on its node, no longer counted by spreading or affinity
                meta["deletionTimestamp"] = "2024-05-01T11:00:00Z"
            elif self.chance(0.04):
                pod["status"]["phase"] = self.pick(["Succeeded", "Failed"])  # gone for the scheduler
        else:
            pod["status"] = {"phase": "Pending"}
        if self.on("ports") and self.chance(0.15):
            # containerPorts of a host-network pod are host ports (defaulting)
            spec["hostNetwork"] = True
            spec["containers"][0].setdefault("ports", [{"containerPort": self.pick([8080, 9100])}])
            for port in spec["containers"][0]["ports"]:
                port.pop("hostPort", None)
                port.pop("hostIP", None)
        if self.chance(0.05):
            # pod-level resources: the pod's requests, whatever its containers ask
            spec["resources"] = {"requests": {"cpu": self.pick(["1", "2", "3"]), "memory": self.pick(["1Gi", "4Gi"])}}
            for c in spec["containers"]:
                if c.get("resources", {}).get("requests", {}).get("cpu") or c.get("resources", {}).get("limits"):
                    c.pop("resources", None)
        if self.on("sidecars") and self.chance(0.6):
            spec["initContainers"] = self.init_containers()
        if self.on("taints") and self.chance(0.6):
            spec["tolerations"] = [self.toleration() for _ in range(self.pick([1, 1, 2]))]
        if self.on("nodeaffinity") and self.chance(0.7):
            self.node_affinity(spec)
        if self.on("podaffinity") and self.chance(0.6):
            self.pod_affinity(spec, meta["labels"])
        if self.on("spread") and self.chance(0.6):
            self.spread(spec, meta["labels"])
        if self.on("preemption"):
            self.priority(spec, bound=node is not None)
        if self.on("runtimeclass") and self.chance(0.5):
            spec["runtimeClassName"] = self.pick(["kata", "kata", "runc"])
        if node is None:
            if self.on("gates") and self.chance(0.4):
                spec["schedulingGates"] = [{"name": "example.com/wait"}]
            if self.on("nominated") and self.nodes and self.chance(0.5):
                pod["status"]["nominatedNodeName"] = self.pick(self.nodes)["metadata"]["name"]
            if self.on("profiles") and self.chance(0.5):
                spec["schedulerName"] = self.pick(["bin-packing", "bin-packing", "other-scheduler"])
        if self.on("volumes") and self.chance(0.6):
            self.pod_volumes(pod)
        if self.on("dra") and self.chance(0.6):
            self.pod_claims(pod)
        return pod

    def init_containers(self) -> list[dict]:
        out = []
        for i in range(self.pick([1, 1, 2])):
            c = {"name": f"init-{i}", "image": "busybox"}
            req = {}
            if self.chance(0.8):
                req["cpu"] = self.pick(CPU)
            if self.chance(0.6):
                req["memory"] = self.pick(MEMORY)
            if req:
                c["resources"] = {"requests": req}
            if self.chance(0.6):
                c["restartPolicy"] = "Always"  # a sidecar
            elif self.chance(0.3) and "resources" in c:
                c["resources"]["requests"]["cpu"] = self.pick(["3", "6"])  # bigger than the containers
            out.append(c)
        return out

    def toleration(self) -> dict:
        op = self.pick(["Equal", "Exists", "Exists"])
        t: dict = {"operator": op}
        if op == "Equal" or self.chance(0.8):
            t["key"] = self.pick(["dedicated", "dedicated", "gpu", "maintenance", "node.kubernetes.io/not-ready"])
        if op == "Equal":
            t["value"] = self.pick(["infra", "batch", "true"])
        if self.chance(0.6):
            t["effect"] = self.pick(["NoSchedule", "PreferNoSchedule", "NoExecute"])
            if t["effect"] == "NoExecute" and self.chance(0.5):
                t["tolerationSeconds"] = self.pick([0, 60])
        if "key" not in t and t["operator"] == "Exists" and "effect" not in t and self.chance(0.5):
            t["key"] = "dedicated"  # tolerate-everything stays rare
        return t

    # -- node affinity ---------------------------------------------------------------

    def node_requirement(self) -> dict:
        key = self.pick([ZONE, ZONE, "disk", "pool", "cores", HOST, REGION])
        values = {ZONE: ["z1", "z2", "z3", "z9"], "disk": ["ssd", "hdd"], "pool": ["a", "b"],
                  REGION: ["r1", "r2"], HOST: [n["metadata"]["name"] for n in self.nodes] or ["n0"],
                  "cores": ["4", "8"]}[key]
        ops = ["In", "In", "NotIn", "Exists", "DoesNotExist"] + (["Gt", "Lt"] if key == "cores" else [])
        op = self.pick(ops)
        req = {"key": key, "operator": op}
        if op in ("In", "NotIn"):
            req["values"] = sorted(self.some(values, 1, 2))
        elif op in ("Gt", "Lt"):
            req["values"] = [self.pick(values)]
        return req

    def node_term(self) -> dict:
        term: dict = {}
        if self.chance(0.85) or not self.nodes:
            term["matchExpressions"] = [self.node_requirement() for _ in range(self.pick([1, 1, 2]))]
        if self.chance(0.2) and self.nodes:
            term["matchFields"] = [{"key": "metadata.name", "operator": self.pick(["In", "NotIn"]),
                                    "values": [self.pick(self.nodes)["metadata"]["name"]]}]
        return term

    def node_affinity(self, spec: dict) -> None:
        if self.chance(0.4):
            sel = {}
            for _ in range(self.pick([1, 1, 2])):
                key = self.pick([ZONE, "disk", "pool"])
                sel[key] = self.pick({ZONE: ["z1", "z2"], "disk": ["ssd", "hdd"], "pool": ["a", "b"]}[key])
            spec["nodeSelector"] = sel
        na = {}
        if self.chance(0.6):
            na["requiredDuringSchedulingIgnoredDuringExecution"] = {
                "nodeSelectorTerms": [self.node_term() for _ in range(self.pick([1, 1, 2]))]}
        if self.chance(0.6):
            na["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": self.pick([1, 10, 50, 100]), "preference": {"matchExpressions": [self.node_requirement()]}}
                for _ in range(self.pick([1, 2]))]
        if na:
            spec.setdefault("affinity", {})["nodeAffinity"] = na

    # -- pod affinity ----------------------------------------------------------------

    def label_selector(self, own: dict) -> dict:
        key = self.pick(["app", "app", "tier"])
        value = own.get(key) if self.chance(0.5) else None
        value = value or self.pick({"app": ["web", "db", "cache"], "tier": ["fe", "be"]}[key])
        if self.chance(0.6):
            return {"matchLabels": {key: value}}
        op = self.pick(["In", "In", "NotIn", "Exists", "DoesNotExist"])
        req = {"key": key, "operator": op}
        if op in ("In", "NotIn"):
            req["values"] = [value]
        return {"matchExpressions": [req]}

    def affinity_term(self, own: dict) -> dict:
        term = {"labelSelector": self.label_selector(own),
                "topologyKey": self.pick([HOST, HOST, ZONE, ZONE, REGION, "pool"])}
        x = self.r.random()
        if x < 0.2:
            term["namespaces"] = self.some(self.namespaces, 1, 2)
        elif x < 0.45 and len(self.namespaces) > 1:
            term["namespaceSelector"] = self.pick([
                {}, {"matchLabels": {"team": "a"}},
                {"matchExpressions": [{"key": "team", "operator": "NotIn", "values": ["a"]}]},
                {"matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]},
                {"matchExpressions": [{"key": "team", "operator": "Exists"}]},
            ])
            if self.chance(0.3):
                term["namespaces"] = ["default"]
        used = _selector_keys(term["labelSelector"])
        if self.chance(0.25):
            keys = [k for k in ("version", "tier", "app") if k not in used]
            if keys:
                k = self.pick(keys)
                term[self.pick(["matchLabelKeys", "mismatchLabelKeys"])] = [k]
        return term

    def pod_affinity(self, spec: dict, own: dict) -> None:
        aff = {}
        for kind in ("podAffinity", "podAntiAffinity"):
            if not self.chance(0.55):
                continue
            a = {}
            if self.chance(0.6):
                a["requiredDuringSchedulingIgnoredDuringExecution"] = [self.affinity_term(own)]
            if self.chance(0.6):
                a["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {"weight": self.pick([1, 5, 50, 100]), "podAffinityTerm": self.affinity_term(own)}
                    for _ in range(self.pick([1, 2]))]
            if a:
                aff[kind] = a
        if aff:
            spec.setdefault("affinity", {}).update(aff)

    # -- spreading -------------------------------------------------------------------

    def spread(self, spec: dict, own: dict) -> None:
        out = []
        for key in self.some([ZONE, HOST, "pool"], 1, 2):
            c = {"maxSkew": self.pick([1, 1, 2, 3]), "topologyKey": key,
                 "whenUnsatisfiable": self.pick(["DoNotSchedule", "DoNotSchedule", "ScheduleAnyway"]),
                 "labelSelector": self.label_selector(own) if self.chance(0.4) else {"matchLabels": {"app": own["app"]}}}
            if c["whenUnsatisfiable"] == "DoNotSchedule" and self.chance(0.3):
                c["minDomains"] = self.pick([2, 3, 5])
            if self.chance(0.3):
                c["nodeAffinityPolicy"] = self.pick(["Honor", "Ignore"])
            if self.chance(0.3):
                c["nodeTaintsPolicy"] = self.pick(["Honor", "Ignore"])
            if self.chance(0.3):
                keys = [k for k in ("version", "tier", "pod-template-hash") if k not in _selector_keys(c["labelSelector"])]
                if keys:
                    c["matchLabelKeys"] = [self.pick(keys)]
            out.append(c)
        spec["topologySpreadConstraints"] = out

    def owners(self) -> None:
        """Services, ReplicaSets and StatefulSets over some pods: the system
        default spreading (and the config's default constraints) reads them."""
        if not (self.on("defaultspread") or self.on("spread") and self.chance(0.5)):
            return
        for app in sorted({p["metadata"]["labels"]["app"] for p in self.bound + self.pending}):
            pods = [p for p in self.bound + self.pending if p["metadata"]["labels"]["app"] == app]
            ns = pods[0]["metadata"]["namespace"]
            x = self.r.random()
            if x < 0.4:
                self.add({"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"svc-{app}", "namespace": ns},
                          "spec": {"selector": {"app": app}, "ports": [{"port": 80}]}})
            elif x < 0.8:
                kind = self.pick(["ReplicaSet", "ReplicaSet", "StatefulSet"])
                owner = {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": f"{app}-set", "namespace": ns},
                         "spec": {"selector": {"matchLabels": {"app": app}}, "replicas": len(pods),
                                  "template": {"metadata": {"labels": {"app": app}},
                                               "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}
                if kind == "StatefulSet":
                    owner["spec"]["serviceName"] = app
                self.add(owner)
                for p in pods:
                    if p["metadata"]["namespace"] == ns and self.chance(0.8):
                        p["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": kind,
                                                             "name": f"{app}-set", "uid": _uid(kind, ns, f"{app}-set"),
                                                             "controller": True}]
                        if kind == "ReplicaSet" and self.chance(0.5):
                            p["metadata"]["labels"]["pod-template-hash"] = "5d8f"

    # -- priority, preemption ----------------------------------------------------------

    def priority(self, spec: dict, bound: bool) -> None:
        x = self.r.random()
        if x < 0.6:
            spec["priorityClassName"] = self.pick(["low", "low", "low", "mid"] if bound else ["low", "mid", "high", "high"])
        elif x < 0.75:
            spec["priority"] = self.pick([0, 50, 500] if bound else [50, 500, 5000])
        if self.chance(0.08):
            spec["preemptionPolicy"] = self.pick(["Never", "PreemptLowerPriority"])

    def pdbs(self) -> None:
        if not self.on("preemption") or not self.chance(0.6):
            return
        for app in self.some(["web", "db"], 1, 2):
            ns = self.pick(self.namespaces)
            pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                   "metadata": {"name": f"pdb-{app}", "namespace": ns},
                   "spec": {"selector": {"matchLabels": {"app": app}}, "minAvailable": 1},
                   "status": {"disruptionsAllowed": self.pick([0, 0, 1, 2]), "currentHealthy": 2,
                              "desiredHealthy": 1, "expectedPods": 2}}
            self.add(pdb)

    # -- storage -----------------------------------------------------------------------

    def storage(self) -> None:
        if not self.on("volumes"):
            return
        self.add({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local"},
                  "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"})
        wffc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "csi-wffc"},
                "provisioner": CSI, "volumeBindingMode": "WaitForFirstConsumer"}
        if self.chance(0.4):
            wffc["allowedTopologies"] = [{"matchLabelExpressions": [
                {"key": ZONE, "values": sorted(self.some(["z1", "z2", "z3"], 1, 2))}]}]
        self.add(wffc)
        self.add({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "csi-now"},
                  "provisioner": CSI, "volumeBindingMode": "Immediate"})
        if self.nodes and self.chance(0.3):
            wffc.setdefault("allowedTopologies", []).append({"matchLabelExpressions": [
                {"key": HOST, "values": [self.pick(self.nodes)["metadata"]["name"]]}]})
        capacity_tracked = self.chance(0.4)
        driver = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": CSI},
                  "spec": {"attachRequired": True, "storageCapacity": capacity_tracked}}
        if self.chance(0.3):
            driver["spec"]["preventPodSchedulingIfMissing"] = True
        self.add(driver)
        if capacity_tracked:
            for zone in self.some(["z1", "z2", "z3"], 1, 3):
                self.add({"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                          "metadata": {"name": f"cap-{zone}", "namespace": "default"},
                          "storageClassName": "csi-wffc",
                          "nodeTopology": {"matchLabels": {ZONE: zone}},
                          "capacity": self.pick(["1Gi", "10Gi", "100Gi"]),
                          **({"maximumVolumeSize": self.pick(["5Gi", "50Gi"])} if self.chance(0.4) else {})})
        for node in self.nodes:
            name = node["metadata"]["name"]
            if self.chance(0.8):
                drv = {"name": CSI, "nodeID": f"{name}-id", "topologyKeys": [ZONE]}
                if self.chance(0.6):
                    drv["allocatable"] = {"count": self.pick([0, 1, 1, 2, 3])}
                self.add({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": name},
                          "spec": {"drivers": [drv]}})
            if self.chance(0.5):  # a local PV on the node
                self.pv(f"local-{name}", "local", {"local": {"path": "/mnt/disk"}},
                        [{"key": HOST, "operator": "In", "values": [name]}])
        for zone in self.some(["z1", "z2", "z3"], 0, 2):  # zonal CSI PVs, with the labels VolumeZone reads
            self.pv(f"zonal-{zone}", "csi-wffc", {"csi": {"driver": CSI, "volumeHandle": f"vol-{zone}"}},
                    [{"key": ZONE, "operator": "In", "values": [zone]}], labels={ZONE: zone})
        if self.chance(0.3):  # an in-tree EBS volume (counted as the CSI driver it migrates to)
            self.pv("ebs-1", "csi-wffc", {"awsElasticBlockStore": {"volumeID": "vol-ebs-1"}},
                    [{"key": ZONE, "operator": "In", "values": ["z1"]}], labels={ZONE: "z1"})
            for node in self.nodes:
                for csinode in (o for o in self.objects if o["kind"] == "CSINode"
                                and o["metadata"]["name"] == node["metadata"]["name"]):
                    if self.chance(0.5):
                        csinode["spec"]["drivers"].append({"name": "ebs.csi.aws.com", "nodeID": "i-1",
                                                           "allocatable": {"count": self.pick([1, 2])}})
        if self.chance(0.25) and self.nodes:
            node = self.pick(self.nodes)["metadata"]["name"]
            zonal = [o for o in self.objects if o["kind"] == "PersistentVolume" and "csi" in o["spec"]]
            if zonal:
                self.add({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                          "metadata": {"name": f"attach-{node}"},
                          "spec": {"attacher": CSI, "nodeName": node,
                                   "source": {"persistentVolumeName": self.pick(zonal)["metadata"]["name"]}},
                          "status": {"attached": True}})
        self.claims: list[str] = []

    def pv(self, name, sc, source, match, labels=None):
        pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
              "spec": {"capacity": {"storage": self.pick(["5Gi", "10Gi", "20Gi"])},
                       "accessModes": [self.pick(["ReadWriteOnce", "ReadWriteOnce", "ReadWriteOncePod"])],
                       "storageClassName": sc, "persistentVolumeReclaimPolicy": "Retain",
                       "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": match}]}}, **source},
              "status": {"phase": "Available"}}
        if labels and self.chance(0.7):
            pv["metadata"]["labels"] = labels
        self.add(pv)

    def pod_volumes(self, pod: dict) -> None:
        ns = pod["metadata"]["namespace"]
        volumes = []
        for i in range(self.pick([1, 1, 2])):
            kind = self.pick(["new-wffc", "new-local", "new-now", "bound", "bound", "missing", "shared",
                              "ephemeral", "in-tree"])
            if kind == "in-tree":
                volumes.append({"name": f"v{i}", **self.pick([
                    {"gcePersistentDisk": {"pdName": self.pick(["disk-1", "disk-2"])}},
                    {"awsElasticBlockStore": {"volumeID": self.pick(["vol-a", "vol-ebs-1"])}},
                    {"awsElasticBlockStore": {"volumeID": "vol-a", "readOnly": True}},
                ])})
                continue
            if kind == "ephemeral":
                name = f"{pod['metadata']['name']}-v{i}"
                spec = {"accessModes": ["ReadWriteOnce"], "storageClassName": self.pick(["csi-wffc", "local"]),
                        "resources": {"requests": {"storage": "1Gi"}}}
                volumes.append({"name": f"v{i}", "ephemeral": {"volumeClaimTemplate": {"spec": spec}}})
                if self.chance(0.85):  # the ephemeral volume controller made its claim
                    pvc = self.pvc(ns, name, spec["storageClassName"], spec["accessModes"])
                    pvc["spec"]["resources"] = spec["resources"]
                    if self.chance(0.9):
                        pvc["metadata"]["ownerReferences"] = [{
                            "apiVersion": "v1", "kind": "Pod", "name": pod["metadata"]["name"],
                            "uid": _uid("Pod", ns, pod["metadata"]["name"]), "controller": True}]
                continue
            claim = None
            if kind == "shared":
                same_ns = [c for c in self.objects if c["kind"] == "PersistentVolumeClaim"
                           and c["metadata"]["namespace"] == ns]
                if same_ns:
                    claim = self.pick(same_ns)["metadata"]["name"]
                else:
                    kind = "new-wffc"
            if claim is None:
                claim = f"{pod['metadata']['name']}-data-{i}"
            if kind == "missing":
                pass
            elif kind == "bound":
                pvs = [o for o in self.objects if o["kind"] == "PersistentVolume" and "claimRef" not in o["spec"]]
                if not pvs:
                    kind = "new-wffc"
                else:
                    pv = self.pick(pvs)
                    pv["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": ns, "name": claim,
                                              "uid": _uid("PersistentVolumeClaim", ns, claim)}
                    pv["status"] = {"phase": "Bound"}
                    pvc = self.pvc(ns, claim, pv["spec"]["storageClassName"], pv["spec"]["accessModes"])
                    pvc["spec"]["volumeName"] = pv["metadata"]["name"]
                    pvc["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
                    pvc["status"] = {"phase": "Bound", "accessModes": pv["spec"]["accessModes"],
                                     "capacity": pv["spec"]["capacity"]}
            if kind.startswith("new"):
                sc = {"new-wffc": "csi-wffc", "new-local": "local", "new-now": "csi-now"}[kind]
                self.pvc(ns, claim, sc, [self.pick(["ReadWriteOnce", "ReadWriteOnce", "ReadWriteOncePod"])])
            volumes.append({"name": f"v{i}", "persistentVolumeClaim": {"claimName": claim}})
        pod["spec"]["volumes"] = volumes

    def pvc(self, ns, name, sc, modes) -> dict:
        pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
               "metadata": {"name": name, "namespace": ns},
               "spec": {"accessModes": list(modes), "storageClassName": sc,
                        "resources": {"requests": {"storage": self.pick(["1Gi", "5Gi", "10Gi", "30Gi"])}}},
               "status": {"phase": "Pending"}}
        self.add(pvc)
        return pvc

    # -- dynamic resource allocation ------------------------------------------------------

    def dra_cluster(self) -> None:
        if not self.on("dra"):
            return
        if self.chance(0.2):
            # Admin access is allowed in a namespace with this label only (the
            # API server refuses such claims elsewhere): only pods of "default" ask.
            default = next((o for o in self.objects if o["kind"] == "Namespace"
                            and o["metadata"]["name"] == "default"), None)
            if default is None:
                default = self.add({"apiVersion": "v1", "kind": "Namespace",
                                    "metadata": {"name": "default", "labels": {"kubernetes.io/metadata.name": "default"}}})
            default["metadata"]["labels"]["resource.kubernetes.io/admin-access"] = "true"
            self.admin_access = True
        gpu_class = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                     "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}
        if self.on("extended") and self.chance(0.5):
            # DRAExtendedResource: example.com/gpu requests served by this class's devices
            gpu_class["spec"]["extendedResourceName"] = GPU
        self.add(gpu_class)
        self.add({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "big-gpu"},
                  "spec": {"selectors": [{"cel": {"expression":
                      f'device.driver == "{DRIVER}" && '
                      f'device.capacity["{DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0'}}]}})
        for node in self.nodes:
            if not self.chance(0.6):
                continue
            name = node["metadata"]["name"]
            devices = []
            for i in range(self.pick([1, 2, 2, 4])):
                dev = {"name": f"gpu-{i}",
                       "attributes": {"model": {"string": self.pick(["a100", "a100", "l4"])}, "index": {"int": i}},
                       "capacity": {"memory": {"value": self.pick(["24Gi", "40Gi", "80Gi"])}}}
                devices.append(dev)
            for dev in devices:
                if self.chance(0.12):
                    dev["taints"] = [{"key": "gpu.example.com/unhealthy", "value": "true",
                                      "effect": self.pick(["NoSchedule", "NoExecute"])}]
            count = 1 if self.chance(0.9) else 2  # a pool whose second slice has not been published yet
            self.add({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                      "metadata": {"name": f"{name}-gpus"},
                      "spec": {"driver": DRIVER, "nodeName": name,
                               "pool": {"name": name, "generation": 1, "resourceSliceCount": count},
                               "devices": devices}})
            if self.chance(0.2):
                # DRAPartitionableDevices (v1.36): partitions of one GPU that
                # draw on its shared memory counter, in a pool of two slices
                # (the counters in one, the devices in the other).
                pool = {"name": f"{name}-parts", "generation": 1, "resourceSliceCount": 2}
                self.add({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                          "metadata": {"name": f"{name}-parts-counters"},
                          "spec": {"driver": DRIVER, "nodeName": name, "pool": dict(pool),
                                   "sharedCounters": [{"name": "gpu-mem",
                                                       "counters": {"memory": {"value": "40Gi"}}}]}})
                parts = []
                # (with an index like the other GPUs: a selector reading it would
                # fail on the first device without one, and v1.35 visits
                # pools in Go map order, a random first device)
                for i, (part, size) in enumerate((("whole", "40Gi"), ("half-0", "20Gi"), ("half-1", "20Gi"),
                                                  ("third", "15Gi"))):
                    parts.append({"name": part, "attributes": {"model": {"string": "a100"}, "index": {"int": 10 + i}},
                                  "capacity": {"memory": {"value": size}},
                                  "consumesCounters": [{"counterSet": "gpu-mem",
                                                        "counters": {"memory": {"value": size}}}]})
                self.add({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                          "metadata": {"name": f"{name}-parts"},
                          "spec": {"driver": DRIVER, "nodeName": name, "pool": dict(pool), "devices": parts}})
            if self.chance(0.2):
                # DRAConsumableCapacity (v1.36): a NIC several claims share,
                # each taking some of its bandwidth.
                self.add({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                          "metadata": {"name": f"{name}-shared-nics"},
                          "spec": {"driver": "nic.example.com", "nodeName": name,
                                   "pool": {"name": f"{name}-shared", "generation": 1, "resourceSliceCount": 1},
                                   "devices": [{"name": "nic-shared", "allowMultipleAllocations": True,
                                                "attributes": {"model": {"string": "cx7"}},
                                                "capacity": {"bandwidth": {"value": "100G", "requestPolicy": {
                                                    "default": "10G",
                                                    "validRange": {"min": "1G", "step": "1G"}}}}}]}})
                self.nic_class = True
            if self.chance(0.15):  # another driver's devices on the node
                self.add({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                          "metadata": {"name": f"{name}-nics"},
                          "spec": {"driver": "nic.example.com", "nodeName": name,
                                   "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                                   "devices": [{"name": "nic-0", "attributes": {"model": {"string": "cx6"}}}]}})
        if self.nic_class:
            self.add({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "nic"},
                      "spec": {"selectors": [{"cel": {"expression": 'device.driver == "nic.example.com"'}}]}})
        if self.chance(0.25):
            # v1alpha3: the one version of DeviceTaintRule every supported
            # release serves (1.35 has no other).
            rule = {"apiVersion": "resource.k8s.io/v1alpha3", "kind": "DeviceTaintRule",
                    "metadata": {"name": "drain-gpus"},
                    "spec": {"deviceSelector": {"driver": DRIVER},
                             "taint": {"key": "example.com/maintenance", "effect": self.pick(["NoSchedule", "NoExecute"])}}}
            slices = [o for o in self.objects if o["kind"] == "ResourceSlice"]
            if slices and self.chance(0.6):
                rule["spec"]["deviceSelector"]["pool"] = self.pick(slices)["spec"]["pool"]["name"]
            self.add(rule)
        if self.chance(0.5):
            self.add({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                      "metadata": {"name": "one-gpu", "namespace": "default"},
                      "spec": {"spec": {"devices": {"requests": [self.device_request()]}}}})

    def device_request(self, admin: bool = False) -> dict:
        if self.nic_class and self.chance(0.3):
            exactly = {"deviceClassName": "nic"}
            if self.chance(0.7):
                exactly["capacity"] = {"requests": {"bandwidth": self.pick(["5G", "30G", "60G", "150G"])}}
            return {"name": "gpu", "exactly": exactly}
        exactly = {"deviceClassName": self.pick(["gpu", "gpu", "gpu", "big-gpu", "big-gpu", "ghost"])}
        if self.chance(0.3):
            exactly["allocationMode"] = "All"
        elif self.chance(0.4):
            exactly["count"] = self.pick([1, 2, 3])
        if self.chance(0.35):
            exactly["selectors"] = [{"cel": {"expression": self.pick([
                f'device.attributes["{DRIVER}"].model == "a100"',
                f'device.attributes["{DRIVER}"].index >= 1',
                f'device.capacity["{DRIVER}"].memory.compareTo(quantity("30Gi")) > 0',
            ])}}]
        if admin and self.chance(0.15):
            exactly["adminAccess"] = True
        if self.chance(0.15):
            exactly["tolerations"] = [{"key": self.pick(["gpu.example.com/unhealthy", "example.com/maintenance"]),
                                       "operator": "Exists",
                                       **({"effect": "NoSchedule"} if self.chance(0.5) else {})}]
        if self.chance(0.15):
            return {"name": "gpu", "firstAvailable": [
                {"name": "big", "deviceClassName": "big-gpu"},
                {"name": "any", "deviceClassName": "gpu", "count": self.pick([1, 2])}]}
        return {"name": "gpu", "exactly": exactly}

    def pod_claims(self, pod: dict) -> None:
        meta = pod["metadata"]
        ns, name = meta["namespace"], meta["name"]
        claim_name = f"{name}-gpu"
        templated = ns == "default" and self.chance(0.4) and any(
            o["kind"] == "ResourceClaimTemplate" for o in self.objects)
        bound_node = pod["spec"].get("nodeName")
        claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                 "metadata": {"name": claim_name, "namespace": ns},
                 "spec": {"devices": {"requests": [self.device_request(self.admin_access and ns == "default")]}}}
        if self.chance(0.2):
            second = self.device_request()
            second["name"] = "gpu2"
            claim["spec"]["devices"]["requests"].append(second)
            if self.chance(0.5):
                claim["spec"]["devices"]["constraints"] = [{"matchAttribute": f"{DRIVER}/model"}]
        if bound_node is None and not self.chance(0.85):
            # a claim a running pod holds: shared with it
            held = [o for o in self.objects if o["kind"] == "ResourceClaim" and o["metadata"]["namespace"] == ns
                    and o.get("status", {}).get("allocation")]
            if held:
                pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": held[0]["metadata"]["name"]}]
                for c in pod["spec"]["containers"][:1]:
                    c.setdefault("resources", {})["claims"] = [{"name": "gpu"}]
                return
        if templated:
            pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
            tmpl = next(o for o in self.objects if o["kind"] == "ResourceClaimTemplate")
            claim["spec"] = copy.deepcopy(tmpl["spec"]["spec"])
            claim["metadata"]["annotations"] = {"resource.kubernetes.io/pod-claim-name": "gpu"}
            claim["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": name,
                                                     "uid": _uid("Pod", ns, name), "controller": True,
                                                     "blockOwnerDeletion": True}]
            if bound_node is not None or self.chance(0.85):
                pod["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": claim_name}]
            else:
                return  # the controller has not created it yet: the pod waits
        else:
            pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim_name}]
            if not self.chance(0.9):
                return  # a claim that does not exist
        for c in pod["spec"]["containers"][:1]:
            c.setdefault("resources", {})["claims"] = [{"name": "gpu"}]
        if bound_node is not None:
            if not self.allocate(claim, bound_node, pod):
                return  # nothing left on its node: the running pod holds no claim
        self.add(claim)

    def allocate(self, claim: dict, node: str, pod: dict) -> bool:
        """Allocates a running pod's claim from its node's devices not yet
        taken: a whole GPU (or a partition) per GPU request, a share of the
        shared NIC per NIC request (the simplest allocation that is valid)."""
        by_name = {o["metadata"]["name"]: o for o in self.objects if o["kind"] == "ResourceSlice"}
        taken = {(r["pool"], r["device"]) for o in self.objects if o["kind"] == "ResourceClaim"
                 for r in (o.get("status", {}).get("allocation", {}).get("devices", {}).get("results") or ())}
        gpus = []
        for slice_name in (f"{node}-gpus", f"{node}-parts"):
            sl = by_name.get(slice_name)
            if sl is not None:
                pool = sl["spec"]["pool"]["name"]
                gpus += [(pool, d["name"]) for d in sl["spec"]["devices"] if (pool, d["name"]) not in taken]
        results = []
        for req in claim["spec"]["devices"]["requests"]:
            request = req["name"]
            if "firstAvailable" in req:
                request = f"{req['name']}/{req['firstAvailable'][-1]['name']}"
            exactly = req.get("exactly") or {}
            if exactly.get("deviceClassName") == "nic":
                if f"{node}-shared-nics" not in by_name:
                    return False
                share = "%08x-0000-4000-8000-%012x" % (self.r.getrandbits(32), self.r.getrandbits(48))
                consumed = (exactly.get("capacity") or {}).get("requests", {}).get("bandwidth", "10G")
                results.append({"request": request, "driver": "nic.example.com", "pool": f"{node}-shared",
                                "device": "nic-shared", "shareID": share,
                                "consumedCapacity": {"bandwidth": consumed}})
                continue
            if exactly.get("allocationMode") == "All" or exactly.get("deviceClassName") == "ghost" or not gpus:
                return False
            pool, device = gpus.pop(0)
            results.append({"request": request, "driver": DRIVER, "pool": pool, "device": device})
        claim["status"] = {
            "allocation": {"devices": {"results": results},
                           "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                               {"key": "metadata.name", "operator": "In", "values": [node]}]}]}},
            "reservedFor": [{"resource": "pods", "name": pod["metadata"]["name"],
                             "uid": _uid("Pod", pod["metadata"]["namespace"], pod["metadata"]["name"])}]}
        return True

    # -- scheduler configuration -------------------------------------------------------------

    def config(self) -> dict:
        profile: dict = {"schedulerName": "default-scheduler"}
        plugins: dict = {}
        args = []
        if self.chance(0.4):
            plugins.setdefault("multiPoint", {})["enabled"] = [
                {"name": p, "weight": self.pick([1, 2, 5, 10])}
                for p in self.some(["TaintToleration", "NodeAffinity", "NodeResourcesFit", "PodTopologySpread",
                                    "InterPodAffinity", "NodeResourcesBalancedAllocation", "ImageLocality"], 1, 3)]
        if self.chance(0.35):
            disabled = self.some(["ImageLocality", "NodeResourcesBalancedAllocation", "PodTopologySpread",
                                  "InterPodAffinity", "TaintToleration", "NodePorts", "VolumeBinding"], 1, 2)
            plugins.setdefault("multiPoint", {})["disabled"] = [{"name": p} for p in disabled]
            enabled = plugins["multiPoint"].get("enabled")
            if enabled:
                plugins["multiPoint"]["enabled"] = [e for e in enabled if e["name"] not in disabled] or None
                if plugins["multiPoint"]["enabled"] is None:
                    del plugins["multiPoint"]["enabled"]
        if self.chance(0.2):
            plugins["score"] = {"disabled": [{"name": self.pick(["NodeResourcesFit", "ImageLocality"])}]}
        if self.chance(0.5):
            strategy = self.pick(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"])
            resources = [{"name": "cpu", "weight": self.pick([1, 2])}, {"name": "memory", "weight": 1}]
            if self.on("extended") and self.chance(0.5):
                resources.append({"name": GPU, "weight": self.pick([1, 3])})
            s = {"type": strategy, "resources": resources}
            if strategy == "RequestedToCapacityRatio":
                s["requestedToCapacityRatio"] = {"shape": self.pick([
                    [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}],
                    [{"utilization": 0, "score": 10}, {"utilization": 50, "score": 2},
                     {"utilization": 100, "score": 0}]])}
            args.append({"name": "NodeResourcesFit", "args": {"scoringStrategy": s}})
        if self.chance(0.35):
            c = [{"maxSkew": self.pick([1, 2]), "topologyKey": self.pick([ZONE, HOST]),
                  "whenUnsatisfiable": self.pick(["ScheduleAnyway", "DoNotSchedule"])}]
            args.append({"name": "PodTopologySpread",
                         "args": {"defaultingType": "List", "defaultConstraints": self.pick([c, c, []])}})
        if self.chance(0.25):
            args.append({"name": "InterPodAffinity",
                         "args": {"hardPodAffinityWeight": self.pick([0, 1, 10, 100]),
                                  "ignorePreferredTermsOfExistingPods": self.chance(0.3)}})
        if self.chance(0.15):
            args.append({"name": "NodeAffinity", "args": {"addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["z1", "z2"]}]}]}}}})
        if self.chance(0.1):
            args.append({"name": "DefaultPreemption", "args": {"minCandidateNodesPercentage": self.pick([0, 10, 50]),
                                                               "minCandidateNodesAbsolute": self.pick([0, 1, 100])}})
        if self.chance(0.1) and not any(a["name"] == "NodeResourcesFit" for a in args):
            args.append({"name": "NodeResourcesFit", "args": self.pick([
                {"ignoredResources": [GPU]}, {"ignoredResourceGroups": ["example.com"]}])})
        if self.chance(0.2):
            args.append({"name": "NodeResourcesBalancedAllocation",
                         "args": {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
                                  + ([{"name": GPU, "weight": 1}] if self.on("extended") else [])}})
        disabled_names = {d["name"] for d in plugins.get("multiPoint", {}).get("disabled", [])}
        args = [a for a in args if a["name"] not in disabled_names]
        if plugins:
            profile["plugins"] = plugins
        if args:
            profile["pluginConfig"] = args
        profiles = [profile]
        if self.on("profiles"):
            profiles.append({"schedulerName": "bin-packing", "pluginConfig": [
                {"name": "NodeResourcesFit", "args": {"scoringStrategy": {
                    "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}}]})
        return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                "percentageOfNodesToScore": 100, "profiles": profiles}


def _selector_keys(sel: dict) -> set[str]:
    return set(sel.get("matchLabels") or {}) | {e["key"] for e in sel.get("matchExpressions") or ()}


def _uid(kind: str, ns: str, name: str) -> str:
    """The uid kschedx and the oracle give an object without one (stable from
    its kind, namespace and name): owner references must name it."""
    import hashlib

    key = f"{ns}/{name}" if kind == "Pod" else f"{kind}/{ns}/{name}"
    h = hashlib.sha1(key.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"
