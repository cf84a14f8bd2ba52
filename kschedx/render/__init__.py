"""Renderers of the result document: human and wide tables, JSON, YAML,
JSON lines, CI reports (junit, github, tap) and the HTML report. They read
the document only; outputs.py maps each -o format to its sink."""
