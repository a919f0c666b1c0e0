"""Command lines the tests give `radmetrics.inference.cli.main`, built in one place."""


def score_args(refs, hyps, out, *options) -> list[str]:
    """`radmetrics score --refs REFS --hyps HYPS [OPTIONS ...] --out OUT` as a list for main()."""
    return ["score", "--refs", str(refs), "--hyps", str(hyps), *options, "--out", str(out)]
