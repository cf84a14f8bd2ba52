"""Process-level helpers with no Kubernetes knowledge: the errors that end a
command with its exit code, the garbage collector's policy for big loads,
and worker processes forked after loading."""
