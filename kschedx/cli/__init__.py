"""The command line (top layer): Click commands that parse, call one command
of commands/, hand its result to a renderer, and exit with its code. Heavy
modules (the kubernetes client, Rich) are imported only by the commands
that need them. main.py is the entry point."""
