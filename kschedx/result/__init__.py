"""The SchedulingResult document (result-schema.md) and the sinks it goes
to while it is computed: each pod's document (document.py), its node
records (node_record.py, and faster equal forms in node_dicts.py and
node_text.py), which node records are kept (node_choice.py)."""
