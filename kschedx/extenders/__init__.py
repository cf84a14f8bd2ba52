"""Scheduler extenders (`extenders:` of a KubeSchedulerConfiguration): the
HTTP(S) client kube-scheduler's HTTPExtender is (client.py) and the wire
types of k8s.io/kube-scheduler/extender/v1 (wire.py). The scheduling cycle's
part (filter, prioritize, preempt, bind) is kschedx/framework/extenders.py.

Imported only when a configuration has extenders: the standard library's
http.client and ssl are not needed otherwise."""
