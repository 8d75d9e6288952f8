"""``grade review``: scorecards side by side in the terminal, and what changed between two attempts.

``review_tables`` builds one table per exercise (rows: submissions, labelled by the scorecard's file
name, which ``grade batch`` makes the candidate's name; columns: checks); ``diff_scorecards`` lists
what changed between attempt A and attempt B. Rendering is rich tables only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from grader.grading.scorecard import Scorecard, read_scorecard

#: One character per verdict, so a cohort fits on a screen.
VERDICT_GLYPHS = {
    "passed": ("✓", "green"),
    "failed": ("✗", "red"),
    "error": ("E", "red"),
    "timeout": ("T", "yellow"),
    "memory_limit": ("M", "yellow"),
    "forbidden": ("F", "magenta"),
    "skipped": ("-", "dim"),
}
LEGEND = "  ".join(f"{g} {v}" for v, (g, _s) in VERDICT_GLYPHS.items())


def glyph(verdict: str | None) -> Text:
    """The coloured one-character glyph of a verdict (blank for a check the scorecard lacks)."""
    if verdict is None:
        return Text(" ")
    char, style = VERDICT_GLYPHS.get(verdict, ("?", ""))
    return Text(char, style=style)


def label_of(path: Path) -> str:
    """How a scorecard is named in tables: its file name without ``.json``."""
    return Path(path).stem


@dataclass
class ReviewRow:
    """One submission in a review table."""

    label: str
    card: Scorecard
    verdicts: dict[str, str]


@dataclass
class ReviewTable:
    """One exercise's review: check ids (columns) and rows."""

    exercise: str
    title: str
    checks: list[str]
    hidden: set[str] = field(default_factory=set)
    rows: list[ReviewRow] = field(default_factory=list)


class CardsUnreadable(ValueError):
    """A path given to ``grade review``/``grade report`` is not a scorecard (or a folder or export of
    them); the message is one line naming the file and its first problem (a usage error, exit 2)."""


def _first_problem(exc: Exception) -> str:
    """One line for what is wrong with a document: the first schema error with its JSON path."""
    import jsonschema  # noqa: PLC0415

    if isinstance(exc, jsonschema.ValidationError):
        where = "/".join(str(p) for p in exc.absolute_path) or "the top level"
        message = exc.message if len(exc.message) <= 120 else exc.message[:117] + "..."
        return f"not a scorecard: at {where}: {message}"
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text (a binary file?)"
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return f"{type(exc).__name__}: {exc}".splitlines()[0]


def _cards_in_file(path: Path) -> list[tuple[str, Scorecard]]:
    """The scorecards of one file: a scorecard, or a JSON export (a list of scorecards, as written by
    ``--format json``) whose items are labelled by their submission file's stem."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(doc, list):
            if not doc:
                raise CardsUnreadable(f"{path}: an empty list, no scorecard in it")
            cards = []
            for i, item in enumerate(doc):
                try:
                    card = Scorecard.from_json(item)
                except Exception as exc:  # noqa: BLE001 - named, one line
                    raise CardsUnreadable(f"{path}: item {i}: {_first_problem(exc)}") from None
                stem = Path(str(card.submission.get("path") or f"item{i}")).stem
                cards.append((stem, card))
            return cards
        return [(label_of(path), Scorecard.from_json(doc))]
    except CardsUnreadable:
        raise
    except Exception as exc:  # noqa: BLE001 - any other problem: one line naming the file
        raise CardsUnreadable(f"{path}: {_first_problem(exc)}") from None


#: ``grade batch``'s own record beside its scorecards (``grader.cohort.batch.BATCH_RECORD``).
BATCH_RECORD_NAME = "batch.json"


def _is_batch_record(path: Path) -> bool:
    """Whether ``path`` is ``grade batch``'s ``batch.json`` (its name, and a JSON object that is no
    scorecard): what ``DIR/*.json`` picks up beside a batch's scorecards."""
    if path.name != BATCH_RECORD_NAME:
        return False
    doc = _peek(path)
    return isinstance(doc, dict) and "checks" not in doc


def load(paths: Sequence[Path], *, on_skip: Callable[[str], None] | None = None) -> list[tuple[str, Scorecard]]:
    """Read scorecards, labelled by file name.

    Each path is a scorecard file, a JSON export holding a list of scorecards (``--format json``),
    or a folder: every ``*.json`` under it that is a scorecard (``grade batch``'s output folder;
    its exports and other JSON files are left out). A batch's ``batch.json`` named among the files
    (``DIR/*.json``) is skipped, and ``on_skip`` is called with a one-line note saying so.

    Raises:
        CardsUnreadable: a path is missing, unreadable or not a scorecard, or a folder holds none
            (one line naming the file and its first problem).
    """
    cards: list[tuple[str, Scorecard]] = []
    for path in map(Path, paths):
        if path.is_dir():
            found = []
            for child in sorted(path.rglob("*.json")):
                if any(part.startswith(".") for part in child.relative_to(path).parts):
                    continue
                try:
                    found += _cards_in_file(child) if not isinstance(_peek(child), list) else []
                except CardsUnreadable:
                    continue  # exports (Gradescope results, other JSON) sit beside the scorecards
            if not found:
                raise CardsUnreadable(f"{path}: no scorecard in this folder")
            cards += found
        elif path.exists() and _is_batch_record(path):
            if on_skip is not None:
                on_skip(f"skipped {path}: grade batch's record of the batch (its seed), not a scorecard")
        elif path.exists():
            cards += _cards_in_file(path)
        else:
            raise CardsUnreadable(f"{path}: no such file or folder")
    return cards


def _peek(path: Path):
    """The parsed JSON of ``path``, or None when it is not JSON."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except Exception:  # noqa: BLE001
        return None


def review_tables(cards: Sequence[tuple[str, Scorecard]], *, exercise: str | None = None,
                  failed_only: bool = False) -> list[ReviewTable]:
    """Group scorecards by exercise and track into tables.

    Args:
        cards: ``(label, scorecard)`` pairs.
        exercise: keep only this exercise.
        failed_only: keep submissions that did not pass everything, and checks that some kept
            submission did not pass.
    """
    tables: dict[tuple, ReviewTable] = {}
    for label, card in cards:
        ex = card.exercise["id"]
        if exercise and ex != exercise:
            continue
        # one table per exercise and track: the tracks' checks differ (gradients only in torch)
        table = tables.setdefault((ex, card.exercise.get("track")),
                                  ReviewTable(ex, card.exercise.get("title", ex), []))
        for c in card.checks:
            if c.id not in table.checks:
                table.checks.append(c.id)
            if c.visibility == "hidden":
                table.hidden.add(c.id)
        table.rows.append(ReviewRow(label, card, {c.id: c.verdict for c in card.checks}))
    result = []
    for table in tables.values():
        if failed_only:
            table.rows = [r for r in table.rows if not r.card.all_passed]
            table.checks = [c for c in table.checks if any(r.verdicts.get(c, "passed") != "passed" for r in table.rows)]
        table.rows.sort(key=lambda r: (-r.card.score, r.label))
        result.append(table)
    return result


def render_review(tables: Sequence[ReviewTable], console: Console) -> None:
    """Print review tables: check ids are the column headers, written vertically to stay narrow."""
    if not tables or not any(t.rows for t in tables):
        console.print("nothing to review")
        return
    for t in tables:
        table = Table(title=f"{t.title} ({t.exercise})", title_justify="left", show_lines=False)
        label_width = max([len(r.label) for r in t.rows] + [10])
        table.add_column("submission", no_wrap=True, min_width=label_width)
        table.add_column("status", no_wrap=True, min_width=max(len(r.card.status) for r in t.rows) if t.rows else 6)
        table.add_column("score", justify="right", no_wrap=True, min_width=5)
        for i, check in enumerate(t.checks, start=1):
            table.add_column(str(i), justify="center", no_wrap=True, min_width=len(str(i)))
        for row in t.rows:
            status_style = "green" if row.card.all_passed else ("red" if row.card.status != "graded" else "yellow")
            table.add_row(row.label, Text(row.card.status, style=status_style),
                          f"{row.card.score:g}/{row.card.max_score:g}", *[glyph(row.verdicts.get(c)) for c in t.checks])
        needed = label_width + 30 + sum(len(str(i)) + 3 for i in range(1, len(t.checks) + 1))
        console.print(table, width=max(console.width, needed))  # wider than the terminal beats unreadable
        key = "  ".join(f"{i}={c}" + (" (hidden)" if c in t.hidden else "") for i, c in enumerate(t.checks, start=1))
        console.print(Text("checks: " + key, style="dim"))
    console.print(Text("legend: " + LEGEND, style="dim"))


# -- diff -------------------------------------------------------------------------------------------

@dataclass
class CheckChange:
    """One check whose verdict, points or numbers changed between two attempts."""

    check: str
    before: str | None
    after: str | None
    points_before: float
    points_after: float
    message: str = ""
    numbers: dict = field(default_factory=dict)


@dataclass
class ScorecardDiff:
    """What changed from scorecard A to scorecard B."""

    a: str
    b: str
    exercise: str
    notes: list[str]
    score_before: float
    score_after: float
    max_score: float
    status_before: str
    status_after: str
    changes: list[CheckChange]

    @property
    def changed(self) -> bool:
        """Whether anything graded differs."""
        return bool(self.changes) or self.status_before != self.status_after or self.score_before != self.score_after


#: Numbers worth showing when they moved (from ``grader.judge.compare`` details).
DIFF_NUMBERS = ("max_abs_diff", "max_rel_diff", "mismatched")


def diff_scorecards(a: tuple[str, Scorecard], b: tuple[str, Scorecard]) -> ScorecardDiff:
    """Compare two attempts (normally of one candidate and one exercise)."""
    (la, ca), (lb, cb) = a, b
    notes = []
    if ca.exercise["id"] != cb.exercise["id"]:
        notes.append(f"different exercises: {ca.exercise['id']} vs {cb.exercise['id']}")
    elif ca.exercise["version"] != cb.exercise["version"]:
        notes.append(f"exercise version changed: {ca.exercise['version']} -> {cb.exercise['version']}")
    if ca.submission.get("sha256") == cb.submission.get("sha256"):
        notes.append("same file (identical sha256)")
    if ca.grader_version != cb.grader_version:
        notes.append(f"grader version changed: {ca.grader_version} -> {cb.grader_version}")
    before = {c.id: c for c in ca.checks}
    after = {c.id: c for c in cb.checks}
    changes = []
    for cid in [*before, *(k for k in after if k not in before)]:
        x, y = before.get(cid), after.get(cid)
        numbers = {}
        if x and y:
            for key in DIFF_NUMBERS:
                vx, vy = x.details.get(key), y.details.get(key)
                if vx != vy and vx is not None and vy is not None:
                    numbers[key] = (vx, vy)
        if x and y and x.verdict == y.verdict and x.points == y.points and not numbers:
            continue
        changes.append(CheckChange(cid, x.verdict if x else None, y.verdict if y else None,
                                   x.points if x else 0.0, y.points if y else 0.0,
                                   (y.message if y else "").splitlines()[0] if y and y.message else "", numbers))
    return ScorecardDiff(la, lb, cb.exercise["id"], notes, ca.score, cb.score, cb.max_score, ca.status, cb.status,
                         changes)


def _num(v) -> str:
    return f"{v:.3g}" if isinstance(v, float) else ("-" if v is None else str(v))


def render_diff(diff: ScorecardDiff, console: Console) -> None:
    """Print a diff: the headline (score and status), notes, then a table of changed checks."""
    delta = diff.score_after - diff.score_before
    style = "green" if delta > 0 else ("red" if delta < 0 else "")
    console.print(Text(f"{diff.exercise}: {diff.a} -> {diff.b}   score {diff.score_before:g} -> "
                       f"{diff.score_after:g} / {diff.max_score:g} ({delta:+g})", style=style))
    if diff.status_before != diff.status_after:
        console.print(f"status: {diff.status_before} -> {diff.status_after}", markup=False)
    for note in diff.notes:
        console.print(Text(f"note: {note}", style="dim"))
    if not diff.changes:
        console.print("no check changed")
        return
    table = Table(show_lines=False)
    for col in ("check", "before", "after", "points", "what changed"):
        table.add_column(col)
    for ch in diff.changes:
        what = "; ".join(f"{k} {_num(a)} -> {_num(b)}" for k, (a, b) in ch.numbers.items())
        if ch.message and ch.after != "passed":
            what = (what + "; " if what else "") + ch.message
        elif ch.after == "passed" and ch.before != "passed":
            what = "now passes"
        arrow = ("fixed" if ch.after == "passed" else "broke" if ch.before == "passed" else "")
        table.add_row(ch.check + (f" ({arrow})" if arrow else ""), glyph(ch.before) + Text(f" {ch.before or '-'}"),
                      glyph(ch.after) + Text(f" {ch.after or '-'}"),
                      f"{ch.points_before:g} -> {ch.points_after:g}", Text(what))
    console.print(table)
