"""The in-tree plugins of kube-scheduler, one module (or package) per upstream
plugin; the registry (framework/registry.py) loads them by name."""
