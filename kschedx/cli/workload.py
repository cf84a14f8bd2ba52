"""The pods and cluster a command is about: POD_FILEs and pod names told
apart, then a Workload read from --snapshot files or from the live cluster
(commands/load.py reads; this only chooses, and says what is missing)."""

from __future__ import annotations

import os
import re

import click

from .connection import ClusterOptions
from .progress import read_progress

# A pod named on the command line: NAMESPACE/NAME, each a DNS-1123 name.
POD_REF = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[a-z0-9]([-a-z0-9.]*[a-z0-9])?")


# A pod named alone, as kubectl names it: its namespace comes from -n.
POD_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")


def split_pod_arguments(args) -> tuple[list[str], list[str]]:
    """POD_FILE arguments and pod names, told apart: an existing path, `-`, or
    a name ending like a fixture file (.yaml, .yml, .json, .gz: a missing file
    deserves "no such file") is a file; `namespace/name` and a bare pod `name`
    (in the -n namespace) are pods."""
    from ..sources.fixtures import FIXTURE_SUFFIXES

    files, refs = [], []
    for arg in args:
        looks_like_file = arg.endswith(FIXTURE_SUFFIXES + (".gz",))
        is_name = POD_REF.fullmatch(arg) or POD_NAME.fullmatch(arg)
        if arg == "-" or looks_like_file or os.path.exists(arg) or not is_name:
            files.append(arg)
        else:
            refs.append(arg)
    return files, refs


def load_workload(snapshot_paths, args, cluster: ClusterOptions, all_pending: bool = False, selection=None,
                  keep_raw: bool = False, read_ahead: bool = True, controllers: bool = False,
                  pods_optional: bool = False, validation=None):
    """The Workload of explain or simulate: from --snapshot files, or from the live
    cluster when --kubeconfig/--context, a pod name, --all-pending or a selection
    flag (-n, -A, -l, --field-selector) asks for it.

    Pending pods are taken (besides POD_FILEs and named pods) with --all-pending
    or a selector (-l, --field-selector), and when nothing else names pods: a
    snapshot's pending pods, or on a cluster those -n / -A point at.
    `controllers` (--drain, --node-template): a live read also reads the
    pods' controllers, and a snapshot warns if it could not read them;
    `pods_optional` (--drain): no pod need be named (a drain moves its own).
    `validation` (sources/strict.py): --validate and the version to check the
    files against."""
    from ..commands import load
    from ..api.selection import PodSelection

    selection = selection or PodSelection()
    files, refs = split_pod_arguments(args)
    take_pending = all_pending or selection.filters or (not (files or refs) and selection.given)
    if snapshot_paths:
        if cluster.given:
            raise click.UsageError("--snapshot reads a fixture, --kubeconfig/--context a live cluster: "
                                   "give one of them")
        # A snapshot has no current namespace: -n names one, else pods are taken from all.
        workload = load.load_workload(snapshot_paths, files, namespace=selection.namespace, keep_raw=keep_raw,
                                     read_ahead=read_ahead, validation=validation, pods_optional=pods_optional,
                                     controllers=controllers)
        if refs or take_pending:
            load.select_pods(workload, refs, all_pending=take_pending, keep=bool(files),
                            where=f"the snapshot ({', '.join(snapshot_paths)})", selection=selection)
        return workload
    if not (cluster.given or refs or take_pending):
        raise click.UsageError("--snapshot is required (a cluster fixture file or directory), or read a "
                               "live cluster with --kubeconfig/--context, pod names, --all-pending, "
                               "-n, -A or -l")
    if not (files or refs or take_pending or pods_optional):
        raise click.UsageError("which pods? give POD_FILEs, pod names (NAME with -n, or NAMESPACE/NAME), "
                               "--all-pending, -A, or a selector (-l, --field-selector)")
    conn = cluster.connect()
    try:
        with read_progress(conn) as progress:
            workload = load.load_workload_from_cluster(conn, files, refs, take_pending, progress=progress,
                                                      selection=selection, keep_raw=keep_raw,
                                                      controllers=controllers, pods_required=not pods_optional,
                                                      validation=validation)
    finally:
        conn.close()
    return workload
