"""Scorecards in the formats interviewers' tools read: Gradescope ``results.json``, JUnit XML, CSV.

Every export derives from a scorecard; none of them grades anything.

* Gradescope (https://gradescope-autograders.readthedocs.io/en/latest/specs/): one ``results.json``
  per submission, validated against ``grader/schemas/gradescope.schema.json`` (written from that
  page). Hidden checks get ``visibility: "after_published"`` by default (students see them once
  grades are published; ``"hidden"`` keeps them from students for good), and every test's output is
  taken from the *candidate view*, so a hidden case's inputs never reach a student either way.
* JUnit XML: one ``<testsuite>`` per submission, one ``<testcase>`` per check; ``failed`` and
  ``forbidden`` are ``<failure>``, ``error``/``timeout``/``memory_limit`` are ``<error>``, ``skipped``
  is ``<skipped>``. A submission the grader could not grade (``infrastructure_error``) has every
  testcase as an ``<error type="infrastructure_error">``: CI dashboards show it as an error, not
  as a wrong answer.
* CSV: one row per submission (``SUMMARY_COLUMNS``).

Each leads with the scorecard's ``mistakes`` section (one line per mistake, ``mistake_lines``): the
Gradescope summary, the JUnit suite's ``mistake`` properties and ``<system-err>``, the CSV's
``mistakes`` column; the per-check detail follows as before.
"""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Sequence

import jsonschema

from grader.grading.scorecard import Scorecard
from grader.judge.verdicts import Status

GRADESCOPE_SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "gradescope.schema.json"
GRADESCOPE_VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
SUMMARY_COLUMNS = ("candidate", "exercise", "status", "score", "max_score", "failed_checks", "mistakes",
                   "scorecard")
FORMATS = ("gradescope", "junit", "csv", "json")
#: Where ``grade submit --format F`` writes when no ``--export`` path is given.
DEFAULT_EXPORT_NAMES = {"gradescope": "results.json", "junit": "junit.xml", "csv": "results.csv",
                        "json": "scorecards.json"}

_JUNIT_FAILURE = {"failed": "failure", "forbidden": "failure", "error": "error", "timeout": "error",
                  "memory_limit": "error", "skipped": "skipped"}


def failed_checks(card: Scorecard) -> list[str]:
    """Ids of the checks that did not pass, in order."""
    return [c.id for c in card.checks if c.verdict != "passed"]


def mistake_lines(card: Scorecard) -> list[str]:
    """One line per entry of ``card.mistakes``: "<message first line> (<checks>; -N points)", then the
    greatest difference on a second, indented line where the entry has one."""
    lines = []
    for m in card.mistakes:
        first = (m["message"].splitlines() or [""])[0]
        lines.append(f"{first} ({', '.join(m['checks'])}; -{m['points_lost']:g} points)")
        for extra in m["message"].splitlines()[1:]:  # a compile error's line and caret
            lines.append(f"  {extra}")
        if m.get("difference"):
            lines.append(f"  {m['difference']['text']} ({m['difference']['check']})")
    return lines


# -- Gradescope -------------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def gradescope_schema() -> dict:
    """The JSON Schema of Gradescope's ``results.json``."""
    return json.loads(GRADESCOPE_SCHEMA_PATH.read_text(encoding="utf-8"))


def validate_gradescope(doc: dict) -> None:
    """Validate a ``results.json`` document.

    Raises:
        jsonschema.ValidationError: it does not match Gradescope's format.
    """
    jsonschema.validate(doc, gradescope_schema())


def _test_output(message: str, details: dict) -> str:
    lines = [message] if message else []
    case = details.get("case")
    if case:
        lines.append(f"case: {case}")
    return "\n".join(lines)


def to_gradescope(card: Scorecard, *, hidden_visibility: str = "after_published") -> dict:
    """Gradescope's ``results.json`` for one scorecard.

    Args:
        card: any view; test outputs are always taken from its candidate view.
        hidden_visibility: Gradescope visibility of hidden checks (``after_published`` or ``hidden``).

    Raises:
        ValueError: an unknown visibility.
    """
    if hidden_visibility not in GRADESCOPE_VISIBILITIES:
        raise ValueError(f"unknown Gradescope visibility {hidden_visibility!r}")
    shown = card.candidate_view()
    tests = []
    for number, c in enumerate(shown.checks, start=1):
        tests.append({
            "name": f"{c.id}: {c.title}",
            "number": str(number),
            "score": float(c.points),
            "max_score": float(c.max_points),
            "status": "passed" if c.verdict == "passed" else "failed",
            "output": _test_output(c.message, c.details),
            "tags": [c.category, c.verdict],
            "visibility": hidden_visibility if c.visibility == "hidden" else "visible",
        })
    # Everything a student reads comes from the candidate view (issue 20): its status, time and score
    # are the public part's, with one bit per hidden check; its mistakes come from public checks only.
    summary = f"{shown.exercise['title']}: {shown.score:g} / {shown.max_score:g} ({shown.status})"
    mistakes = mistake_lines(shown)
    if mistakes:
        summary += "\nMistakes:\n" + "\n".join(f"- {line}" if not line.startswith("  ") else f"  {line}"
                                               for line in mistakes)
    if shown.status_message and not any(m["message"] == shown.status_message for m in shown.mistakes):
        summary += f"\n{shown.status_message}"
    if shown.status == Status.INFRASTRUCTURE_ERROR:
        summary += "\nThe grader itself failed on this submission; it was not charged to you."
    doc = {
        "score": float(shown.score),
        "execution_time": round(float(shown.duration_s), 3),
        "output": summary,
        "stdout_visibility": "hidden",
        "extra_data": {"exercise": card.exercise["id"], "exercise_version": card.exercise["version"],
                       "grader_version": card.grader_version, "status": shown.status,
                       "sha256": card.submission.get("sha256")},
        "tests": tests,
    }
    validate_gradescope(doc)
    return doc


# -- JUnit XML --------------------------------------------------------------------------------------

def _clean(text: str) -> str:
    """Drop characters XML 1.0 cannot carry (submissions print anything)."""
    return "".join(ch for ch in text if ch in "\t\n\r" or (ord(ch) >= 0x20 and ord(ch) not in (0xFFFE, 0xFFFF)
                                                              and not 0xD800 <= ord(ch) <= 0xDFFF))


def to_junit(cards: Sequence[tuple[str, Scorecard]]) -> str:
    """JUnit XML for ``(label, scorecard)`` pairs: one ``<testsuite>`` per scorecard."""
    root = ET.Element("testsuites", name="grade")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    total_time = 0.0
    for label, card in cards:
        infra = card.status == Status.INFRASTRUCTURE_ERROR
        counts = {"tests": len(card.checks), "failures": 0, "errors": 0, "skipped": 0}
        suite = ET.SubElement(root, "testsuite", name=_clean(f"{label} ({card.exercise['id']})"),
                              timestamp=card.started_at[:19], time=f"{card.duration_s:.3f}")
        props = ET.SubElement(suite, "properties")
        for key, value in (("exercise", card.exercise["id"]), ("exercise_version", card.exercise["version"]),
                           ("status", card.status), ("score", f"{card.score:g}"),
                           ("max_score", f"{card.max_score:g}"), ("sha256", card.submission.get("sha256") or "")):
            ET.SubElement(props, "property", name=key, value=str(value))
        for m in card.mistakes:
            ET.SubElement(props, "property", name="mistake",
                          value=_clean(f"{m['name'] or (m['message'].splitlines() or [''])[0]}: "
                                       f"{', '.join(m['checks'])} (-{m['points_lost']:g})"))
        for c in card.checks:
            case = ET.SubElement(suite, "testcase", name=c.id, classname=_clean(f"{card.exercise['id']}.{label}"),
                                 time="0")
            kind = "error" if infra else _JUNIT_FAILURE.get(c.verdict)
            if kind is None:
                continue
            counts[{"failure": "failures", "error": "errors", "skipped": "skipped"}[kind]] += 1
            if kind == "skipped":
                ET.SubElement(case, "skipped", message=_clean(c.message.splitlines()[0] if c.message else ""))
                continue
            first = c.message.splitlines()[0] if c.message else c.verdict
            node = ET.SubElement(case, kind, message=_clean(first),
                                 type="infrastructure_error" if infra else c.verdict)
            node.text = _clean(c.message)
        if card.output.get("text"):
            ET.SubElement(suite, "system-out").text = _clean(card.output["text"][-4000:])
        if card.mistakes:
            ET.SubElement(suite, "system-err").text = _clean("\n".join(mistake_lines(card)))
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
        total_time += card.duration_s
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{total_time:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# -- CSV --------------------------------------------------------------------------------------------

def summary_row(candidate: str, card: Scorecard, scorecard_path: str = "") -> dict:
    """One ``summary.csv`` row."""
    return {"candidate": candidate, "exercise": card.exercise["id"], "status": card.status,
            "score": f"{card.score:g}", "max_score": f"{card.max_score:g}",
            "failed_checks": ";".join(failed_checks(card)),
            "mistakes": ";".join(m["name"] or (m["message"].splitlines() or [""])[0] for m in card.mistakes),
            "scorecard": scorecard_path}


#: First characters that make a spreadsheet read a cell as a formula (OWASP "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralise_formula(value: str) -> str:
    """``value`` with a leading ``'`` when it starts like a formula (``FORMULA_STARTS``), so Excel,
    LibreOffice and Google Sheets show it as text (OWASP's recommendation for CSV injection);
    numbers (``-1.5``) are left alone."""
    if not value.startswith(FORMULA_STARTS):
        return value
    try:
        float(value)
    except ValueError:
        return "'" + value
    return value


def to_csv(rows: Iterable[dict]) -> str:
    """CSV text with ``SUMMARY_COLUMNS``; text cells that would start a formula are neutralised
    (``neutralise_formula``): candidate labels come from file or candidate names."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=SUMMARY_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: neutralise_formula(str(row.get(k, ""))) for k in SUMMARY_COLUMNS})
    return buf.getvalue()


def export_text(fmt: str, cards: Sequence[tuple[str, Scorecard]], *, hidden_visibility: str = "after_published",
                scorecard_paths: Sequence[str] | None = None) -> str:
    """The text of an export of ``(label, scorecard)`` pairs in format ``fmt``.

    ``scorecard_paths`` (one per card, same order) fills the CSV's ``scorecard`` column: where each
    card's JSON was written.

    ``gradescope`` takes exactly one scorecard (Gradescope reads one ``results.json`` per submission).

    Raises:
        ValueError: unknown format, or several scorecards for ``gradescope``.
    """
    if fmt == "gradescope":
        if len(cards) != 1:
            raise ValueError("a Gradescope results.json holds one submission")
        return json.dumps(to_gradescope(cards[0][1], hidden_visibility=hidden_visibility), indent=2) + "\n"
    if fmt == "junit":
        return to_junit(cards)
    if fmt == "csv":
        paths = list(scorecard_paths or [""] * len(cards))
        return to_csv(summary_row(label, card, path) for (label, card), path in zip(cards, paths))
    if fmt == "json":
        docs = [c.to_json() for _, c in cards]
        return json.dumps(docs[0] if len(docs) == 1 else docs, indent=2) + "\n"
    raise ValueError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
