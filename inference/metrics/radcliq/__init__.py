"""RadCliQ: the composite formula, its constants and the constrained refit."""
