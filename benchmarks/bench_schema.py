"""What strict input validation (kschedx/sources/schema) costs.

    python benchmarks/bench_schema.py          # every figure below
    python benchmarks/bench_schema.py --quick  # fewer repetitions

- what validating the bundled example adds to a CLI run, in CPU time of
  fresh interpreters (bytecode cached, as in an installed kschedx): the
  import, one version's data read, the objects checked;
- data load: reading one version's schema (the first validate() of a run);
- objects per second over the golden corpus (tests/golden/cases/*.yaml,
  tests/golden-config/cases/*.json), objects already read;
- the duplicate-noting loaders against the plain ones on the same files;
- a full `kubectl get pods -o yaml` pod (managedFields, status, probes...):
  seconds per object, and what 150,000 of them would cost.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kschedx.sources.fixtures import read_objects  # noqa: E402
from kschedx.sources.schema import model, validate  # noqa: E402
from kschedx.sources.schema.duplicates import load_json, load_yaml  # noqa: E402
from kschedx.sources.yaml_loader import FastSafeLoader  # noqa: E402


_CLI_COST = """
import time
from kschedx.sources.fixtures import read_objects
objects = read_objects(["fixtures/cluster/", "fixtures/pods/web.yaml"])
t0 = time.process_time()
from kschedx.sources.schema import model, validate
t1 = time.process_time()
model.schema("1.36")
t2 = time.process_time()
problems = [p for obj, _ in objects for p in validate(obj, "1.36")]
t3 = time.process_time()
assert not problems, problems
print(t1 - t0, t2 - t1, t3 - t2, len(objects))
"""


def cli_cost(runs: int) -> tuple[float, float, float, int]:
    """(import, data load, validation) CPU seconds, the median of fresh interpreters."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT)
    subprocess.run([sys.executable, "-c", _CLI_COST], cwd=ROOT, env=env, check=True, capture_output=True)  # bytecode
    rows = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", _CLI_COST], cwd=ROOT, env=env, check=True, capture_output=True,
                             text=True).stdout.split()
        rows.append(out)
    columns = list(zip(*rows))
    return (*(statistics.median(float(x) for x in col) for col in columns[:3]), int(columns[3][0]))


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times)


def full_pod(i: int) -> dict:
    """A pod as `kubectl get pods -o yaml` prints it from a real cluster."""
    container = {
        "name": "app", "image": "registry.example.com/shop/web:1.42.0", "imagePullPolicy": "IfNotPresent",
        "args": ["--port=8080", "--log-level=info"],
        "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                {"name": "MODE", "value": "production"}],
        "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        "resources": {"requests": {"cpu": "250m", "memory": "512Mi"}, "limits": {"memory": "1Gi"}},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"}, "periodSeconds": 10,
                          "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 5,
                           "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
        "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": "kube-api-access",
                          "readOnly": True}],
    }
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": f"web-7d9c5-{i:05d}", "namespace": "shop", "uid": f"0b6c-{i}", "resourceVersion": str(1000 + i),
            "creationTimestamp": "2026-11-01T10:00:00Z", "generateName": "web-7d9c5-",
            "labels": {"app": "web", "pod-template-hash": "7d9c5"},
            "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-11-01T09:59:00Z"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9c5", "uid": "rs-1",
                                 "controller": True, "blockOwnerDeletion": True}],
            "managedFields": [{"apiVersion": "v1", "fieldsType": "FieldsV1", "manager": "kube-controller-manager",
                               "operation": "Update", "time": "2026-11-01T10:00:00Z",
                               "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}}],
        },
        "spec": {
            "containers": [container], "dnsPolicy": "ClusterFirst", "enableServiceLinks": True,
            "nodeName": f"node-{i % 5000}", "preemptionPolicy": "PreemptLowerPriority", "priority": 0,
            "restartPolicy": "Always", "schedulerName": "default-scheduler", "securityContext": {},
            "serviceAccount": "default", "serviceAccountName": "default", "terminationGracePeriodSeconds": 30,
            "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                "weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}},
                                                   "topologyKey": "kubernetes.io/hostname"}}]}},
            "tolerations": [{"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists",
                             "tolerationSeconds": 300},
                            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists",
                             "tolerationSeconds": 300}],
            "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}],
        },
        "status": {
            "phase": "Running", "hostIP": "10.0.0.1", "podIP": "10.1.0.1", "podIPs": [{"ip": "10.1.0.1"}],
            "qosClass": "Burstable", "startTime": "2026-11-01T10:00:01Z",
            "conditions": [{"type": t, "status": "True", "lastProbeTime": None,
                            "lastTransitionTime": "2026-11-01T10:00:05Z"}
                           for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady",
                                     "PodScheduled")],
            "containerStatuses": [{"name": "app", "image": container["image"], "imageID": "sha256:abc",
                                   "containerID": "containerd://abc", "ready": True, "started": True,
                                   "restartCount": 0,
                                   "state": {"running": {"startedAt": "2026-11-01T10:00:03Z"}}}],
        },
    }


def main(argv) -> int:
    quick = "--quick" in argv
    repeat = 3 if quick else 7

    imported, loaded, checked, count = cli_cost(5 if quick else 15)
    print(f"a CLI run on the bundled example ({count} objects), CPU ms added: import {imported * 1000:.1f}, "
          f"data {loaded * 1000:.1f}, validation {checked * 1000:.1f}; total {(imported + loaded + checked) * 1000:.1f}")

    print("data load (ms: the first validate() against a version)")
    for minor in sorted(model.RELEASES):
        def load(minor=minor):
            model._loaded.pop(minor, None)
            model.schema(minor)
        size = model.data_file(minor).stat().st_size
        print(f"  {minor}: {_best(load, repeat) * 1000:6.1f} ms  ({size:,} bytes gzip'd)")

    yaml_files = sorted((ROOT / "tests/golden/cases").glob("*.yaml"))
    json_files = sorted((ROOT / "tests/golden-config/cases").glob("*.json"))
    for label, files in (("golden YAML", yaml_files), ("golden-config JSON", json_files)):
        objects = [obj for f in files for obj, _ in read_objects([str(f)])]
        for minor in sorted(model.RELEASES):
            model.schema(minor)
            seconds = _best(lambda: [validate(o, minor) for o in objects], max(1, repeat // 2))
            print(f"{label}: {len(objects):,} objects, {minor}: {len(objects) / seconds:,.0f} objects/s "
                  f"({seconds * 1000:.0f} ms)")

    print("loaders that note duplicate keys, against the plain ones (same files)")
    texts = [f.read_text() for f in yaml_files]
    import io

    import yaml

    plain = _best(lambda: [list(yaml.load_all(io.StringIO(t), Loader=FastSafeLoader)) for t in texts], repeat)
    noting = _best(lambda: [load_yaml(t, FastSafeLoader) for t in texts], repeat)
    print(f"  YAML ({len(texts)} files): {plain:.2f} s plain, {noting:.2f} s noting (+{(noting / plain - 1) * 100:.0f}%)")
    jtexts = [f.read_text() for f in json_files]
    plain = _best(lambda: [json.loads(t) for t in jtexts], repeat)
    noting = _best(lambda: [load_json(t) for t in jtexts], repeat)
    print(f"  JSON ({len(jtexts)} files): {plain * 1000:.0f} ms plain, {noting * 1000:.0f} ms noting "
          f"(+{(noting / plain - 1) * 100:.0f}%)")

    pods = [full_pod(i) for i in range(2000)]
    assert all(validate(p, "1.36") == [] for p in pods[:5])
    seconds = _best(lambda: [validate(p, "1.36") for p in pods], repeat)
    per = seconds / len(pods)
    print(f"full pods: {len(pods) / seconds:,.0f} pods/s ({per * 1e6:.0f} us each); "
          f"150,000 pods: {per * 150_000:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
