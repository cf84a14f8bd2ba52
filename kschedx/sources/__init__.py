"""Where objects come from: fixture files and stdin, a live cluster, their
shapes checked, admission (defaulting) applied, workloads expanded into
their pods, and snapshot files written."""
