"""Command lines the tests give `radmetrics.inference.cli.main`, built in one place."""


def score_args(refs, hyps, out, *options) -> list[str]:
    """`radmetrics score --refs REFS --hyps HYPS [OPTIONS ...] --out OUT` as a list for main()."""
    return ["score", "--refs", str(refs), "--hyps", str(hyps), *options, "--out", str(out)]


def workload_args(workload) -> list[str]:
    """`--refs` and `--hyps` reading the "ref" and "hyp" fields of one JSON file of pairs."""
    return ["--refs", str(workload), "--ref-field", "ref", "--hyps", str(workload), "--hyp-field", "hyp"]


def score_in(folder, *options, refs="refs.txt", hyps="hyps.txt", out="out") -> int:
    """`radmetrics score` on FOLDER/refs.txt and FOLDER/hyps.txt into FOLDER/out (other names by keyword), with
    OPTIONS: main()'s exit code."""
    from radmetrics.inference.cli import main

    return main(score_args(folder / refs, folder / hyps, folder / out, *options))


def compare_in(folder, *options, out="cmp") -> int:
    """`radmetrics compare` of FOLDER/a.txt against FOLDER/b.txt on FOLDER/refs.txt into FOLDER/OUT, with OPTIONS:
    main()'s exit code."""
    from radmetrics.inference.cli import main

    files = ["--refs", folder / "refs.txt", "--system-a", folder / "a.txt", "--system-b", folder / "b.txt"]
    return main(["compare", *map(str, files), *options, "--out", str(folder / out)])
