"""KubeSchedulerConfiguration: decoding, defaulting, validation."""
