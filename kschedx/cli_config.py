"""The --config / --allow-unknown-plugins / --sampling options of explain, simulate and bind."""

from __future__ import annotations

import click


def config_options(f):
    """--config and --allow-unknown-plugins: the KubeSchedulerConfiguration to
    evaluate pods with (one `scheduler_config` argument: a SchedulerConfig or None);
    --sampling: how many nodes a cycle evaluates (a `sampling` argument)."""
    import functools

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
    def wrapper(*args, config_path, allow_unknown_plugins, skip_extenders, **kwargs):
        scheduler_config = None
        if allow_unknown_plugins and config_path is None:
            raise click.UsageError("--allow-unknown-plugins needs --config")
        if skip_extenders and config_path is None:
            raise click.UsageError("--skip-extenders needs --config (extenders come from its extenders: list)")
        if config_path is not None:
            stdin_elsewhere = "-" in (kwargs.get("snapshot_paths") or ()) or "-" in (kwargs.get("pod_files") or ())
            if config_path == "-" and stdin_elsewhere:
                raise click.UsageError("stdin (-) can be read only once: give it to --config or to the pods/"
                                       "snapshot, not both")
            from .config.load import load_config

            scheduler_config = load_config(config_path, allow_unknown_plugins=allow_unknown_plugins)
            scheduler_config.skip_extenders = skip_extenders
        return f(*args, scheduler_config=scheduler_config, **kwargs)

    return wrapper
