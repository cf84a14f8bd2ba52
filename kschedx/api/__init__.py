"""Kubernetes API semantics the scheduler relies on, with apimachinery's
and component-helpers' behaviour: quantities, pod and node resources,
label and field selectors, taints and tolerations."""
