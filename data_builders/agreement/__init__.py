"""Agreement of the silver labelers with gold annotations: the rule labeler with NegBio's 14 labels, the silver
RadGraph extractor with the radgraph package's gold."""
