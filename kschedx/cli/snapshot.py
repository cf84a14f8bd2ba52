"""`kschedx snapshot`: parse, read the cluster, write the file, say what was written."""

from __future__ import annotations

import os
import sys

import click

from ..util.errors import KschedxError, UsageError
from .options import cluster_options
from .output import fail, warn
from .progress import read_progress

@click.command()
@click.option("-o", "--output", "path", required=True, metavar="FILE",
              help="Where to write: FILE.yaml, FILE.yml or FILE.json, optionally .gz.")
@click.option("--full", is_flag=True, default=False,
              help="Keep every field. By default only what scheduling reads is kept "
                   "(no env values, command, args, probes, managedFields, last-applied annotations).")
@cluster_options
def snapshot(path, full, cluster):
    """Write the live cluster as a fixture for explain/simulate --snapshot.

    Reads every kind the scheduler uses (never Secrets or ConfigMaps) and
    writes them in a fixed order: the same cluster state gives the same file.
    The file appears only when complete. For big clusters prefer .json.gz:
    much faster to write and to read back than YAML.

    \b
    Examples:
      kschedx snapshot -o cluster.yaml
      kschedx snapshot -o prod.json.gz --context prod
    """
    from ..commands import snapshot as snapshotting
    from ..sources.writer import Interrupted, check_writable, output_format

    try:
        output_format(path)
    except UsageError as e:
        raise click.BadParameter(str(e), param_hint="'-o' / '--output'") from None
    check_writable(path)  # an OutputError (exit 3) before the cluster is read, not after
    replaced = os.path.exists(path)
    try:
        conn = cluster.connect()
        try:
            with read_progress(conn) as progress:
                summary = snapshotting.snapshot(conn, path, full=full, progress=progress)
        finally:
            conn.close()
    except Interrupted as e:
        click.echo(f"kschedx: interrupted ({e}); {path} not written", err=True)
        sys.exit(128 + e.signum)
    except KeyboardInterrupt:
        click.echo(f"kschedx: interrupted; {path} not written", err=True)
        sys.exit(130)
    except KschedxError as e:
        fail(e)
    for w in summary.warnings:
        warn(w)
    counts = summary.counts
    other = sum(n for k, n in counts.items() if k not in ("Node", "Pod"))
    click.echo(f"wrote {path}{' (replacing the previous file)' if replaced else ''}: {counts.get('Node', 0):,} nodes, {counts.get('Pod', 0):,} pods, {other:,} other "
               f"objects ({'all fields' if full else 'fields scheduling reads'}, {_size(summary.size)})",
               err=True)


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"  # pragma: no cover


COMMAND = snapshot
