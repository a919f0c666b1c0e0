"""The finding-pair judge's recipe (pairs.py)."""
