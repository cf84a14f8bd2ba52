"""Steady pod traffic on the test API server's store, as a busy cluster makes
it: controllers creating pending replicas (now and then of a new Job, with a
label set never seen before), a scheduler binding them, pods deleted, status
updates that change nothing scheduling reads. The pod count stays about where
it started. Shared by the tests of explain --watch and benchmarks/bench_watch.py."""

from __future__ import annotations

import random

import kubeapi_pods as pods
from kubeapi_store import ObjectStore


class Churn:
    def __init__(self, store: ObjectStore, rng: random.Random, nodes: list[str], *, namespace: str = "churn",
                 cpu: str = "10m", start: int = 0, pending: int = 50, bound: int = 200):
        self.store = store
        self.rng = rng
        self.nodes = nodes
        self.namespace = namespace
        self.cpu = cpu
        self.n = start
        self.pending: list[str] = []
        self.bound: list[str] = []
        self.job = 0
        self.max_pending = pending  # a scheduler keeps up: no more pods than this wait
        self.max_bound = bound  # and the cluster keeps its size: pods finish
        self.counts = {"create": 0, "bind": 0, "delete": 0, "status": 0}

    def step(self) -> None:
        r = self.rng.random()
        if len(self.pending) >= self.max_pending:
            self.bind()
        elif len(self.bound) > self.max_bound:
            self.delete()
        elif r < 0.4 or not (self.pending or self.bound):
            self.create()
        elif r < 0.7 and self.pending:
            self.bind()
        elif r < 0.95 and self.bound:
            self.delete()
        elif self.bound:
            self.status()
        else:
            self.create()

    def run(self, steps: int) -> None:
        for _ in range(steps):
            self.step()

    def create(self) -> None:
        self.n += 1
        if self.rng.random() < 0.05:
            self.job += 1  # a new Job: a label set never seen before
        name = f"c-{self.n:07d}"
        labels = {"app": f"app-{self.n % 20}", "job": f"j-{self.job}"}
        self.store.put({"kind": "Pod", "metadata": {"name": name, "namespace": self.namespace, "labels": labels},
                        "spec": {"containers": [{"name": "c", "image": "registry.example/app:1",
                                                 "resources": {"requests": {"cpu": self.cpu, "memory": "16Mi"}}}],
                                 "schedulerName": "default-scheduler"},
                        "status": {"phase": "Pending"}})
        self.pending.append(name)
        self.counts["create"] += 1

    def bind(self) -> None:
        name = self.pending.pop(0)
        node = self.rng.choice(self.nodes)
        try:
            pods.bind(self.store, self.namespace, name, {"metadata": {"name": name}, "target": {"name": node}})
        except Exception:
            return
        self.bound.append(name)
        self.counts["bind"] += 1

    def delete(self) -> None:
        name = self.bound.pop(self.rng.randrange(len(self.bound)))
        self.store.delete("Pod", self.namespace, name)
        self.counts["delete"] += 1

    def status(self) -> None:
        name = self.rng.choice(self.bound)

        def change(p):
            p["status"] = {**p.get("status", {}), "phase": "Running",
                           "conditions": [{"type": "Ready", "status": self.rng.choice(["True", "False"])}]}
            return p

        self.store.update("Pod", self.namespace, name, change)
        self.counts["status"] += 1
