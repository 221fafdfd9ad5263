"""The README and the docs stay true: their commands, snippets, graph picture and CI link.

Every Python snippet shown runs, every profile file shown parses, the graph's
picture is LangGraph's own drawing, and the README stays a page a newcomer reads.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from specialist_handover.graph import graph

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
GUIDE = (ROOT / "docs" / "GUIDE.md").read_text(encoding="utf-8")
DOCS = {"README.md": README, "docs/GUIDE.md": GUIDE}


def _python_block_after(text: str, heading: str) -> str:
    section = text[text.index(heading) :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]


def _run(code: str, name: str) -> dict:  # type: ignore[type-arg]
    namespace: dict = {}  # type: ignore[type-arg]
    exec(compile(code, name, "exec"), namespace)
    return namespace


def test_the_readme_is_short_with_a_quickstart_first_and_contents():
    assert len(README.encode("utf-8")) <= 15 * 1024
    first_screen = "\n".join(README.splitlines()[:45])
    assert "**Contents:**" in first_screen and "```python" in first_screen
    for link in re.findall(r"\]\((docs/[^)#]+)", README):
        assert (ROOT / link).is_file(), link


def test_the_guides_graph_picture_matches_the_compiled_graph():
    block = re.search(r"```mermaid\n(.*?)```", GUIDE, re.S)
    assert block, "docs/GUIDE.md has no mermaid picture"
    assert block.group(1).strip() == graph.get_graph().draw_mermaid().strip()


def test_ci_runs_the_readme_test_command():
    commands = re.findall(r"```bash\n(python3 -m venv[^\n]*)\n```", README)
    test_command = next(c for c in commands if "pytest" in c)
    assert test_command in (ROOT / ".ci" / "run").read_text()


def test_readme_demo_command_runs_the_demo():
    commands = re.findall(r"```bash\n(python3 -m venv[^\n]*)\n```", README)
    assert any(c.endswith("handover demo") for c in commands)


def test_readme_quickstart_runs(capsys):
    _run(_python_block_after(README, "## Quickstart"), "README.md")
    assert capsys.readouterr().out.startswith("frontend_designer says: ")


@pytest.mark.parametrize("doc", list(DOCS))
def test_the_python_caller_snippet_runs(doc, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _run(_python_block_after(DOCS[doc], "## From Python"), doc)  # verbatim
    assert capsys.readouterr().out.startswith("frontend_designer ")
    assert (tmp_path / "checkpoints.sqlite").exists()
    assert list((tmp_path / "my-project" / ".a0proj" / "handover").glob("*.md"))


def test_a_project_root_that_does_not_exist_fails_before_any_model_call():
    from langgraph.checkpoint.memory import InMemorySaver

    from specialist_handover import build_graph
    from tests.support.models import ScriptedChatModel

    model = ScriptedChatModel(script=[])
    built = build_graph(checkpointer=InMemorySaver(), model=model)
    config = {"configurable": {"thread_id": "t1"}}
    with pytest.raises(ValueError, match="project_root '/abs/path/to/project' does not exist"):
        built.invoke(
            {"messages": [("user", "hi")]},
            config,
            context={"project_root": "/abs/path/to/project", "model": "offline"},
        )
    assert model.requests == [] and built.get_state(config).values == {}


def test_the_guides_tool_snippet_runs(tmp_path, capsys):
    code = _python_block_after(GUIDE, "## The tool on its own")
    _run(code.replace("/abs/path/to/project", str(tmp_path)), "docs/GUIDE.md")
    printed = capsys.readouterr().out
    assert printed.startswith('{"status": "ok", "persona_marker": "[frontend designer]"')


@pytest.mark.parametrize("doc", list(DOCS))
def test_the_profile_file_shown_parses(doc, tmp_path):
    from specialist_handover.specialists import load_profile_dir

    section = DOCS[doc][DOCS[doc].index("## Customise") :]
    profile_file = re.search(r"```markdown\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]
    (tmp_path / "data_scientist.md").write_text(profile_file, encoding="utf-8")
    (profile,) = load_profile_dir(tmp_path)
    assert profile.tools == ("workspace",) and profile.marker == "[data scientist]"


def test_the_guides_profile_snippets_build_a_graph(tmp_path, monkeypatch):
    """Both ways of passing profiles shown in the guide build a graph with the new node."""
    monkeypatch.chdir(tmp_path)
    section = GUIDE[GUIDE.index("## Customise") :]
    profile_file = re.search(r"```markdown\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]
    (tmp_path / "my-profiles").mkdir()
    (tmp_path / "my-profiles" / "data_scientist.md").write_text(profile_file, encoding="utf-8")
    namespace = _run(_python_block_after(GUIDE, "**Your own specialists.**"), "docs/GUIDE.md")
    assert "data_scientist" in namespace["graph"].get_graph().nodes


@pytest.mark.parametrize("doc", list(DOCS))
def test_the_your_own_agent_snippet_builds_a_graph_with_your_agent_in_its_place(doc):
    graph = _run(_python_block_after(DOCS[doc], "**Your own agents.**"), doc)["graph"]
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
