"""RadGraph F1: annotation dicts, reward levels, and the extractor that writes annotations."""
