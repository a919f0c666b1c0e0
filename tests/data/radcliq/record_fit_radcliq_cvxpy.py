"""How tests/data/radcliq/fit_radcliq_cvxpy.json was made: fit_radcliq's coefficients as the cvxpy implementation
computed them (c57bdbd, cvxpy 1.9.3, its default solver Clarabel), before fit_radcliq moved to scipy. Run with that
implementation installed:
`python tests/data/radcliq/record_fit_radcliq_cvxpy.py tests/data/radcliq/fit_radcliq_cvxpy.json`.
"""

import json
import sys

import cvxpy
import numpy as np

from radmetrics.inference.metrics.radcliq.composite import fit_radcliq


def cases():
    """Seven feature/error sets: interior and boundary solutions, no relation, a constant and correlated features."""
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, size=(160, 4))
    yield (
        "three_features_weighted",
        x,
        5 - (0.5 * x[:, 0] + 0.3 * x[:, 1] + 0.2 * x[:, 2]) * 4 + rng.normal(0, 0.05, 160),
    )
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, size=(80, 4))
    yield "two_features", x, 4 - 3 * x[:, 0] - x[:, 3] + rng.normal(0, 0.2, 80)
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 1, size=(60, 4))
    yield "errors_rise_with_a_feature", x, 2 + 2 * x[:, 1] - 0.5 * x[:, 2] + rng.normal(0, 0.3, 60)
    rng = np.random.default_rng(2)
    x = rng.uniform(0, 1, size=(50, 4))
    yield "unrelated", x, rng.integers(0, 6, 50).astype(float)
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 1, size=(40, 4))
    x[:, 2] = 0.5
    yield "one_constant_feature", x, 3 - x[:, 0] - 2 * x[:, 1] + rng.normal(0, 0.5, 40)
    rng = np.random.default_rng(4)
    base = rng.uniform(0, 1, size=(100, 1))
    x = np.hstack([base + rng.normal(0, 0.05, (100, 1)) for _ in range(4)])
    yield "correlated_features", x, 6 - 5 * base[:, 0] + rng.normal(0, 0.5, 100)
    rng = np.random.default_rng(5)
    x = rng.uniform(0, 1, size=(12, 4))
    yield "twelve_pairs", x, rng.integers(0, 4, 12).astype(float)


def main(path: str) -> None:
    recorded = {
        "recorded_with": f"cvxpy {cvxpy.__version__} (default solver), radmetrics fit_radcliq before scipy",
        "cases": [],
    }
    for name, x, errors in cases():
        fit = fit_radcliq(x, errors)
        recorded["cases"].append(
            {
                "name": name,
                "features": x.tolist(),
                "errors": errors.tolist(),
                "coefs_with_bias_last": fit["coefs_with_bias_last"],
            }
        )
        print(name, np.round(fit["coefs_with_bias_last"], 6))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(recorded) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
