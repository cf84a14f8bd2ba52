"""The options commands share, as Click decorators: the pods and cluster
(POD_FILE arguments, --snapshot, --kubeconfig/--context, -n/-A/-l/
--field-selector, --all-pending), the scheduler to reproduce (--kube-version,
--feature-gates, --config, --sampling...), how the result is shown (-o, --node, --nodes, --report) and
how ties are broken (--tie-break, --seed).

Grouped options reach the command as one argument each: `cluster`
(a ClusterOptions), `selection` (a PodSelection), `scheduler` (a
cli.versions.SchedulerChoice: --kube-version, --feature-gates, --config)
and `sampling`.
"""

from __future__ import annotations

import functools
import re

import click

from ..render.outputs import OUTPUT_FORMATS
from .connection import ClusterOptions, Duration

def _set_debug(ctx, _param, value):
    if value:
        ctx.find_root().meta["kschedx.debug"] = True
    return value


debug_option = click.option(
    "--debug",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_set_debug,
    help="Show the full traceback of an internal error.",
)


snapshot_option = click.option(
    "--snapshot",
    "snapshot_paths",
    multiple=True,
    type=click.Path(allow_dash=True),
    help="Cluster fixture: a file, a directory, or - for stdin. Repeatable.",
)


output_option = click.option(
    "-o",
    "--output",
    type=click.Choice(OUTPUT_FORMATS),
    default="human",
    show_default=True,
    help="human: tables for people; wide: every column and node name; json/yaml: the SchedulingResult document, "
         "written as each pod is done; jsonl: one line per pod, then a closing summary line; "
         "junit, github (Actions annotations), tap: CI reports, one test per pod.",
)


tie_break_option = click.option(
    "--tie-break",
    type=click.Choice(("random", "name")),
    default="random",
    show_default=True,
    help="How one node is chosen among equal top scores: random like kube-scheduler, or the smallest name.",
)


seed_option = click.option("--seed", type=int, default=None, help="Seed for --tie-break random (reproducible runs).")


def _complete_node(ctx, _param, incomplete):
    """Node names of the --snapshot given so far, or of the live cluster (shell completion)."""
    from .completion import complete_names

    return complete_names(ctx, "Node", incomplete)


def complete_pod_files(ctx, _param, incomplete):
    """Files, and the pending pods of the snapshot or the live cluster (shell completion)."""
    from .completion import complete_pod_argument

    return complete_pod_argument(ctx, incomplete)


node_option = click.option(
    "--node",
    "node",
    default=None,
    metavar="NAME",
    shell_complete=_complete_node,
    help="Show one node's whole story: every filter verdict with details, every score raw → normalized × weight.",
)


def _complete_node_choice(ctx, _param, incomplete):
    """--nodes: the keywords, then node names (after the last comma of a list)."""
    from .completion import complete_names

    head, comma, last = incomplete.rpartition(",")
    keywords = [] if comma else [k for k in ("all", "failing", "top=") if k.startswith(incomplete)]
    return keywords + [head + comma + n for n in complete_names(ctx, "Node", last)]


def _parse_node_choice(_ctx, _param, value):
    from ..result.node_choice import NodeChoiceError, parse_node_choice

    try:
        return parse_node_choice(value)
    except NodeChoiceError as e:
        raise click.BadParameter(f"{e} (all, failing, top=N, or node names separated by commas)") from None


nodes_option = click.option(
    "--nodes",
    "nodes",
    default="all",
    show_default=True,
    metavar="all|failing|top=N|NAME,...",
    callback=_parse_node_choice,
    shell_complete=_complete_node_choice,
    help="Which nodes each pod's `nodes` list keeps: all; failing (not feasible, and the selected node); "
         "top=N (the N best-scored feasible nodes, the selected one among them); or the named nodes. "
         "Every other field, and filterSummary (plugin → reason → nodes), still covers every node.",
)


def _check_report_path(_ctx, _param, path):
    """Fail before scheduling anything rather than after it: an OutputError
    (exit 3), as for `snapshot -o` and as the write itself failing would be."""
    if path is not None:
        from ..sources.writer import check_writable

        check_writable(path)
    return path


report_option = click.option(
    "--report",
    "report",
    default=None,
    metavar="FILE.html",
    type=click.Path(),  # a directory is refused by the callback, with every other unwritable path
    callback=_check_report_path,
    help="Also write a self-contained HTML report (verdicts, filter heat map, score bars; "
         "for simulate, utilization before/after) to FILE.html.",
)


fix_option = click.option(
    "--fix",
    "fix",
    is_flag=True,
    help="For each unschedulable pod, the changes (to the pod or the cluster) that make it fit, what widens "
         "least first, each checked by running the scheduling cycle again with it (for a workload: by placing "
         "every replica again): a numbered list, `fixes` in json/yaml.",
)
simulate_fix_option = click.option(
    "--fix",
    "fix",
    is_flag=True,
    help="For each workload (and pod of its own) the run leaves with a pod not placed, the changes that place "
         "all of its pods, what widens least first, each checked by running the whole simulation again with it.",
)


_CLUSTER_OPTIONS = (
    click.option("--kubeconfig", metavar="FILE", default=None,
                 help="Read a live cluster through this kubeconfig (default: $KUBECONFIG, "
                      "merged like kubectl, else ~/.kube/config, else the pod's service account)."),
    click.option("--context", metavar="NAME", default=None,
                 help="The kubeconfig context to use (default: its current-context)."),
    click.option("--request-timeout", metavar="DURATION", type=Duration(), default="30s",
                 show_default=True, help="Give up on an API request after this long (30s, 2m)."),
)


def cluster_options(f):
    """--kubeconfig, --context and --request-timeout, passed to the command as
    `cluster=ClusterOptions(...)`."""

    @functools.wraps(f)
    def wrapper(*args, kubeconfig, context, request_timeout, **kwargs):
        return f(*args, cluster=ClusterOptions(kubeconfig, context, request_timeout), **kwargs)

    for option in reversed(_CLUSTER_OPTIONS):
        wrapper = option(wrapper)
    return wrapper


all_pending_option = click.option(
    "--all-pending", is_flag=True, default=False,
    help="Schedule every pending pod in the namespace (-n; -A: all namespaces).")


def _check_label_selector(_ctx, _param, value):
    if value is not None:
        from ..api.labels import SelectorError, parse_selector

        try:
            parse_selector(value)
        except SelectorError as e:
            raise click.BadParameter(str(e)) from None
    return value


def _check_field_selector(_ctx, _param, value):
    if value is not None:
        from ..api.selection import FieldSelectorError, parse_field_selector

        try:
            parse_field_selector(value)
        except FieldSelectorError as e:
            raise click.BadParameter(str(e)) from None
    return value


def _check_namespace(_ctx, _param, value):
    if value is not None and not _DNS_LABEL.fullmatch(value):
        raise click.BadParameter(f"{value!r} is not a namespace name (a DNS-1123 label: lower-case "
                                 "letters, digits and '-', at most 63)")
    return value


def _complete(kind: str):
    def complete(ctx, param, incomplete):
        from .completion import complete_names

        return complete_names(ctx, kind, incomplete)

    return complete


_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


namespace_option = click.option(
    "-n", "--namespace", metavar="NAMESPACE", default=None, callback=_check_namespace,
    shell_complete=_complete("Namespace"),
    help="The namespace of pods named without one and of the pending pods taken (default: the "
         "kubeconfig context's namespace on a cluster, every namespace of a snapshot).")


_SELECTION_OPTIONS = (
    namespace_option,
    click.option("-A", "--all-namespaces", is_flag=True, default=False,
                 help="Take pending pods from every namespace (overrides -n)."),
    click.option("-l", "--selector", metavar="SELECTOR", default=None, callback=_check_label_selector,
                 help="Take the pending pods whose labels match, in kubectl's syntax: "
                      "'app=web,tier!=db', 'env in (prod,qa)', '!canary'."),
    click.option("--field-selector", metavar="SELECTOR", default=None, callback=_check_field_selector,
                 help="Take the pending pods whose fields match: metadata.name, metadata.namespace, "
                      "spec.nodeName, spec.schedulerName, status.phase... with =, == or !=, joined by commas."),
)


def selection_options(f):
    """-n, -A, -l and --field-selector, passed to the command as
    `selection=PodSelection(...)`."""
    from ..api.selection import PodSelection

    @functools.wraps(f)
    def wrapper(*args, namespace, all_namespaces, selector, field_selector, **kwargs):
        return f(*args, selection=PodSelection(namespace, all_namespaces, selector, field_selector), **kwargs)

    for option in reversed(_SELECTION_OPTIONS):
        wrapper = option(wrapper)
    return wrapper


def config_options(f):
    """The scheduler to reproduce: --kube-version and --feature-gates (its
    version and gates), --config and --allow-unknown-plugins (the
    KubeSchedulerConfiguration), as one `scheduler` argument (a
    cli.versions.SchedulerChoice: `scheduler.resolve(workload)` gives the
    run's Features and SchedulerConfig or None); --sampling: how many nodes
    a cycle evaluates (a `sampling` argument)."""
    from .versions import feature_gates_option, kube_version_option

    @kube_version_option
    @feature_gates_option
    @click.option("--config", "config_path", default=None, metavar="FILE",
                  type=click.Path(allow_dash=True, dir_okay=False),
                  help="The cluster's KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1, YAML or JSON; "
                       "- for stdin): its profiles, plugin weights and args. Pods go to the profile of their "
                       "schedulerName.")
    @click.option("--allow-unknown-plugins", is_flag=True, default=False,
                  help="Plugins of --config that kschedx does not have (out-of-tree, not registered through the "
                       "kschedx.plugins entry points): list them in notEvaluated and go on, instead of exit 3.")
    @click.option("--sampling", type=click.Choice(("all", "upstream")), default="all", show_default=True,
                  help="all: evaluate every node, and say when kube-scheduler's node sampling "
                       "(percentageOfNodesToScore) could pick another node; upstream: stop searching after the "
                       "feasible nodes kube-scheduler looks for, starting where it would.")
    @click.option("--skip-extenders", is_flag=True, default=False,
                  help="Do not call the extenders of --config (filter, prioritize, preempt, bind): list them in "
                       "notEvaluated instead.")
    @functools.wraps(f)
    def wrapper(*args, kube_version, feature_gates, config_path, allow_unknown_plugins, skip_extenders, **kwargs):
        if allow_unknown_plugins and config_path is None:
            raise click.UsageError("--allow-unknown-plugins needs --config")
        if skip_extenders and config_path is None:
            raise click.UsageError("--skip-extenders needs --config (extenders come from its extenders: list)")
        if config_path is not None:
            stdin_elsewhere = "-" in (kwargs.get("snapshot_paths") or ()) or "-" in (kwargs.get("pod_files") or ())
            if config_path == "-" and stdin_elsewhere:
                raise click.UsageError("stdin (-) can be read only once: give it to --config or to the pods/"
                                       "snapshot, not both")
        from .versions import SchedulerChoice

        scheduler = SchedulerChoice(kube_version, feature_gates, config_path,
                                    allow_unknown_plugins=allow_unknown_plugins, skip_extenders=skip_extenders)
        return f(*args, scheduler=scheduler, **kwargs)

    return wrapper


def _check_validate(_ctx, _param, value):
    from ..sources.strict import parse_mode

    try:
        return parse_mode(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


validate_option = click.option(
    "--validate", "validate", default="strict", show_default=True, metavar="strict|warn|ignore",
    callback=_check_validate,
    help="How the objects of POD_FILEs and --snapshot files are checked against the API of the Kubernetes "
         "version reproduced, as kubectl apply's --validate: strict refuses an unknown or duplicate field "
         "(exit 3); warn reports them as warnings and goes on; ignore does not report them. A wrong type, or "
         "an apiVersion/kind that version does not serve, is refused whatever the setting. Files "
         "`kschedx snapshot` wrote, and a live cluster's objects, are not checked again.")


def workload_options(f):
    """The pods and cluster of explain and simulate (POD_FILE / NAMESPACE/NAME
    arguments, --snapshot or a live cluster, --all-pending) and how the result
    is shown and ties broken (-o, --tie-break, --seed)."""
    decorators = (
        click.argument("pod_files", nargs=-1, type=click.Path(allow_dash=True),
                       metavar="[POD_FILE | [NAMESPACE/]NAME]...", shell_complete=complete_pod_files),
        snapshot_option,
        cluster_options,
        selection_options,
        all_pending_option,
        output_option,
        tie_break_option,
        seed_option,
        config_options,
        validate_option,
    )
    for decorator in reversed(decorators):  # applied bottom-up, as stacked decorators are
        f = decorator(f)
    return f


# -- what if the cluster changes (docs/whatif.md) ---------------------------------------------------
def _split_nodes(_ctx, _param, values):
    names: list[str] = []
    for value in values or ():
        for name in value.split(","):
            name = name.strip()
            if not name:
                raise click.BadParameter(f"{value!r}: an empty node name (NODE[,NODE...])")
            if name not in names:
                names.append(name)
    return names


_DRAIN_OPTIONS = (
    click.option("--drain", "drain_nodes", multiple=True, metavar="NODE[,NODE...]", callback=_split_nodes,
                 shell_complete=_complete_node,
                 help="First drain these nodes as `kubectl drain --ignore-daemonsets` would, in this order: cordon, "
                      "evict through the PodDisruptionBudgets, each evicted pod recreated by its controller and "
                      "scheduled with the pending pods. Repeatable."),
    click.option("--force", is_flag=True, default=False,
                 help="With --drain: also delete pods no controller manages (they are lost), as kubectl drain --force."),
    click.option("--delete-emptydir-data", is_flag=True, default=False,
                 help="With --drain: also evict pods with emptyDir volumes, as kubectl drain --delete-emptydir-data."),
    click.option("--disable-eviction", is_flag=True, default=False,
                 help="With --drain: delete pods instead of evicting them, bypassing PodDisruptionBudgets, as "
                      "kubectl drain --disable-eviction."),
)


def drain_options(f):
    """--drain and kubectl drain's flags, passed to the command as `drain`: a
    whatif.drain.DrainOptions, or None without --drain."""

    @functools.wraps(f)
    def wrapper(*args, drain_nodes, force, delete_emptydir_data, disable_eviction, **kwargs):
        drain = None
        if drain_nodes:
            from ..whatif.drain import DrainOptions

            drain = DrainOptions(list(drain_nodes), force=force, delete_emptydir_data=delete_emptydir_data,
                                 disable_eviction=disable_eviction)
        else:
            for flag, on in (("--force", force), ("--delete-emptydir-data", delete_emptydir_data),
                             ("--disable-eviction", disable_eviction)):
                if on:
                    raise click.UsageError(f"{flag} needs --drain (it is one of kubectl drain's flags)")
        return f(*args, drain=drain, **kwargs)

    for option in reversed(_DRAIN_OPTIONS):
        wrapper = option(wrapper)
    return wrapper


node_template_option = click.option(
    "--node-template", "node_templates", multiple=True, metavar="FILE",
    type=click.Path(exists=True, allow_dash=False),
    help="A node pool's node: a Node manifest (labels, taints, allocatable), optionally with the ResourceSlices "
         "and static Pods such a node has. A file or a directory of them; repeatable.")


def _parse_add_nodes(_ctx, _param, value):
    if value is None or value == "auto":
        return value
    plan: dict[str, int] = {}
    for part in value.split(","):
        name, eq, count = part.partition("=")
        if not eq or not name or not count.isdigit() or int(count) < 1:
            raise click.BadParameter(f"{part!r}: give auto, or TEMPLATE=N[,TEMPLATE=N...] with N at least 1")
        plan[name] = plan.get(name, 0) + int(count)
    return plan


add_nodes_option = click.option(
    "--add-nodes", "add_nodes", default=None, metavar="auto|TEMPLATE=N,...", callback=_parse_add_nodes,
    help="With --node-template: auto adds the fewest template nodes that place every pending pod a template can "
         "take (each step the exact scheduling cycle) and says how many of which template, and why not the "
         "others; TEMPLATE=N adds those nodes.")
