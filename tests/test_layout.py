"""The layout's rules that no linter checks: no two modules import each other (a circle, even through a function-level
import, means one of them holds what both need), and inference imports nothing from training: scoring installs and runs
without the training stack."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {
    "training": "radmetrics.training",
    "data_builders": "radmetrics.data_builders",
    "inference": "radmetrics.inference",
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    name = ".".join((PACKAGES[parts[0]], *parts[1:]))
    return name.removesuffix(".__init__")


def imported_modules(path: Path, known: set[str]) -> set[str]:
    """Every radmetrics module `path` imports, at any level of the file, as module names in `known`."""
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)] if node.level else []
            target = ".".join(base + ([node.module] if node.module else [])) if node.level else node.module or ""
            candidates = [target] + [f"{target}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        else:
            continue
        found.update(c for c in candidates if c in known and c != here)
    return found


def import_graph() -> dict[str, set[str]]:
    files = [p for folder in PACKAGES for p in (ROOT / folder).rglob("*.py")]
    known = {module_name(p) for p in files}
    return {module_name(p): imported_modules(p, known) for p in files}


def test_no_two_modules_import_each_other():
    graph = import_graph()
    circles = sorted({tuple(sorted((a, b))) for a, targets in graph.items() for b in targets if a in graph.get(b, ())})
    assert circles == []


def test_inference_imports_nothing_from_training():
    graph = import_graph()
    crossing = {
        a: sorted(t for t in targets if t.startswith("radmetrics.training"))
        for a, targets in graph.items()
        if a.startswith("radmetrics.inference")
    }
    assert {a: t for a, t in crossing.items() if t} == {}


def test_every_bundled_data_file_ships_as_package_data():
    """An editable install reads data files from the checkout, so a file that no package-data pattern matches works
    here and is missing from a wheel (the CheXpert phrase lists, four folders down, once were)."""
    import fnmatch

    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    unshipped = []
    for package, patterns in config["package-data"].items():
        folder = ROOT / config["package-dir"][package]
        for path in folder.rglob("*"):
            relative = path.relative_to(folder).as_posix()
            if path.is_file() and path.suffix != ".py" and "__pycache__" not in relative:
                if not any(fnmatch.fnmatch(relative, p) and relative.count("/") == p.count("/") for p in patterns):
                    unshipped.append(f"{package}: {relative}")
    assert unshipped == []
