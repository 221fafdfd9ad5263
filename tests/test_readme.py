"""The README stays true: its commands, its graph picture and its CI link."""

from __future__ import annotations

import re
from pathlib import Path

from specialist_handover.graph import graph

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


def _python_block_after(heading: str) -> str:
    section = README[README.index(heading) :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_python_caller_snippet_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code = _python_block_after("## From Python").replace("/abs/path/to/project", str(tmp_path))
    exec(compile(code, "README.md", "exec"), {})
    printed = capsys.readouterr().out
    assert printed.startswith("frontend_designer ")
    assert (tmp_path / "checkpoints.sqlite").exists()


def test_readme_tool_snippet_runs(tmp_path, capsys):
    code = _python_block_after("## The tool on its own").replace(
        "/abs/path/to/project", str(tmp_path)
    )
    exec(compile(code, "README.md", "exec"), {})
    printed = capsys.readouterr().out
    assert printed.startswith('{"status": "ok", "persona_marker": "[frontend designer]"')


def test_readme_customise_snippets_run(tmp_path, monkeypatch):
    """The profile file shown is valid, and both ways of passing profiles build a graph."""
    monkeypatch.chdir(tmp_path)
    section = README[README.index("## Customise") :]
    profile_file = re.search(r"```markdown\n(.*?)```", section, re.S).group(1)
    (tmp_path / "my-profiles").mkdir()
    (tmp_path / "my-profiles" / "data_scientist.md").write_text(profile_file, encoding="utf-8")
    namespace: dict = {}
    exec(compile(_python_block_after("**Your own specialists.**"), "README.md", "exec"), namespace)
    assert "data_scientist" in namespace["graph"].get_graph().nodes
    from specialist_handover.specialists import load_profile_dir

    (profile,) = load_profile_dir(tmp_path / "my-profiles")
    assert profile.tools == ("workspace",) and profile.marker == "[data scientist]"


def test_readme_your_own_agent_snippet_builds_a_graph_with_your_agent_in_its_place():
    namespace: dict = {}
    exec(compile(_python_block_after("**Your own agents.**"), "README.md", "exec"), namespace)
    graph = namespace["graph"]
    assert "docs_writer" in graph.get_graph().nodes
    assert "docs_writer:model" in graph.get_graph(xray=True).nodes  # its own loop, drawn


def test_ci_runs_the_linters_and_a_real_postgres_and_the_makefile_has_the_tasks():
    ci = (ROOT / ".ci" / "run").read_text()
    for line in (".venv/bin/ruff format --check .", ".venv/bin/ruff check .", ".venv/bin/mypy"):
        assert line in ci.splitlines()
    assert "source .ci/postgres.sh" in ci
    makefile = (ROOT / "Makefile").read_text()
    for target in ("test:", "lint:", "bench:", "serve:"):
        assert f"\n{target}" in makefile
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
