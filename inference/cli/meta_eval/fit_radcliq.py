"""`radmetrics meta-eval fit-radcliq`: refit RadCliQ-v1's constrained composite on human error counts."""

from __future__ import annotations

import numpy as np

from ...files.json_io import dumps, write_json
from ...files.judgement_files import number_column, read_rows
from ...metrics.radcliq.composite import FEATURES, cross_validate_radcliq, fit_radcliq


def run(args) -> int:
    rows = read_rows(args.csv, [*FEATURES, args.human_column])
    features = np.array([number_column(rows, f, args.csv) for f in FEATURES]).T
    errors = np.array(number_column(rows, args.human_column, args.csv))
    params = fit_radcliq(features, errors)
    if args.folds > 1:
        params["held_out"] = cross_validate_radcliq(features, errors, args.folds, args.seed)
    write_json(args.out, params)
    print(dumps(params, indent=2))
    return 0
