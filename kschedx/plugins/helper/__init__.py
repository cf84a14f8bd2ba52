"""Helpers shared by plugins, as upstream's plugins/helper package."""
