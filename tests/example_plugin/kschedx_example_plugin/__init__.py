"""An example distribution of kschedx plugins (see nodelabel.py)."""
