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
