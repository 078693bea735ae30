"""A second module for export tests: its SCALE differs from export_functions.SCALE."""

SCALE = 3.0


def rescale(v):
    return v * SCALE
