"""A minimal PEP 517 build backend (wheels only, standard library only).

It exists so that the test suite can build and install this distribution
offline with nothing but pip; it reads the [project] table of pyproject.toml
(name, version, description, requires-python, dependencies, entry points)
and packs every package directory next to it.
"""

from __future__ import annotations

import base64
import hashlib
import re
import tomllib
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _project() -> dict:
    return tomllib.loads((HERE / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _dist_name(project: dict) -> str:
    return re.sub(r"[-_.]+", "_", project["name"]).lower()


def _metadata(project: dict) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}"]
    if project.get("description"):
        lines.append(f"Summary: {project['description']}")
    if project.get("requires-python"):
        lines.append(f"Requires-Python: {project['requires-python']}")
    lines += [f"Requires-Dist: {d}" for d in project.get("dependencies", [])]
    return "\n".join(lines) + "\n"


def _entry_points(project: dict) -> str:
    out = []
    for group, entries in project.get("entry-points", {}).items():
        out.append(f"[{group}]")
        out += [f"{name} = {value}" for name, value in entries.items()]
        out.append("")
    return "\n".join(out)


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = _project()
    name = _dist_name(project)
    dist_info = f"{name}-{project['version']}.dist-info"
    files: dict[str, bytes] = {}
    for init in sorted(HERE.glob("*/__init__.py")):
        for path in sorted(init.parent.rglob("*.py")):
            files[path.relative_to(HERE).as_posix()] = path.read_bytes()
    files[f"{dist_info}/METADATA"] = _metadata(project).encode()
    files[f"{dist_info}/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: backend.py\nRoot-Is-Purelib: true\n"
                                   b"Tag: py3-none-any\n")
    files[f"{dist_info}/entry_points.txt"] = _entry_points(project).encode()
    record = [_record_line(p, data) for p, data in files.items()] + [f"{dist_info}/RECORD,,"]
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel_name = f"{name}-{project['version']}-py3-none-any.whl"
    with zipfile.ZipFile(Path(wheel_directory) / wheel_name, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in files.items():
            zf.writestr(path, data)
    return wheel_name
