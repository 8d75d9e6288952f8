"""The feedback page a candidate can keep, released by the interviewer (per cohort or per candidate).

It is built from ``Scorecard.candidate_view()`` of the candidate's latest graded attempt at each
exercise, so it holds only what the candidate view holds: public checks in full (message, numbers,
the named mistake and its diagnosis), hidden checks as one bit each (passed or not: nothing else of
them is read here). For every public check not passed it says what to read: the check's row of the
spec's "How it is graded" table and the spec's sections, which the page carries itself, so the
downloaded HTML file is self-contained (inline CSS, no scripts, no external links or assets).
"""

from __future__ import annotations

import re

from sqlalchemy.orm import Session

from grader.grading.exercise import get_exercise
from grader.service.db import Candidate, Cohort, as_utc
from grader.service.records import cohort_cards

_HEADING = re.compile(r"^## +(.+)$", re.M)


def released_at(cohort: Cohort, candidate: Candidate):
    """When this candidate's feedback was released (the cohort's release or their own), or None."""
    times = [as_utc(t) for t in (cohort.feedback_released_at, candidate.feedback_released_at) if t is not None]
    return min(times) if times else None


def slug(text: str) -> str:
    """An HTML id from a heading: lower case, runs of other characters as ``-``."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def spec_sections(exercise_id: str, spec: str) -> list[dict]:
    """The spec split at its ``## `` headings: ``[{"id", "title", "text"}]`` (the part before the
    first heading titled "Statement"); ids are ``spec-<exercise>-<heading slug>``."""
    parts = _HEADING.split(spec)
    out = [{"id": f"spec-{exercise_id}-statement", "title": "Statement", "text": parts[0].strip()}]
    for title, text in zip(parts[1::2], parts[2::2]):
        out.append({"id": f"spec-{exercise_id}-{slug(title)}", "title": title.strip(), "text": text.strip()})
    return out


def _graded_row(spec: str, check_id: str) -> str:
    """The line of the spec's table that names ``check_id`` in backticks ("" when none)."""
    for line in spec.splitlines():
        if line.lstrip().startswith("|") and f"`{check_id}`" in line:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            return " — ".join(c for c in cells if c)
    return ""


def feedback(session: Session, candidate: Candidate) -> dict:
    """The feedback page's content for ``candidate``.

    Returns ``{"candidate", "cohort", "released_at", "exercises": [{"id", "title", "attempted", "score",
    "max_score", "status", "status_message", "public": [{"id", "title", "verdict", "points", "max_points",
    "message", "details", "mistake", "diagnosis", "read": [{"href", "text"}]}], "hidden": [{"id", "passed"}],
    "sections": spec_sections}]}``; ``details`` are the public check's numbers as the candidate view
    keeps them.
    """
    cohort = session.get(Cohort, candidate.cohort_id)
    latest = {i.submission.exercise: i for i in cohort_cards(session, cohort.id) if i.candidate.id == candidate.id}
    exercises = []
    for ex_id in cohort.exercises:
        ex = get_exercise(ex_id)
        spec = ex.spec_path.read_text(encoding="utf-8")
        sections = spec_sections(ex_id, spec)
        ids = {s["title"].lower(): s["id"] for s in sections}
        how = next((v for k, v in ids.items() if k.startswith("how it is graded")), None)
        item = latest.get(ex_id)
        entry = {"id": ex_id, "title": ex.title, "attempted": item is not None, "score": None,
                 "max_score": ex.max_score, "status": None, "status_message": "", "public": [], "hidden": [],
                 "sections": sections}
        if item is not None:
            view = item.card.candidate_view()
            entry.update(score=view.score, max_score=view.max_score, status=view.status,
                         status_message=view.status_message)
            for c in view.checks:
                if c.visibility == "hidden":
                    entry["hidden"].append({"id": c.id, "passed": c.verdict == "passed"})
                    continue
                read = []
                if c.verdict != "passed":
                    row = _graded_row(spec, c.id)
                    if how:
                        read.append({"href": f"#{how}", "text": row or "How it is graded"})
                    if "contract" in ids:
                        read.append({"href": f"#{ids['contract']}", "text": "Contract"})
                entry["public"].append({"id": c.id, "title": c.title, "verdict": c.verdict, "points": c.points,
                                        "max_points": c.max_points, "message": c.message,
                                        "details": {k: v for k, v in c.details.items()
                                                    if k not in ("mistake", "diagnosis")},
                                        "mistake": c.details.get("mistake"), "diagnosis": c.details.get("diagnosis"),
                                        "read": read})
        exercises.append(entry)
    released = released_at(cohort, candidate)
    return {"candidate": candidate.name, "cohort": cohort.name,
            "released_at": released and released.isoformat(timespec="seconds"), "exercises": exercises}
