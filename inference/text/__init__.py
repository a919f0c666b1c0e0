"""Report text: sentence splitting, negation and uncertainty cues, the entity lexicon (used by metrics and data
builders alike)."""
