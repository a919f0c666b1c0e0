"""radmetrics.data_builders: corpora, report pairs, perturbations, teachers and silver labels."""
