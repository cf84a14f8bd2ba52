"""Which pods' specs are equal as written, so that admission runs once for
all of them (Admission.pod): the replicas of a workload differ only in
name, uid and nodeName.

Equal means equal as marshal writes it: marshal tells 1 from 1.0, True and
"1", and keeps key order, which Python's == does not (key order is seen:
the order of a pod's resources is the order of its reasons). Equal text
always means equal specs. The converse holds for specs read from one file
(which is all that matters here, as sharing is only lost): marshal's
current format marks objects that have other references (the parser's
shared key strings, small integers), the same way in every replica. It
writes strings much faster than format 2, which marks nothing.
"""

from __future__ import annotations

import marshal

_FORMAT = marshal.version
# Distinct specs remembered (a workload's replicas share one).
SHARED_SPECS_LIMIT = 100_000


def spec_key(spec: dict, pod: dict):
    """What the admitted spec depends on, or None when it cannot be told:
    the spec as written without the value of nodeName (a string: pods of
    one controller differ there) and the names of service-account volumes
    (TOKEN_VOLUME_PREFIX); plus the labels where matchLabelKeys /
    mismatchLabelKeys copy label values into the spec. Types marshal cannot
    write (YAML timestamps) get no key. Those values are blanked in place
    for the writing (assigning a key that is there keeps the key order) and
    put back: the spec is left as it was."""
    node_name = spec.get("nodeName")
    if node_name is not None and node_name.__class__ is not str:
        return None
    volumes = spec.get("volumes")
    named = _token_volumes(volumes) if volumes.__class__ is list and volumes else ()
    try:
        if node_name is not None:
            spec["nodeName"] = ""
        for volume, _ in named:
            volume["name"] = ""
        key = marshal.dumps(spec, _FORMAT)
        if b"LabelKeys" in key:
            return key, marshal.dumps(pod["metadata"].get("labels"), _FORMAT)
    except ValueError:
        return None
    finally:
        if node_name is not None:
            spec["nodeName"] = node_name
        for volume, name in named:
            volume["name"] = name
    return key


# The projected volume the ServiceAccount admission plugin adds to every pod,
# named kube-api-access- and 5 random characters: pods read from a cluster
# differ there and nowhere else. No scheduling plugin reads a projected
# volume, nor any volume's name.
TOKEN_VOLUME_PREFIX = "kube-api-access-"


def _token_volumes(volumes: list) -> list:
    """(volume, its name) for the service-account volumes among `volumes`."""
    out = []
    for v in volumes:
        if v.__class__ is dict:
            name = v.get("name")
            if name.__class__ is str and name.startswith(TOKEN_VOLUME_PREFIX) and "projected" in v:
                out.append((v, name))
    return out


class SpecTemplates:
    """Admitted specs by the key of the spec they were admitted from."""

    __slots__ = ("by_key",)

    def __init__(self):
        self.by_key: dict = {}

    def find(self, spec: dict, pod: dict):
        """(admitted spec or None, key or None): what an equal spec was
        admitted as, else the spec's key (None when it has none) for add()."""
        key = spec_key(spec, pod)
        if key is None:
            return None, None
        return self.by_key.get(key), key

    def add(self, key, admitted: dict) -> None:
        if len(self.by_key) < SHARED_SPECS_LIMIT:
            self.by_key[key] = admitted


def claims_key(volumes):
    """PodInfo.pvc_names of these volumes as a tuple; None for what is not
    plainly a list of volumes naming their claims by strings."""
    if volumes.__class__ is not list:
        return None
    out = []
    for v in volumes:
        if v.__class__ is not dict:
            return None
        pvc = v.get("persistentVolumeClaim")
        if pvc:
            if pvc.__class__ is not dict:
                return None
            claim = pvc.get("claimName")
            if claim:
                if claim.__class__ is not str:
                    return None
                out.append(claim)
    return ("claims", *out)


def status_facts_key(status):
    """The parts of a pod's status that have a say in its requests (container
    statuses, and the pod-level resources: in-place resizes), as written: b"" when there are none, None
    when they cannot be told."""
    if not status:
        return b""
    if status.__class__ is not dict:
        return None
    if not (status.get("containerStatuses") or status.get("initContainerStatuses")
            or status.get("resources") is not None):
        return b""
    try:
        # Pod-level status resources count from 1.36 (InPlacePodLevelResourcesVerticalScaling).
        return marshal.dumps((status.get("containerStatuses"), status.get("initContainerStatuses"),
                              status.get("conditions"), status.get("resources"),
                              status.get("allocatedResources")), 2)
    except ValueError:
        return None
