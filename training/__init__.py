"""radmetrics.training: recipes that train the learned components (one module per component/stage)."""
