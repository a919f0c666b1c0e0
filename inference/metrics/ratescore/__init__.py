"""RaTEScore: RaTE-NER taggers, the score from entity embeddings, and W/p tuning."""
