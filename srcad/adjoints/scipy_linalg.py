"""Adjoints of scipy.linalg."""
