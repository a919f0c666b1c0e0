"""The layout's rules that no linter checks: no two modules import each other (a circle, even through a function-level
import, means one of them holds what both need), inference imports nothing from training: scoring installs and runs
without the training stack, and no docstring or comment leaves one word of a sentence alone on a line."""

import ast
import io
import re
import sys
import tokenize
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


def test_data_builders_import_nothing_from_training():
    """Above inference stand the data builders, and above them the recipes (which build their data, as the demo does):
    a data builder that imported a recipe would make the two one floor."""
    graph = import_graph()
    crossing = {
        a: sorted(t for t in targets if t.startswith("radmetrics.training"))
        for a, targets in graph.items()
        if a.startswith("radmetrics.data_builders")
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


ORPHAN = re.compile(r"^[A-Za-z][\w'’-]*[.,;:)]?$")  # one word, maybe with its punctuation


def orphan_words(path: Path) -> list[tuple[int, str]]:
    """(line, word) of every docstring or full-line comment line holding a single word between two lines of the same
    paragraph: a sentence broken by a re-wrap ("may run", then "its" alone, then "model on either")."""
    text = path.read_text(encoding="utf-8")
    comments = {}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT and not token.line[: token.start[1]].strip():
            comments[token.start[0]] = token.string.lstrip("#").strip()
    found = [
        (n, body) for n, body in comments.items() if ORPHAN.match(body) and comments.get(n - 1) and comments.get(n + 1)
    ]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)) and node.body:
            doc = ast.get_docstring(node, clean=False)
            if not doc:
                continue
            lines = doc.split("\n")
            found += [
                (node.body[0].lineno + i, line.strip())
                for i, line in enumerate(lines[1:-1], 1)
                if ORPHAN.match(line.strip()) and lines[i - 1].strip() and lines[i + 1].strip()
            ]
    return found


def test_no_docstring_or_comment_leaves_a_word_alone_on_a_line():
    files = [p for folder in (*PACKAGES, "benchmarks", "tests") for p in sorted((ROOT / folder).rglob("*.py"))]
    found = [f"{p.relative_to(ROOT)}:{n}: {word}" for p in files for n, word in orphan_words(p)]
    assert not found, "a word alone on a line (join it to its sentence):\n" + "\n".join(found)


def test_listing_the_metrics_loads_no_model_library():
    """`radmetrics score --list` answers at once: neither torch nor transformers is imported for it."""
    import subprocess
    import sys

    code = (
        "import contextlib, io, sys\n"
        "from radmetrics.inference.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['score', '--list']) == 0\n"
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# Modules that import a model library (torch, transformers) when they load: imported where a model is built, so that
# listing metrics, reading files and parsing options stay light (test_listing_the_metrics_loads_no_model_library).
LOADS_A_MODEL_LIBRARY = {
    "radmetrics.inference.metrics.chexbert.labeler",
    "radmetrics.inference.metrics.radgraph.dygie",
    "radmetrics.inference.models.span",
}


def test_inference_imports_its_own_modules_at_module_level():
    """A function-level import hides a module's layer from its reader (and from a linter); inference imports its own
    modules at the top of the file, except those that load a model library."""
    known = {module_name(p) for p in (ROOT / "inference").rglob("*.py")}
    inside = []
    for path in sorted((ROOT / "inference").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if not isinstance(node, ast.ImportFrom) or not (node.level or (node.module or "").startswith("radm")):
                    continue
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)] if node.level else []
                target = ".".join(base + ([node.module] if node.module else [])) if node.level else node.module
                if target in known and target not in LOADS_A_MODEL_LIBRARY:
                    inside.append(f"{path.relative_to(ROOT)}:{node.lineno}: {target}")
    assert not inside, "import these at module level:\n" + "\n".join(inside)


# The floors of inference/, lowest first (CONTRIBUTING.md, "Layers"): a module imports its own floor and the floors
# below it, never one above. Paths are relative to inference/; the longest matching prefix places a module, so a new
# folder or file that matches none fails `test_every_inference_module_stands_on_a_floor` until it is placed here and
# in CONTRIBUTING.
FLOORS = (
    ("statistics", ("scoring/stats.py",)),  # numbers only; stays in scoring/ while issue 65 item 5 rewrites it
    ("text", ("text/",)),
    (
        "file readers and low-level writers",
        (
            "files/__init__.py",
            "files/atomic.py",
            "files/json_io.py",
            "files/output_paths.py",
            "files/report_io.py",
            "files/judgement_files.py",
            "files/pair_stream.py",
            "files/score_stream.py",
            "files/compare_folder.py",
        ),
    ),
    ("loading", ("loading/", "resources/")),
    ("models and llm", ("models/", "llm/")),
    ("findings", ("findings/",)),
    ("what metrics share", ("metrics/__init__.py", "metrics/base.py", "metrics/display.py", "metrics/shared/")),
    ("metrics", ("metrics/",)),
    ("scoring", ("scoring/",)),
    ("report builders and meta-evaluation", ("files/report_html.py", "files/run_output.py", "meta_evaluation/")),
    ("runs", ("scoring/score_run.py",)),  # a streamed run into a folder, published with the report builders
    ("entry points", ("cli/", "__init__.py", "scorer.py", "rewards.py", "evaluate_modules.py")),
)
# On the metrics floor a metric imports no other metric's folder, except a composite the metrics it combines with
# models of its own (options radgraph_model and bertscore_model): {composite: ingredients}, each in its depends_on.
COMPOSITE_INGREDIENTS = {"radcliq": {"bertscore", "radgraph"}}


def floor_of(module: str) -> tuple[int, str, str] | None:
    """(index, floor, unit) of an inference module; the unit is the metric's folder on the metrics floor, else the
    floor itself; None for a module no floor places."""
    parts = module.split(".")[2:]
    candidates = ["/".join(parts) + ".py", "/".join(parts) + "/__init__.py"] if parts else ["__init__.py"]
    best = None
    for index, (floor, prefixes) in enumerate(FLOORS):
        for prefix in prefixes:
            if any(c.startswith(prefix) for c in candidates) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index, floor)
    if best is None:
        return None
    unit = parts[1] if best[2] == "metrics" and len(parts) > 1 else best[2]
    return best[1], best[2], unit


def test_every_inference_module_stands_on_a_floor():
    unplaced = sorted(m for m in import_graph() if m.startswith("radmetrics.inference") and floor_of(m) is None)
    assert unplaced == [], "place these in FLOORS (tests/test_layout.py) and in CONTRIBUTING's layers:\n" + "\n".join(
        unplaced
    )


def allowed_units(unit: str) -> set[str]:
    """What a module of metric `unit` may import on the metrics floor: its own folder and a composite's ingredients."""
    return {unit, *COMPOSITE_INGREDIENTS.get(unit, ())}


def module_path(module: str) -> str:
    """The file of a module, relative to the repository: `inference/metrics/base.py`, `inference/cli/__init__.py`."""
    base = ROOT / module.replace("radmetrics.inference", "inference").replace(".", "/")
    path = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
    return path.relative_to(ROOT).as_posix()


def upward_imports() -> list[str]:
    """Every import in inference/ of a module on a floor above the importer's (or, on the metrics floor, of another
    metric that is not one of a composite's ingredients), one line each naming the file and the two floors."""
    found = []
    for module, targets in sorted(import_graph().items()):
        if not module.startswith("radmetrics.inference"):
            continue
        low, floor, unit = floor_of(module)
        path = module_path(module)
        for target in sorted(t for t in targets if t.startswith("radmetrics.inference")):
            high, target_floor, target_unit = floor_of(target)
            if high > low:
                found.append(f"{path}: {floor} imports {target} from {target_floor}, a floor above")
            elif target_floor == floor == "metrics" and target_unit not in allowed_units(unit):
                found.append(f"{path}: metric {unit} imports {target} of metric {target_unit}")
    return found


def test_inference_imports_point_down():
    found = upward_imports()
    assert found == [], "upward imports (CONTRIBUTING.md, 'Layers'):\n" + "\n".join(found)


def test_the_layer_check_names_an_upward_import(tmp_path, monkeypatch):
    """The check itself: an import from a metric of the scoring floor is reported with both floors and the file."""
    graph = import_graph()
    graph["radmetrics.inference.metrics.lexical"] = graph["radmetrics.inference.metrics.lexical"] | {
        "radmetrics.inference.scoring.registry"
    }
    monkeypatch.setattr(sys.modules[__name__], "import_graph", lambda: graph)
    expected = "inference/metrics/lexical.py: metrics imports radmetrics.inference.scoring.registry from scoring"
    assert upward_imports() == [expected + ", a floor above"]


def test_composite_ingredients_are_what_the_composites_combine():
    from radmetrics.inference.scoring import registry

    for composite, ingredients in COMPOSITE_INGREDIENTS.items():
        assert ingredients <= set(registry.metrics()[composite].depends_on), composite
