"""What if the cluster changes: a drain (kubectl drain, the Eviction API, the
disruption controller and the workload controllers, played between
scheduling cycles) and nodes added from node templates (which pool could take
a pod, how many nodes of which pool). Every placement is the run's own
scheduling cycle (framework/simulation.py); nothing here decides where a pod
goes."""
