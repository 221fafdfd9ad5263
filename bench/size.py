"""The package's size as the project counts it: non-blank lines that are neither `#` comments
nor docstrings, in the package root's `__init__.py` and `graph/ nodes/ specialists/ state/`.

    .venv/bin/python bench/size.py            # per folder and the total
    .venv/bin/python bench/size.py --files    # per file, largest first
"""

from __future__ import annotations

import argparse
import ast
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("graph", "nodes", "specialists", "state")


def docstring_lines(tree: ast.AST) -> set[int]:
    """The line numbers of every module, class and function docstring."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                found.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return found


def counted_lines(path: Path) -> int:
    text = path.read_text(encoding="utf-8")
    skip = docstring_lines(ast.parse(text))
    return sum(
        1
        for number, line in enumerate(text.splitlines(), 1)
        if line.strip() and not line.strip().startswith("#") and number not in skip
    )


def package_files() -> list[Path]:
    return [ROOT / "__init__.py"] + [
        path for folder in FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", action="store_true", help="per file, largest first")
    args = parser.parse_args()
    counts = {path.relative_to(ROOT): counted_lines(path) for path in package_files()}
    if args.files:
        for path, lines in sorted(counts.items(), key=lambda item: -item[1]):
            print(f"{lines:6,}  {path}")
    else:
        folders: Counter[str] = Counter()
        for path, lines in counts.items():
            folders[str(path.parent) if len(path.parts) > 1 else "__init__.py"] += lines
        for folder, lines in sorted(folders.items()):
            print(f"{lines:6,}  {folder}")
    print(f"{sum(counts.values()):6,}  total ({len(counts)} files)")


if __name__ == "__main__":
    main()
