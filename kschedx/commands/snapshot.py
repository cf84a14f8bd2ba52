"""`kschedx snapshot`: the live cluster read and written as a fixture file."""

from __future__ import annotations

from ..sources.admission import object_ref
from ..util.errors import InputError
from .load import served_wrong_shape, unreadable_warning

def snapshot(conn, path: str, *, full: bool = False, progress=None):
    """Write the cluster as a fixture file (sources/writer.py); returns its summary."""
    from ..sources.snapshot_info import snapshot_info
    from ..sources.writer import write_snapshot
    from ..sources.shape import check_shape

    read = conn.read_objects(progress, full=full, controllers=True)
    origin = f"cluster {conn.server}"
    for obj in read.objects:
        try:
            check_shape(obj, origin, object_ref(obj))
        except InputError as e:
            # Nothing is written: a snapshot kschedx could not read back is no snapshot.
            raise served_wrong_shape(e) from None
    info = snapshot_info(server=conn.server, context=conn.context_name, unreadable=read.unreadable,
                         fields="full" if full else "scheduling", version=read.version)
    summary = write_snapshot(path, read.objects, info)
    summary.warnings = read.warnings + [unreadable_warning(k, why) for k, why in sorted(read.unreadable.items())]
    return summary
