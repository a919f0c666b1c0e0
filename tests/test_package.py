import subprocess
import sys

from radmetrics.inference.cli import main


def test_inference_import_is_light():
    code = (
        "import sys, radmetrics.inference as m; m.COMPONENTS; heavy = [n for n in ('torch', 'transformers',"
        " 'huggingface_hub', 'radmetrics.training', 'radmetrics.data_builders') if n in sys.modules]; print(heavy);"
        " sys.exit(1 if heavy else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_cli_lists_subcommands(capsys):
    try:
        main(["--help"])
    except SystemExit as exc:
        assert exc.code == 0
    text = capsys.readouterr().out
    for name in ("data", "train", "export", "score", "meta-eval", "demo"):
        assert f"    {name}" in text


def test_console_script_runs():
    proc = subprocess.run(
        [sys.executable, "-m", "radmetrics.inference.cli", "export", "--help"], capture_output=True, text=True
    )
    assert proc.returncode == 0 and "--push-to-hub" in proc.stdout


def test_the_import_paths_the_docs_show_stay_the_modules_themselves():
    """README and docs import `radmetrics.inference.scorer`, `.rewards` and `.evaluate_modules`; since the code moved
    into scoring/, each is the moved module itself (so patching one patches the other)."""
    import importlib

    for name in ("scorer", "rewards", "evaluate_modules"):
        public = importlib.import_module(f"radmetrics.inference.{name}")
        assert public is importlib.import_module(f"radmetrics.inference.scoring.{name}")
    from radmetrics.inference import Scorer
    from radmetrics.inference.scorer import Scorer as documented

    assert Scorer is documented


def test_a_command_does_not_discover_the_metrics_until_it_needs_them():
    """Building the parser for any command leaves metric discovery (every metric module, every plugin) for later."""
    code = (
        "import sys; from radmetrics.inference.cli import build_parser; from radmetrics.inference.scoring import"
        " registry; build_parser(); print(registry._registry.cache_info().currsize)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "0"
