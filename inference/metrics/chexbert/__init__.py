"""CheXbert: the labeler model, its runner over text, label F1 and vector similarity."""
