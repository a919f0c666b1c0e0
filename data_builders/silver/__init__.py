"""Silver labels for the encoder recipes: the CheXpert-style rule labeler, RaTE-NER entities, RadGraph-style graphs,
written as datasets with their cards."""
