"""Recipes and benchmarks keep thin mains (parse, build, train, finish): featurising, metrics and evaluation are module
functions a test can call. A function over 80 lines in training/ or benchmarks/ is a step that wants a name of its own.
(data_builders/ joins the list when its CLI split lands; tests/ is not held to it.)"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HELD = ("training", "benchmarks", "data_builders")
LONGEST = 80


def long_functions(root: Path, folder: str) -> list[str]:
    """`path:line name (lines)` of each function or method under root/folder longer than LONGEST lines, nested ones
    included."""
    found = []
    for path in sorted((root / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > LONGEST:
                    found.append(f"{path.relative_to(root).as_posix()}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_in_recipes_or_benchmarks_is_over_80_lines():
    found = [entry for folder in HELD for entry in long_functions(ROOT, folder)]
    assert not found, "split these into named steps:\n" + "\n".join(found)


def body(statements: int, indent: int) -> str:
    return "".join(f"{' ' * indent}x{i} = {i}\n" for i in range(statements))


def test_a_function_of_81_lines_is_found_and_one_of_80_is_not(tmp_path):
    (tmp_path / "pkg").mkdir()
    source = (
        f"def fits():\n{body(LONGEST - 1, 4)}\n\n"
        f"def long():\n{body(LONGEST, 4)}\n\n"
        f"class C:\n    def outer(self):\n        def inner():\n{body(LONGEST, 12)}"
    )
    (tmp_path / "pkg" / "a.py").write_text(source, encoding="utf-8")
    long_start, outer_start = LONGEST + 3, 2 * LONGEST + 7
    assert long_functions(tmp_path, "pkg") == [
        f"pkg/a.py:{long_start} long (81 lines)",
        f"pkg/a.py:{outer_start} outer (82 lines)",
        f"pkg/a.py:{outer_start + 1} inner (81 lines)",
    ]
