"""Jupyter notebook submissions: the code cells of an ``.ipynb`` become one Python file.

A candidate who works in Jupyter uploads the notebook itself (``grade submit ID FILE.ipynb``, the
service's upload form and API). ``nbformat`` reads and validates it; its code cells, in order, are
joined into the source the sandbox receives as ``submission.py`` (the sandbox never sees the JSON);
IPython syntax that is not Python is removed and said in a note (line magics ``%...``, cell magics
``%%...`` (the whole cell), shell escapes ``!...`` and their assignments ``x = !ls``, help lines
``name?``). Every joined line keeps where it came from, so a message that points at a line of
``submission.py`` (a syntax error, a traceback, the static API scan) also says which cell and line
(``NotebookSource.relocate``). Cells are numbered as the notebook shows them, from 1, counting every
cell (markdown and raw cells too); lines within a cell from 1.

The scorecard keeps the original file's sha256 (of the ``.ipynb`` bytes) and, under
``submission.notebook``, the cell count, the removed lines and the note.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from grader.pyparse import parse

#: What replaces a removed line: a statement at the same indentation, so that the line numbers of
#: the joined file stay those of the cells and a magic inside a block never leaves the block empty.
REMOVED_LINE = "pass  # removed by the grader: IPython syntax, not Python"

_ASSIGNED_ESCAPE = re.compile(r"^[A-Za-z_][\w\s,()\[\]]*=\s*[!%]")
_HELP = re.compile(r"^[\w.]+\?\??$|^\?\??[\w.]+$")


class NotebookInvalid(ValueError):
    """The bytes are not a readable Jupyter notebook (not JSON, not nbformat 4, invalid)."""


@dataclass(frozen=True)
class RemovedLine:
    """A line of a code cell left out of the submission.

    Attributes:
        cell: the cell's number in the notebook (1-based, every cell counted).
        line: the line's number in the cell (1-based).
        text: the line as written (cut to 200 characters).
        kind: ``line magic``, ``cell magic`` (the whole cell is left out; its ``%%`` line is the one
            recorded), ``shell escape`` or ``help``.
    """

    cell: int
    line: int
    text: str
    kind: str


@dataclass(frozen=True)
class NotebookSource:
    """The Python file made of a notebook's code cells.

    Attributes:
        text: the joined source (a blank line between two cells; ends with a newline).
        origin: for line ``n`` of ``text`` (1-based), ``origin[n - 1]`` is ``(cell, line)`` in the
            notebook, or None for a separator line the grader added.
        cells: how many cells the notebook has (every kind).
        code_cells: how many of them are code cells.
        removed: lines left out, in notebook order.
    """

    text: str
    origin: tuple[tuple[int, int] | None, ...]
    cells: int
    code_cells: int
    removed: tuple[RemovedLine, ...]

    def where(self, line: int) -> str | None:
        """``"cell 3, line 2"`` for line ``line`` (1-based) of ``text``, or None outside the cells."""
        if not 1 <= line <= len(self.origin) or self.origin[line - 1] is None:
            return None
        cell, in_cell = self.origin[line - 1]
        return f"cell {cell}, line {in_cell}"

    def relocate(self, message: str) -> str:
        """``message`` with every reference to a line of ``submission.py`` followed by its cell and
        line: ``File ".../submission.py", line 12`` (tracebacks), ``at line 12`` (the API scan) and
        ``(line 12)`` (a syntax error) become ``... line 12 [cell 3, line 2]``. Other numbers are left
        alone."""
        def add(match: re.Match) -> str:
            where = self.where(int(next(g for g in match.groups() if g is not None)))
            return match.group(0) + (f" [{where}]" if where else "")

        return _LINE_REFS.sub(add, message)

    def note(self) -> str:
        """One sentence for the scorecard: which cells were graded and what was removed."""
        said = (f"Graded the {self.code_cells} code cell{'s' if self.code_cells != 1 else ''} of the notebook "
                f"({self.cells} cell{'s' if self.cells != 1 else ''}) as one file, in order")
        if not self.removed:
            return said + "."
        shown = "; ".join(f"cell {r.cell}, line {r.line}: {r.text}" for r in self.removed[:10])
        more = f"; and {len(self.removed) - 10} more" if len(self.removed) > 10 else ""
        return (f"{said}; {len(self.removed)} line{'s' if len(self.removed) != 1 else ''} of IPython syntax "
                f"(magics, shell escapes) removed, not run: {shown}{more}.")

    def to_json(self) -> dict:
        """``submission.notebook`` of the scorecard (see ``scorecard.schema.json``)."""
        return {"cells": self.cells, "code_cells": self.code_cells, "note": self.note(),
                "removed": [{"cell": r.cell, "line": r.line, "text": r.text, "kind": r.kind} for r in self.removed]}


#: The three ways a message points at a line of the submission (see ``NotebookSource.relocate``).
_LINE_REFS = re.compile(r'File "(?:[^"\n]*[/\\])?submission\.py", line (\d+)|\bat line (\d+)|\(line (\d+)\)')


def is_notebook_name(name: str) -> bool:
    """Whether a file name (a path or an upload's name) is a Jupyter notebook's (``.ipynb``, any case)."""
    return str(name).lower().endswith(".ipynb")


def _kind(stripped: str) -> str | None:
    """The kind of IPython syntax a stripped line is, or None for Python."""
    if stripped.startswith("%%"):
        return "cell magic"
    if stripped.startswith("%"):
        return "line magic"
    if stripped.startswith("!"):
        return "shell escape"
    if _ASSIGNED_ESCAPE.match(stripped):
        return "shell escape" if "!" in stripped.split("=", 1)[1][:2] else "line magic"
    if _HELP.match(stripped):
        return "help"
    return None


def _parses(text: str) -> bool:
    try:
        parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def read_notebook(data: bytes) -> NotebookSource:
    """Read a notebook's bytes into the Python file of its code cells.

    Args:
        data: the ``.ipynb`` file's bytes (JSON, UTF-8).
    Returns:
        The joined source with its line origins and the removed lines.
    Raises:
        NotebookInvalid: not JSON, not an nbformat 4 notebook, or invalid against nbformat's schema;
            the message says why in one sentence.
    """
    import nbformat  # noqa: PLC0415 - notebooks only

    try:
        text = data.decode("utf-8-sig")
        json.loads(text)
    except UnicodeDecodeError as exc:
        raise NotebookInvalid(f"it is not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise NotebookInvalid(f"it is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    try:
        nb = nbformat.reads(text, as_version=4)
        nbformat.validate(nb)
    except nbformat.ValidationError as exc:
        raise NotebookInvalid(f"it is not a valid notebook ({_first_line(exc)})") from None
    except Exception as exc:  # noqa: BLE001 - nbformat raises many kinds for a bad document
        raise NotebookInvalid(f"nbformat cannot read it ({type(exc).__name__}: {_first_line(exc)})") from None
    lines: list[str] = []
    origin: list[tuple[int, int] | None] = []
    removed: list[RemovedLine] = []
    code_cells = 0
    for index, cell in enumerate(nb.cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        code_cells += 1
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        cell_lines = source.splitlines()
        first = next((ln.strip() for ln in cell_lines if ln.strip()), "")
        whole_cell = first.startswith("%%")
        keep_verbatim = not whole_cell and _parses(source)
        if lines and cell_lines:
            lines.append("")
            origin.append(None)
        for number, line in enumerate(cell_lines, start=1):
            stripped = line.strip()
            kind = None if keep_verbatim else ("cell magic" if whole_cell and stripped else _kind(stripped))
            if kind is not None:
                if not whole_cell or stripped.startswith("%%"):  # a cell magic is said once, by its line
                    removed.append(RemovedLine(index, number, stripped[:200], kind))
                indent = line[: len(line) - len(line.lstrip())] if not whole_cell else ""
                line = indent + REMOVED_LINE
            lines.append(line)
            origin.append((index, number))
    return NotebookSource(text="\n".join(lines) + ("\n" if lines else ""), origin=tuple(origin),
                          cells=len(nb.cells), code_cells=code_cells, removed=tuple(removed))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__



def looks_like_notebook(data: bytes) -> bool:
    """Whether stored submission bytes are a notebook rather than a Python file: the first byte after
    a UTF-8 byte-order mark and white space is ``{`` (a notebook is a JSON object; a Python solution
    never starts with a dict display). Used where only the bytes travel (the service's queue), so
    that a malformed notebook still gets the notebook's ``compile_error``, not a Python syntax error."""
    head = bytes(data[:4096])
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    return head.lstrip()[:1] == b"{"


def shown_text(data: bytes) -> str:
    """A stored submission as a person reads it (the interviewer's source view, the attempt diff):
    a notebook's code cells as graded (each line where the grader's messages point), any other file
    (or a notebook that cannot be read) as its bytes decoded with replacement."""
    text = submission_text(data) if looks_like_notebook(data) else None
    return text if text is not None else data.decode("utf-8", errors="replace")


def submission_text(data: bytes) -> str | None:
    """The Python text a submission's bytes are graded as: the joined code cells of a notebook
    (``looks_like_notebook``), the decoded file otherwise; None when it cannot be read (for display
    and track detection only, never for grading)."""
    try:
        if looks_like_notebook(data):
            return read_notebook(data).text
        import importlib.util  # noqa: PLC0415

        return importlib.util.decode_source(data)
    except (NotebookInvalid, SyntaxError, UnicodeDecodeError, ValueError):
        return None
