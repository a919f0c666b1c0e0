"""Model code shared by several metrics and recipes: wrapped encoders, the span extractor, text embeddings."""
