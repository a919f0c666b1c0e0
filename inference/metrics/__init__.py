"""Metric implementations; each module names the reference whose behaviour it reproduces."""
