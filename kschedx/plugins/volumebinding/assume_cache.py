"""PV and PVC caches with the scheduler's own assumptions on top.

When a pod is reserved on a node, VolumeBinding assumes its decisions
before the API server hears of them: the chosen PV gets a claimRef to the
claim, a claim to provision gets the selected-node annotation. Later cycles
see those assumed objects (only VolumeBinding does; other plugins read the
API objects), so two pods cannot take the same PV.
"""

from __future__ import annotations

from ...storage.objects import NotFound, volume_class


class AssumeCache:
    def __init__(self, objects: dict[str, dict], resource: str):
        self.objects = objects  # the API objects, by key
        self.resource = resource
        self.assumed: dict[str, dict] = {}

    def get(self, key: str) -> dict:
        obj = self.assumed.get(key)
        if obj is not None:
            return obj
        obj = self.objects.get(key)
        if obj is None:
            raise NotFound(self.resource, key)
        return obj

    def api_object(self, key: str) -> dict | None:
        return self.objects.get(key)

    def assume(self, key: str, obj: dict) -> None:
        self.assumed[key] = obj

    def restore(self, key: str) -> None:
        self.assumed.pop(key, None)


class PVAssumeCache(AssumeCache):
    def __init__(self, objects: dict[str, dict]):
        super().__init__(objects, "persistentvolumes")
        self._by_class: dict[str, list[str]] | None = None

    def list_pvs(self, storage_class: str) -> list[dict]:
        """The PVs of a class, assumed versions included. Upstream lists an
        index (no defined order); kschedx lists them by name."""
        if self._by_class is None:
            index: dict[str, list[str]] = {}
            for name in sorted(self.objects):
                index.setdefault(volume_class(self.objects[name]), []).append(name)
            self._by_class = index
        return [self.assumed.get(name) or self.objects[name] for name in self._by_class.get(storage_class, ())]
