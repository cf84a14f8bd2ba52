"""The cluster as the scheduler holds it: the admitted API objects
(cluster.py), the NodeInfo/PodInfo snapshot (snapshot.py) and the indexes
plugins read from it (pod_index.py, node_columns.py, podaffinity.py)."""
