"""The finding-pair judge's training pairs (build.py) and their command (command.py)."""
