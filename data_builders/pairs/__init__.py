"""Reference/candidate report pairs for GREEN: the builders' heuristics with their edit logs, and the teachers that
annotate them (programmatic, semantic, LLM), written as JSONL and HF datasets."""
