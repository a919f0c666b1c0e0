"""Model loading: component schemas, the exported-checkpoint manifest, and local-path-first Hub resolution."""
