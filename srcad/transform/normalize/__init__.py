"""Normalizing passes: desugar, A-normal form, SSA renaming."""
