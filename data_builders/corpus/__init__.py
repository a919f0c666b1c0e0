"""Corpora: readers that return `Report` records, leak-free splits keyed by report text, leakage statistics, writers,
and the domain-pretraining corpus."""
