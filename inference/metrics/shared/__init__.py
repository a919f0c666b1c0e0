"""What several metrics share, on the floor below them (CONTRIBUTING.md, "Layers"): GREEN's answer format
(`green_format`: prompts, the response format, its parser; GREEN, the semantic GREEN teacher, the data builders and
the GREEN recipes read and write it) and its display (`green_display`), and cross-validation folds (`folds`: RadCliQ's
refit and RaTEScore's tuning). A metric imports these, never another metric's package."""
