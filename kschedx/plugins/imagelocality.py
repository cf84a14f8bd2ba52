"""ImageLocality: prefer nodes that already hold the pod's images.

From 1.36 (features.image_locality_counts_image_volumes) the images of the
pod's image volumes (spec.volumes[].image.reference) count too, after the
containers' (kubernetes/kubernetes#130231); the threshold grows with the
number of containers only in v1.36, with the image volumes too from 1.37
(features.image_locality_threshold_counts_image_volumes).
"""

from __future__ import annotations

from itertools import compress

from ..config import names
from ..framework.declaration import Declaration
from ..framework.interface import MAX_NODE_SCORE, EventReach, Plugin, features_of

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    if name.rfind(":") <= name.rfind("/"):
        name = name + ":latest"
    return name


def scaled_image_score(state, total_nodes: int) -> int:
    spread = float(state.num_nodes) / float(total_nodes)
    return int(float(state.size) * spread)


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


class ImageLocality(Plugin):
    name = names.ImageLocality

    def __init__(self, handle, args=None):
        super().__init__(handle, args)
        features = features_of(handle)
        self.image_volumes = features.image_locality_counts_image_volumes
        self.volumes_in_threshold = features.image_locality_threshold_counts_image_volumes

    def _containers(self, pod_info):
        spec = pod_info.spec
        return list(spec.get("initContainers") or ()) + list(spec.get("containers") or ())

    def _images(self, pod_info) -> tuple[list[str], int]:
        """The normalized names sumImageScores looks up, in its order, and the
        number of images calculatePriority's threshold counts."""
        containers = self._containers(pod_info)
        names = [normalized_image_name(c.get("image") or "") for c in containers]
        count = len(containers)
        if self.image_volumes:
            for v in pod_info.spec.get("volumes") or ():
                image = v.get("image")
                if image is not None:
                    names.append(normalized_image_name(image.get("reference") or ""))
                    if self.volumes_in_threshold:
                        count += 1
        return names, count

    def score(self, state, pod_info, node_info) -> int:
        total = self.handle.snapshot.num_nodes()
        names, containers = self._images(pod_info)
        total_score = 0
        for name in names:
            st = node_info.image_states.get(name)
            if st is not None:
                total_score += scaled_image_score(st, total)
        return calculate_priority(total_score, containers)

    def score_all(self, state, pod_info, nodes) -> list[int]:
        total = self.handle.snapshot.num_nodes()
        names, containers = self._images(pod_info)
        # Most nodes report no images: their score is the same for all.
        no_images = calculate_priority(0, containers)
        image_states = [ni.image_states for ni in nodes]
        out = [no_images] * len(nodes)
        for i in compress(range(len(nodes)), image_states):
            states = image_states[i]
            total_score = 0
            for name in names:
                st = states.get(name)
                if st is not None:
                    total_score += scaled_image_score(st, total)
            out[i] = calculate_priority(total_score, containers)
        return out

    def score_details(self, state, pod_info, node_info):
        if not node_info.image_states:
            return None
        present = []
        for name in self._images(pod_info)[0]:
            st = node_info.image_states.get(name)
            if st is not None:
                present.append({"image": name, "sizeBytes": st.size, "nodesWithImage": st.num_nodes})
        return {"images": present} if present else None

    def event_reach(self, state, pod_info) -> EventReach:
        """The pod's images, on any node (a node's score counts the nodes
        holding each of them); the number of nodes, once one holds one: it
        scales every score (a Score plugin only, so node_count, not node_set)."""
        names = frozenset(self._images(pod_info)[0])
        existence = getattr(self.handle.snapshot, "image_existence", None)
        held = existence is None or any(existence.get(n) for n in names)
        return EventReach(images=names, node_count=held)


DECLARATION = Declaration(
    name=names.ImageLocality,
    factory=ImageLocality,
    points=frozenset({"score"}),
    details="images",
)
