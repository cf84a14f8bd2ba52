from .cli.main import run

run(prog_name="kschedx")
