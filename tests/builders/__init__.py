"""Builders for test objects (plain API dicts) and the harness that runs
plugins over them, one place for every test:

- core.py     the object envelope and optional fields (`put`)
- pods.py     pods and containers
- nodes.py    nodes
- harness.py  NodeInfos, snapshots, frameworks, plugins run by extension point

Objects are built without admission: they are what a plugin sees after the
API server has stored them, so tests state every field that matters to them.
`admitted()` runs the real fixture admission when a test needs it.

Tests import from the package: `from builders import make_pod, run_filter`.
"""

from .core import *  # noqa: F401,F403
from .harness import *  # noqa: F401,F403
from .nodes import *  # noqa: F401,F403
from .pods import *  # noqa: F401,F403
