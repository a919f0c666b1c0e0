"""BERTScore: the metric and the rescaling-baseline maker."""
