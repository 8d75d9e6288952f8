"""``grade selfcheck``: prove that an exercise grades what it should.

For each exercise and track: the reference must score full marks; the stub must score 0 with status
``graded``; every ``correct_*.py`` of the track's samples (``submissions/samples/<id>/`` for the
default track, ``submissions/samples/<id>/<track>/`` for the other) must score full marks; every
``bug_*.py`` must fail the check(s) its docstring names, on a line of the form::

    Must fail: values_nd

(several ids separated by commas: at least one of them must fail). A named check the exercise
does not declare yet is reported as "expected <id> failure, not yet checked" rather than passing.
"""

from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from rich.console import Console
from rich.table import Table
from rich.text import Text

from grader.grading.exercise import Exercise, project_root
from grader.grading.grade import grade_submission
from grader.grading.scorecard import Scorecard
from grader.judge.verdicts import Status

MUST_FAIL = re.compile(r"^\s*Must fail:\s*(.+?)\s*$", re.MULTILINE)


def expected_failures(path: Path) -> list[str]:
    """Check ids named by a ``Must fail:`` line in the module docstring of ``path``.

    Raises:
        ValueError: the file has no docstring or no such line.
    """
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    match = MUST_FAIL.search(doc)
    if not match:
        raise ValueError(f"{path} has no 'Must fail: <check id>' line in its docstring")
    return [c.strip() for c in match.group(1).split(",") if c.strip()]


def samples_dir(exercise: Exercise) -> Path:
    """The samples of the exercise's track: ``submissions/samples/<id>/`` or ``.../<id>/<track>/``."""
    return exercise.samples_path


@dataclass
class SelfcheckRow:
    """One graded file of a self-check and whether it came out as intended."""

    exercise: str
    file: str
    kind: str  # reference, stub, correct, bug
    expectation: str
    status: str
    score: float
    max_score: float
    failed_checks: list[str] = field(default_factory=list)
    ok: bool = False
    note: str = ""
    infrastructure: bool = False
    track: str = ""

    def to_json(self) -> dict:
        """As a JSON-able dict."""
        return asdict(self)


def _judge_row(exercise: Exercise, path: Path, kind: str, card: Scorecard) -> SelfcheckRow:
    failed = [c.id for c in card.checks if c.verdict != "passed"]
    row = SelfcheckRow(exercise=exercise.id, file=str(path.relative_to(project_root()) if path.is_relative_to(
        project_root()) else path), kind=kind, expectation="", status=card.status, score=card.score,
        max_score=card.max_score, failed_checks=failed, track=exercise.track)
    row.infrastructure = card.status == Status.INFRASTRUCTURE_ERROR
    if kind in ("reference", "correct"):
        row.expectation = "full marks"
        row.ok = card.all_passed
        if not row.ok:
            first = next((c.message.splitlines()[0] for c in card.checks if c.verdict != "passed" and c.message), "")
            row.note = (f"failed {', '.join(failed)}" + (f" ({first})" if first else "")) if failed \
                else card.status_message
    elif kind == "stub":
        row.expectation = "0 points, graded"
        row.ok = card.status == Status.GRADED and card.score == 0
    else:
        wanted = expected_failures(path)
        declared = {c.id for c in exercise.checks}
        checkable = [w for w in wanted if w in declared]
        row.expectation = "fails " + " or ".join(wanted)
        if not checkable:
            row.ok = True
            row.note = f"expected {' or '.join(wanted)} failure, not yet checked"
        else:
            row.ok = card.status == Status.GRADED and any(w in failed for w in checkable)
            if not row.ok:
                row.note = (f"passed {', '.join(checkable)}" if card.status == Status.GRADED
                            else card.status_message)
    return row


def run_selfcheck(exercises: list[Exercise], *, sandbox: str = "auto", seed: int = 1234,
                  progress: Callable[[str], None] | None = None) -> list[SelfcheckRow]:
    """Grade the reference, the stub and every sample of each exercise; see the module docstring."""
    say = progress or (lambda _m: None)
    rows = []
    for ex in exercises:
        files = [(ex.reference_path, "reference"), (ex.stub_path, "stub")]
        folder = samples_dir(ex)
        files += [(p, "correct") for p in sorted(folder.glob("correct_*.py"))]
        files += [(p, "bug") for p in sorted(folder.glob("bug_*.py"))]
        for kind, what in (("correct", "correct solutions in other styles"), ("bug", "named mistakes")):
            if not any(k == kind for _, k in files):
                rows.append(SelfcheckRow(exercise=ex.id, file=str(folder / f"{kind}_*.py"), kind="missing",
                                         expectation=f"some {kind}_*.py", status="missing", score=0.0,
                                         max_score=ex.max_score, ok=False, track=ex.track,
                                         note=f"no {kind}_*.py in {folder}: add {what} (docs/authoring.md)"))
        for path, kind in files:
            say(f"{ex.id} ({ex.track}): {path.name}")
            card = grade_submission(ex, path, sandbox=sandbox, seed=seed)
            rows.append(_judge_row(ex, path, kind, card))
    return rows


def render_matrix(rows: list[SelfcheckRow], console: Console) -> None:
    """Print the self-check matrix and a one-line total."""
    table = Table()
    for col in ("exercise", "track", "file", "expected", "got", "ok", "note"):
        table.add_column(col)
    for r in rows:
        got = f"{r.status} {r.score:g}/{r.max_score:g}"
        if r.kind == "bug" and r.failed_checks:
            got += " failed " + ",".join(r.failed_checks[:4]) + ("..." if len(r.failed_checks) > 4 else "")
        table.add_row(r.exercise, r.track, Path(r.file).name, r.expectation, got,
                      Text("yes", style="green") if r.ok else Text("NO", style="bold red"), r.note)
    console.print(table)
    bad = [r for r in rows if not r.ok]
    pending = [r for r in rows if "not yet checked" in r.note]
    console.print(f"{len(rows) - len(bad)} of {len(rows)} files graded as intended"
                  + (f", {len(pending)} expected failures not yet checked" if pending else "")
                  + (f"; {len(bad)} NOT as intended" if bad else ""))
