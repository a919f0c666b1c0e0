"""FineRadScore: line numbering, the judge prompt and answer parsing, and the metric."""
