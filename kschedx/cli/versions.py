"""--kube-version, --feature-gates and --config together: which kube-scheduler
a command reproduces. The version is chosen once the workload is read:
--kube-version when given, else the API server's (read live, or recorded
in the snapshot's SnapshotInfo), else the newest kschedx knows. The gates
are then checked against that version's table, and the configuration
decoded as that version decodes it.

So that a mistake still fails before a cluster is read, the gates and the
configuration are checked at once against the version they will most
likely meet (--kube-version's, else the newest), and checked again only
when the version chosen turns out to be another.
"""

from __future__ import annotations

import click

from ..features import (
    NEWEST,
    FeatureGateError,
    Features,
    VersionError,
    parse_flag_values,
    parse_kube_version,
    supported_text,
)
from ..util.errors import KschedxError, UsageError


def check_kube_version(_ctx, _param, value):
    """--kube-version as typed -> a supported minor, or a usage error listing them."""
    if value is None:
        return None
    try:
        return parse_kube_version(value)
    except VersionError as e:
        raise click.BadParameter(str(e)) from None


def check_feature_gates(_ctx, _param, values):
    """The syntax of --feature-gates (the gates are checked against the version later)."""
    try:
        parse_flag_values(values or ())
    except FeatureGateError as e:
        raise click.BadParameter(str(e)) from None
    return tuple(values or ())


kube_version_option = click.option(
    "--kube-version", "kube_version", metavar="VERSION", default=None, callback=check_kube_version,
    help=f"The Kubernetes version whose kube-scheduler to reproduce: {supported_text()} (a patch release "
         "such as v1.36.0 is read as its minor). Default: the API server's version (read from the cluster, or "
         f"recorded in the snapshot), else {NEWEST}.")

feature_gates_option = click.option(
    "--feature-gates", "feature_gates", metavar="NAME=BOOL,...", multiple=True, callback=check_feature_gates,
    help="kube-scheduler's own flag: feature gates set otherwise than the version's defaults, as "
         "NAME=BOOL pairs separated by commas (for example DRADeviceTaints=false); repeatable. Checked as "
         "kube-scheduler checks them: unknown gates, gates locked to their default, dependencies.")


class SchedulerChoice:
    """What --kube-version, --feature-gates and --config ask for; `resolve`
    turns it into the run's Features and SchedulerConfig."""

    def __init__(self, kube_version: str | None, feature_gates=(), config_path: str | None = None, *,
                 allow_unknown_plugins: bool = False, skip_extenders: bool = False):
        self.kube_version = kube_version
        self.feature_gates = tuple(feature_gates)
        self.settings = parse_flag_values(self.feature_gates)
        self.config_path = config_path
        self.allow_unknown_plugins = allow_unknown_plugins
        self.skip_extenders = skip_extenders
        self._text = self._source = None
        if config_path is not None:
            from ..config.load import read_config_text

            self._text, self._source = read_config_text(config_path)
        # Checked at once against the likely version; kept when it is the one chosen.
        self._early: tuple[Features, object] | None = None
        self._early_error: KschedxError | None = None
        try:
            self._early = self._build(kube_version or NEWEST)
        except KschedxError as e:
            if kube_version is not None:
                raise
            self._early_error = e

    @property
    def config_given(self) -> bool:
        return self.config_path is not None

    def _build(self, version: str):
        try:
            features = Features(version, self.settings)
        except FeatureGateError as e:
            raise UsageError(f"--feature-gates: {e} (kube-scheduler {version})") from None
        config = None
        if self._text is not None:
            from ..framework.configured import parse_config

            config = parse_config(self._text, self._source, allow_unknown_plugins=self.allow_unknown_plugins,
                                  features=features)
            config.skip_extenders = self.skip_extenders
        return features, config

    def resolve(self, workload=None):
        """(Features, SchedulerConfig or None) for a workload read: the
        version --kube-version chose, else the server's, else the newest. A
        server version kschedx does not reproduce adds a warning to the
        workload naming the version used instead."""
        from ..features.versions import run_version

        server = getattr(getattr(workload, "cluster", None), "server_version", None)
        version, warning = run_version(self.kube_version, server)
        if warning is not None:
            workload.warnings.insert(0, warning)
        if self._early is not None and self._early[0].version == version:
            features, config = self._early
        elif self._early_error is not None and version == NEWEST:
            raise self._early_error
        else:
            features, config = self._build(version)
        if workload is not None:
            workload.warnings.extend(w for w in features.warnings if w not in workload.warnings)
        return features, config
