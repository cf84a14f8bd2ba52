"""Make the shared test helpers (builders.py, golden_compare.py) importable
from every test directory."""

import sys
from pathlib import Path

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
