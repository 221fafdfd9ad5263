"""No import cycles between the package's files (imports inside functions count too)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FOLDERS = ("graph", "nodes", "specialists", "state")


def module_of(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def files() -> dict[str, Path]:
    found = {module_of(p): p for folder in FOLDERS for p in (REPO / folder).rglob("*.py")}
    found[""] = REPO / "__init__.py"
    return found


def imports(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules `path` imports (a name imported from a package that is itself a
    module of it counts as that module)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".") if package else []
            base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
            target = ".".join([*base, *(node.module.split(".") if node.module else [])])
            for alias in node.names:
                sub = f"{target}.{alias.name}" if target else alias.name
                out.add(sub if sub in known else target)
    return {m for m in out if m in known and m != module}


def cycles() -> list[list[str]]:
    known = files()
    graph = {m: imports(m, p, known) for m, p in known.items()}
    found, state = [], {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                found.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [])
    return found


def test_no_file_imports_another_that_imports_it_back():
    # package faces (`__init__.py` that only hand names on) are left out: importing a
    # sibling through its package's face is not a cycle of code
    real = [c for c in cycles() if not any(files()[m].name == "__init__.py" for m in c)]
    assert real == []


def test_the_check_sees_a_cycle(tmp_path, monkeypatch):
    known = {"a": tmp_path / "a.py", "b": tmp_path / "b.py"}
    known["a"].write_text("def f():\n    from .b import g\n")
    known["b"].write_text("from .a import f\n")
    assert imports("a", known["a"], known) == {"b"} and imports("b", known["b"], known) == {"a"}
