"""Attempt history: every attempt of a candidate at an exercise as a timeline (interviewer only).

Each entry: when (and seconds since the candidate's timed session began), status, score, the checks
whose verdict changed from the previous graded attempt, and the diff to the previous attempt: the
scorecard diff of ``grade review --diff`` (``grader.cohort.review.diff_scorecards``) and a unified diff
of the two sources (``difflib``).
"""

from __future__ import annotations

import difflib

from sqlalchemy import select
from sqlalchemy.orm import Session

from grader.cohort.review import diff_scorecards
from grader.service.db import Candidate, Submission, as_utc
from grader.grading.notebook import shown_text
from grader.service.records import stored_card


def source_diff(before: bytes, after: bytes, *, context: int = 3) -> list[str]:
    """Unified diff lines (``---``/``+++`` headers, ``@@`` hunks) from ``before`` to ``after`` as
    ``notebook.shown_text`` reads them (a notebook's graded code; UTF-8, undecodable bytes replaced);
    [] when equal."""
    a, b = shown_text(before).splitlines(), shown_text(after).splitlines()
    return list(difflib.unified_diff(a, b, "previous", "this", n=context, lineterm=""))


def timeline(session: Session, sub: Submission) -> dict:
    """The attempts of ``sub``'s candidate at ``sub``'s exercise, oldest first.

    Returns ``{"candidate_id", "candidate", "exercise", "attempts": [{"submission_id", "at",
    "since_start_s", "status", "score", "max_score", "previous_id", "changed": [{"check", "before",
    "after"}], "changes": [CheckChange as dict], "notes", "source_diff": [lines]}]}``; ``previous_id``
    is the previous graded attempt (checks are compared with it), ``source_diff`` is to the previous
    attempt whatever its status. ``since_start_s`` is None outside a timed session.
    """
    cand = session.get(Candidate, sub.candidate_id)
    start = as_utc(cand.started_at)
    subs = list(session.scalars(select(Submission).where(Submission.candidate_id == sub.candidate_id,
                                                         Submission.exercise == sub.exercise)
                                .order_by(Submission.id)))
    out, prev_graded, prev_sub = [], None, None
    for s in subs:
        card = stored_card(session, s)
        entry = {"submission_id": s.id, "at": as_utc(s.created_at).isoformat(timespec="seconds"),
                 "since_start_s": round((as_utc(s.created_at) - start).total_seconds(), 1) if start else None,
                 "status": s.status, "score": card and card.score, "max_score": card and card.max_score,
                 "card_status": card and card.status, "previous_id": None, "changed": [], "changes": [],
                 "notes": [], "source_diff": source_diff(prev_sub.source, s.source) if prev_sub else []}
        if card is not None and prev_graded is not None:
            d = diff_scorecards((f"#{prev_graded[0].id}", prev_graded[1]), (f"#{s.id}", card))
            entry["previous_id"] = prev_graded[0].id
            entry["notes"] = list(d.notes)
            entry["changes"] = [{"check": c.check, "before": c.before, "after": c.after,
                                 "points_before": c.points_before, "points_after": c.points_after,
                                 "message": c.message} for c in d.changes]
            entry["changed"] = [{"check": c.check, "before": c.before, "after": c.after}
                                for c in d.changes if c.before != c.after]
        if card is not None:
            prev_graded = (s, card)
        prev_sub = s
        out.append(entry)
    return {"candidate_id": cand.id, "candidate": cand.name, "exercise": sub.exercise, "attempts": out}
