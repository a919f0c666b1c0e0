"""The span recipes (rate_ner/span, radgraph/train) and what they share: the trainer with its span extractor and
learning rates, the one span scorer, and the relation head's decision offsets."""
