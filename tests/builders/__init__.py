"""Builders for test objects (plain API dicts) and the harness that runs
plugins over them, one place for every test:

- core.py         the object envelope and optional fields (`put`)
- pods.py         pods and containers (`make_pod`, `P`, the preemption and volume tests' pods)
- nodes.py        nodes (plugin tests', affinity/spread, preemption and volume tests')
- cluster.py      namespaces, PodDisruptionBudgets, PriorityClasses, RuntimeClasses
- storage.py      PersistentVolumes and claims, StorageClasses, CSI objects
- constraints.py  selectors, affinity terms, spread constraints, tolerations, taints
- harness.py      NodeInfos, snapshots, frameworks, plugins run by extension point

Objects are built without admission: they are what a plugin sees after the
API server has stored them, so tests state every field that matters to them.
`admitted()` and `framework()` run the real fixture admission when a test
needs it. The api_* builders (and `served`) make objects as the test API
server (tests/kubeapi.py) serves them, for the tests of live clusters.

Tests import from the package: `from builders import make_pod, run_filter`.
"""

from .cluster import *  # noqa: F401,F403
from .constraints import *  # noqa: F401,F403
from .core import *  # noqa: F401,F403
from .harness import *  # noqa: F401,F403
from .nodes import *  # noqa: F401,F403
from .pods import *  # noqa: F401,F403
from .storage import *  # noqa: F401,F403
