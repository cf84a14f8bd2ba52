__version__ = "0.1.0"
KUBERNETES_REFERENCE = "v1.35.4"
