"""The README stays true: its commands, its graph picture and its CI link."""

from __future__ import annotations

import re
from pathlib import Path

from graph import graph

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_graph_picture_matches_the_compiled_graph():
    block = re.search(r"```mermaid\n(.*?)```", README, re.S)
    assert block, "the README has no mermaid picture"
    assert block.group(1).strip() == graph.get_graph().draw_mermaid().strip()


def test_ci_runs_the_readme_test_command():
    commands = re.findall(r"```bash\n(python3 -m venv[^\n]*)\n```", README)
    test_command = next(c for c in commands if "pytest" in c)
    assert test_command in (ROOT / ".ci" / "run").read_text()


def test_readme_demo_command_runs_the_demo():
    commands = re.findall(r"```bash\n(python3 -m venv[^\n]*)\n```", README)
    assert any(c.endswith("handover demo") for c in commands)
