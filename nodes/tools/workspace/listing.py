"""list_files: the files and folders under a folder of the project, recursively and sorted."""

from __future__ import annotations

from contextlib import closing

from ....state import TokenCounter
from .arguments import _check_budget
from .errors import _guarded
from .limits import MAX_WALK_ENTRIES, WORKSPACE_MAX_TOKENS
from .paths import _opened, _resolve
from .results import _printable, _render
from .walk import _walk, _walk_notes_line, _WalkNotes


def _listed(parts: tuple[str, ...], kind: str) -> str:
    """One listing line: folders end with '/', symlinks and special files are marked."""
    rel = _printable("/".join(parts))
    return {"dir": f"{rel}/", "link": f"{rel} -> (symlink)", "other": f"{rel} (special file)"}.get(
        kind, rel
    )


@_guarded("list_files")
def list_files(
    project_root: str,
    path: str = ".",
    *,
    counter: TokenCounter,
    max_tokens: int = WORKSPACE_MAX_TOKENS,
) -> str:
    """The files and folders under `path`, recursively and sorted, for an agent to find its way."""
    _check_budget(counter, max_tokens)
    target = _resolve(project_root, path)
    if target.kind == "file":
        return (
            f"{target.shown} is a file, not a folder (1 entry); call read_file({target.shown!r}) "
            f"to read it.\n{_printable(target.rel)}"
        )
    notes = _WalkNotes()
    body: list[str] = []
    with _opened(target, path) as fd, closing(_walk(fd, target.parts, notes)) as walk:
        for _parent, parts, kind in walk:
            if len(body) >= MAX_WALK_ENTRIES:
                notes.stopped = True
                break
            body.append(_listed(parts, kind))
    count = (
        f"first {len(body)} entries; there are more" if notes.stopped else f"{len(body)} entries"
    )
    head = [f"Files under {target.label} ({count}):"]
    if not body:
        head = [f"Files under {target.label} (0 entries): the folder is empty."]
    skipped = _walk_notes_line(notes, "listed")
    head += [skipped] if skipped else []
    return _render(
        head,
        body,
        counter=counter,
        max_tokens=max_tokens,
        hint="list a subfolder, e.g. list_files('src'), to see more",
    )
