"""Scoring reports with many metrics: the Scorer, the metric registry, options, signatures, bootstrap statistics,
baselines, rewards and `evaluate` modules."""
