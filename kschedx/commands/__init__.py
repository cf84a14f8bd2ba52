"""What each command does, in order: load the workload (load.py), choose
the pods, schedule them (framework/), build the result (result/) and hand
it to a sink. explain.py, simulate.py, capacity.py, bind.py, snapshot.py:
one module per command. Renderers are not imported here: the CLI chooses
the sink."""
