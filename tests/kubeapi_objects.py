"""Realistic nodes and pods for the test API server (the size and shape
`kubectl get -o json` shows), for benchmarks. Tests build theirs with
builders (api_node, api_pod, ...)."""

from __future__ import annotations

import hashlib
import random
import uuid

_ZONES = ["us-east-1a", "us-east-1b", "us-east-1c"]
_TS = "2025-11-03T09:14:27Z"


def _base36(n: int, width: int = 5) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    for _ in range(width):
        n, r = divmod(n, 36)
        out = digits[r] + out
    return out


def realistic_node(i: int, rng: random.Random) -> dict:
    name = f"ip-10-{i // 250 % 256}-{i % 250}-{i % 7 + 10}.ec2.internal"
    zone = _ZONES[i % 3]
    images = [{"names": [f"registry.example.com/team-{j}/service-{j}@sha256:"
                         + hashlib.sha256(f"{i}-{j}".encode()).hexdigest(),
                         f"registry.example.com/team-{j}/service-{j}:v1.{j}.{i % 10}"],
               "sizeBytes": rng.randint(10_000_000, 900_000_000)} for j in range(12)]
    return {
        "kind": "Node", "apiVersion": "v1",
        "metadata": {
            "name": name, "uid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            "resourceVersion": str(100000 + i), "creationTimestamp": _TS,
            "labels": {
                "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/instance-type": "m6i.4xlarge",
                "beta.kubernetes.io/os": "linux", "eks.amazonaws.com/nodegroup": f"ng-{i % 20}",
                "failure-domain.beta.kubernetes.io/region": "us-east-1",
                "failure-domain.beta.kubernetes.io/zone": zone, "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                "node.kubernetes.io/instance-type": "m6i.4xlarge",
                "topology.kubernetes.io/region": "us-east-1", "topology.kubernetes.io/zone": zone},
            "annotations": {"alpha.kubernetes.io/provided-node-ip": f"10.0.{i // 250 % 256}.{i % 250}",
                            "node.alpha.kubernetes.io/ttl": "0",
                            "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
        },
        "spec": {"providerID": f"aws:///{zone}/i-0{i:016x}",
                 **({"taints": [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]}
                    if i % 10 == 0 else {})},
        "status": {
            "addresses": [{"type": "InternalIP", "address": f"10.0.{i // 250 % 256}.{i % 250}"},
                          {"type": "InternalDNS", "address": name}, {"type": "Hostname", "address": name}],
            "allocatable": {"cpu": "15890m", "ephemeral-storage": "95491281146", "hugepages-1Gi": "0",
                            "hugepages-2Mi": "0", "memory": "62780724Ki", "pods": "234"},
            "capacity": {"cpu": "16", "ephemeral-storage": "104845292Ki", "hugepages-1Gi": "0",
                         "hugepages-2Mi": "0", "memory": "65023796Ki", "pods": "234"},
            "conditions": [
                {"type": t, "status": "False", "lastHeartbeatTime": _TS, "lastTransitionTime": _TS,
                 "reason": f"KubeletHas{r}", "message": f"kubelet has {m}"}
                for t, r, m in (("MemoryPressure", "SufficientMemory", "sufficient memory available"),
                                ("DiskPressure", "NoDiskPressure", "no disk pressure"),
                                ("PIDPressure", "SufficientPID", "sufficient PID available"))
            ] + [{"type": "Ready", "status": "True", "lastHeartbeatTime": _TS,
                  "lastTransitionTime": _TS, "reason": "KubeletReady",
                  "message": "kubelet is posting ready status"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": images,
            "nodeInfo": {"architecture": "amd64", "bootID": str(uuid.UUID(int=rng.getrandbits(128))),
                         "containerRuntimeVersion": "containerd://1.7.27", "kernelVersion": "6.1.141",
                         "kubeProxyVersion": "", "kubeletVersion": "v1.35.4-eks-1234567",
                         "machineID": f"ec2{i:029x}", "operatingSystem": "linux",
                         "osImage": "Amazon Linux 2023.8.20250818", "systemUUID": f"ec2{i:029x}"},
        },
    }


def _managed_fields(manager: str, operation: str, subresource: str | None, fields: dict) -> dict:
    entry = {"manager": manager, "operation": operation, "apiVersion": "v1", "time": _TS,
             "fieldsType": "FieldsV1", "fieldsV1": fields}
    if subresource:
        entry["subresource"] = subresource
    return entry


def realistic_pod(i: int, node_name: str | None, rng: random.Random, *,
                  managed_fields: bool = True) -> dict:
    """A Deployment's pod as the API server returns it (bound and Running unless node_name is None)."""
    ns = f"team-{i % 40}"
    app = f"svc-{i // 10 % 500}"
    hash_ = hashlib.sha256(app.encode()).hexdigest()[:10]
    suffix = _base36(i)  # unique, unlike a random 5-character suffix at this scale
    name = f"{app}-{hash_}-{suffix}"
    two = i % 3 == 0
    containers = [{
        "name": app, "image": f"registry.example.com/{ns}/{app}:v2.{i % 17}.3",
        "imagePullPolicy": "IfNotPresent",
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
        "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                {"name": "LOG_LEVEL", "value": "info"}],
        "resources": {"requests": {"cpu": f"{rng.choice([100, 250, 500])}m", "memory": "256Mi"},
                      "limits": {"memory": "512Mi"}},
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
                           "periodSeconds": 10, "timeoutSeconds": 1, "successThreshold": 1,
                           "failureThreshold": 3},
        "volumeMounts": [{"name": "kube-api-access", "readOnly": True,
                          "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
    }]
    if two:
        containers.append({
            "name": "envoy", "image": "envoyproxy/envoy:v1.31.2", "imagePullPolicy": "IfNotPresent",
            "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}},
            "volumeMounts": [{"name": "kube-api-access", "readOnly": True,
                              "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"})
    spec = {
        "containers": containers, "dnsPolicy": "ClusterFirst", "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority", "priority": 0, "restartPolicy": "Always",
        "schedulerName": "default-scheduler", "securityContext": {}, "serviceAccount": "default",
        "serviceAccountName": "default", "terminationGracePeriodSeconds": 30,
        "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                         "effect": "NoExecute", "tolerationSeconds": 300},
                        {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                         "effect": "NoExecute", "tolerationSeconds": 300}],
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                       "whenUnsatisfiable": "ScheduleAnyway",
                                       "labelSelector": {"matchLabels": {"app": app}}}],
        "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
                "apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}}],
    }
    meta = {
        "name": name, "generateName": f"{app}-{hash_}-", "namespace": ns,
        "uid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "resourceVersion": str(200000 + i), "creationTimestamp": _TS,
        "labels": {"app": app, "app.kubernetes.io/part-of": ns, "pod-template-hash": hash_,
                   "version": f"v2.{i % 17}"},
        "annotations": {"kubectl.kubernetes.io/restartedAt": "2025-11-01T10:00:00Z",
                        "prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{app}-{hash_}",
                             "uid": str(uuid.UUID(bytes=hashlib.md5(app.encode()).digest(), version=4)),
                             "controller": True, "blockOwnerDeletion": True}],
    }
    if managed_fields:
        meta["managedFields"] = [
            _managed_fields("kube-controller-manager", "Update", None, {
                "f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}},
                               "f:ownerReferences": {".": {}, f'k:{{"uid":"{hash_}"}}': {}}},
                "f:spec": {"f:containers": {f'k:{{"name":"{app}"}}': {
                    ".": {}, "f:env": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {},
                    "f:ports": {}, "f:readinessProbe": {}, "f:resources": {},
                    "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {}}},
                    "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {},
                    "f:schedulerName": {}, "f:securityContext": {}, "f:terminationGracePeriodSeconds": {},
                    "f:topologySpreadConstraints": {}}}),
            _managed_fields("kubelet", "Update", "status", {
                "f:status": {"f:conditions": {'k:{"type":"ContainersReady"}': {".": {}, "f:status": {}},
                                              'k:{"type":"Initialized"}': {".": {}, "f:status": {}},
                                              'k:{"type":"Ready"}': {".": {}, "f:status": {}}},
                             "f:containerStatuses": {}, "f:hostIP": {}, "f:hostIPs": {}, "f:phase": {},
                             "f:podIP": {}, "f:podIPs": {}, "f:startTime": {}}}),
        ]
    if node_name is None:
        return {"kind": "Pod", "apiVersion": "v1", "metadata": meta, "spec": spec, "status": {
            "phase": "Pending", "qosClass": "Burstable",
            "conditions": [{"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                            "lastTransitionTime": _TS, "reason": "Unschedulable",
                            "message": "0/5000 nodes are available: 5000 Insufficient cpu."}]}}
    spec["nodeName"] = node_name
    ip = f"10.{1 + i // 65536 % 200}.{i // 256 % 256}.{i % 256}"
    status = {
        "phase": "Running", "qosClass": "Burstable", "hostIP": "10.0.0.1",
        "hostIPs": [{"ip": "10.0.0.1"}], "podIP": ip, "podIPs": [{"ip": ip}], "startTime": _TS,
        "conditions": [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": _TS}
                       for t in ("PodReadyToStartContainers", "Initialized", "Ready",
                                 "ContainersReady", "PodScheduled")],
        "containerStatuses": [{
            "name": c["name"], "image": c["image"], "ready": True, "restartCount": 0, "started": True,
            "imageID": c["image"].split(":")[0] + "@sha256:" + hashlib.sha256(c["image"].encode()).hexdigest(),
            "containerID": "containerd://" + hashlib.sha256(f"{i}{c['name']}".encode()).hexdigest(),
            "lastState": {}, "state": {"running": {"startedAt": _TS}},
            "volumeMounts": [{"name": "kube-api-access", "readOnly": True, "recursiveReadOnly": "Disabled",
                              "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]}
            for c in containers],
    }
    return {"kind": "Pod", "apiVersion": "v1", "metadata": meta, "spec": spec, "status": status}
