"""RadFact: phrase splitting and entailment prompts, box precision, and the metric."""
