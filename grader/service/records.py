"""What the service's routes do, as plain functions on a database session.

Routes (``grader.service.app``) parse and authorise; these functions create cohorts and
candidates, accept submissions, and assemble the views, tables and exports from stored scorecards
with the same library functions as the CLI (``Scorecard.candidate_view``, ``grader.cohort.review``,
``grader.cohort.exports``, ``grader.cohort.report``).
"""

from __future__ import annotations

import io
import json
import re
import secrets
import zipfile
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from grader.cohort.exports import export_text, to_gradescope
from grader.cohort.review import review_tables
from grader.grading.exercise import UnknownExercise, get_exercise
from grader.grading.scorecard import CheckResult, Scorecard
from grader.service import queue, regrades, sessions
from grader.service.db import (DEFAULT_MAX_ATTEMPTS, Candidate, Cohort, StoredScorecard, Submission, as_utc,
                               token_digest, utcnow)

_ID = re.compile(r"[1-9][0-9]{0,15}")


class Refused(Exception):
    """A request the service refuses: ``status`` is the HTTP status, the message says why."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def parse_id(text: str) -> int | None:
    """A positive database id from a path segment, or None (zero, negative, huge, not digits)."""
    return int(text) if _ID.fullmatch(text or "") else None


def create_cohort(session: Session, name: str, exercises: list[str], seed: int | None = None,
                  opens_at: datetime | None = None, closes_at: datetime | None = None, *,
                  max_attempts: int = DEFAULT_MAX_ATTEMPTS, duration_minutes: int | None = None) -> Cohort:
    """Create a cohort; its hidden seed is ``seed`` or a fresh one (0 <= seed < 2**31).

    Args:
        max_attempts: uploads each candidate may make per exercise (>= 1; ``accept`` refuses the next).
        duration_minutes: minutes per candidate from their first visit (``grader.service.sessions``);
            None for an untimed cohort.
    Raises:
        Refused(422): an unknown exercise id, none at all, ``closes_at`` before ``opens_at``, or
            ``max_attempts`` below 1.
    """
    if not exercises:
        raise Refused(422, "a cohort needs at least one exercise")
    if int(max_attempts) < 1:
        raise Refused(422, "max_attempts must be at least 1")
    if duration_minutes is not None and int(duration_minutes) < 1:
        raise Refused(422, "duration_minutes must be at least 1")
    for ex in exercises:
        try:
            get_exercise(ex)
        except UnknownExercise:
            raise Refused(422, f"unknown exercise {ex!r}") from None
    if opens_at and closes_at and as_utc(closes_at) <= as_utc(opens_at):
        raise Refused(422, "closes_at must be after opens_at")
    cohort = Cohort(name=name, exercises=list(dict.fromkeys(exercises)),
                    seed=secrets.randbelow(2**31) if seed is None else int(seed),
                    opens_at=as_utc(opens_at), closes_at=as_utc(closes_at), created_at=utcnow(),
                    max_attempts=int(max_attempts),
                    duration_minutes=None if duration_minutes is None else int(duration_minutes))
    session.add(cohort)
    session.commit()
    return cohort


def invite(session: Session, cohort_id: int, name: str) -> tuple[Candidate, str]:
    """Add a candidate to a cohort. Returns the candidate and their token (shown once, stored hashed).

    Raises:
        Refused(404): no such cohort.
    """
    if session.get(Cohort, cohort_id) is None:
        raise Refused(404, "not found")
    token = secrets.token_urlsafe(32)
    cand = Candidate(cohort_id=cohort_id, name=name, token_hash=token_digest(token), created_at=utcnow())
    session.add(cand)
    session.commit()
    return cand, token


def attempts_used(session: Session, candidate_id: int, exercise: str) -> int:
    """Uploads of ``candidate_id`` at ``exercise`` that count against the cohort's limit: all but
    those the grader failed on (``infrastructure_error`` is never charged to the candidate)."""
    return int(session.scalar(select(func.count()).select_from(Submission)
                              .where(Submission.candidate_id == candidate_id, Submission.exercise == exercise,
                                     Submission.status != "infrastructure_error")) or 0)


def attempts_left(session: Session, candidate: Candidate, cohort: Cohort) -> dict[str, dict]:
    """Per exercise of ``cohort``: ``{"used", "limit", "left"}`` for ``candidate``."""
    out = {}
    for ex in cohort.exercises:
        used = attempts_used(session, candidate.id, ex)
        out[ex] = {"used": used, "limit": cohort.max_attempts, "left": max(0, cohort.max_attempts - used)}
    return out


def _normalised(text: str) -> str:
    """``text`` with its line ends as ``\\n``, each line's trailing blanks and the text's leading and
    trailing blank lines dropped (a browser's paste box sends CRLF)."""
    return "\n".join(line.rstrip() for line in text.splitlines()).strip()


@lru_cache(maxsize=64)
def _stub_texts(exercise: str) -> frozenset[str]:
    """The normalised starting files of every track of ``exercise`` (empty for an unknown id)."""
    try:
        tracks = get_exercise(exercise).tracks
    except UnknownExercise:
        return frozenset()
    return frozenset(_normalised(get_exercise(exercise, track=t).stub_path.read_text(encoding="utf-8"))
                     for t in tracks)


def is_unchanged_stub(exercise: str, source: bytes) -> bool:
    """Whether ``source`` is a starting file (``stub.py`` of any track) of ``exercise``, unchanged
    but for whitespace at line ends, line-end style and blank lines around it: an upload that could
    only score zero, refused like an empty one so it costs no attempt."""
    try:
        text = source.decode("utf-8-sig")
    except UnicodeDecodeError:
        return False
    return _normalised(text) in _stub_texts(exercise)


def accept(session: Session, candidate: Candidate, exercise: str, source: bytes, filename: str,
           max_bytes: int, now: datetime | None = None) -> Submission:
    """Queue ``source`` for ``candidate`` (committed before this returns).

    The attempt limit is checked and the submission inserted in one transaction that holds the
    candidate's row (``SELECT ... FOR UPDATE`` on PostgreSQL; on SQLite every transaction is
    ``BEGIN IMMEDIATE``, one writer at a time), so concurrent uploads cannot pass the limit.

    Raises:
        Refused(403): the cohort is not open at ``now`` (the injected clock's time; the real one by
            default), or the candidate's timed session has ended. Refused(409): no attempt left at this exercise.
        Refused(413): the source is over ``max_bytes``.
        Refused(422): the exercise is not one of the cohort's, or the file is empty or a starting
            file of the exercise, unchanged (``is_unchanged_stub``).
    """
    # Lock first: the count below and the insert in queue.enqueue are one transaction.
    session.execute(select(Candidate.id).where(Candidate.id == candidate.id).with_for_update())
    cohort = session.get(Cohort, candidate.cohort_id)
    now = now or utcnow()
    clock = sessions.timer(cohort, session.get(Candidate, candidate.id), now)
    if clock.expired:
        raise Refused(403, sessions.expired_message(clock))
    if cohort.opens_at and now < as_utc(cohort.opens_at):
        raise Refused(403, "this cohort is not open yet")
    if cohort.closes_at and now >= as_utc(cohort.closes_at):
        raise Refused(403, "this cohort is closed")
    if exercise not in cohort.exercises:
        raise Refused(422, f"exercise {exercise!r} is not part of this interview")
    if len(source) > max_bytes:
        raise Refused(413, f"the file is larger than {max_bytes} bytes")
    if not source.strip():
        raise Refused(422, "the file is empty")
    if is_unchanged_stub(exercise, source):
        raise Refused(422, "the file is the starting file, unchanged: write your solution in it first")
    used = attempts_used(session, candidate.id, exercise)
    if used >= cohort.max_attempts:
        raise Refused(409, f"no attempts left at {exercise}: all {cohort.max_attempts} allowed in this interview "
                           f"are used")
    sessions.note_open(session, candidate.id, exercise, now)  # an upload without the page opens it too
    return queue.enqueue(session, candidate, exercise, source, filename, created_at=now)


#: What a candidate is told before their feedback page is released.
NOT_RELEASED = "your feedback has not been released yet: the interviewer releases it after the round"


def release_feedback(session: Session, cohort: Cohort, candidate_id: int | None, released: bool,
                     now: datetime) -> dict:
    """Release (``released``) or withdraw the feedback page of one candidate of ``cohort`` or, with
    ``candidate_id`` None, of the whole cohort (a candidate released alone stays released when the
    cohort's release is withdrawn). Returns ``{"cohort_id", "candidate_id", "released_at"}``.

    Raises:
        Refused(404): ``candidate_id`` is not a candidate of ``cohort``.
    """
    stamp = now if released else None
    if candidate_id is None:
        cohort.feedback_released_at = stamp
    else:
        cand = session.get(Candidate, candidate_id)
        if cand is None or cand.cohort_id != cohort.id:
            raise Refused(404, "not found")
        cand.feedback_released_at = stamp
    session.commit()
    return {"cohort_id": cohort.id, "candidate_id": candidate_id,
            "released_at": stamp and as_utc(stamp).isoformat(timespec="seconds")}


def own_submission(session: Session, sub_id: int | None, candidate: Candidate | None) -> Submission:
    """The submission ``sub_id`` if the caller may see it (any for the interviewer, i.e. ``candidate``
    None; only their own for a candidate).

    Raises:
        Refused(404): absent, or another candidate's (the same answer for both).
    """
    sub = session.get(Submission, sub_id) if sub_id is not None else None
    if sub is None or (candidate is not None and sub.candidate_id != candidate.id):
        raise Refused(404, "not found")
    return sub


def load_card(document: dict) -> Scorecard:
    """A stored scorecard document as a ``Scorecard``, without validating it again: the worker
    validated it against the schema before storing it (``worker.grade_one_json``), and validating
    every card of a cohort on each page view would cost a schema pass per card."""
    fields = dict(document)
    fields["checks"] = tuple(CheckResult(**c) for c in document["checks"])
    return Scorecard(**fields)


def stored_card(session: Session, sub: Submission) -> Scorecard | None:
    """The interviewer-view scorecard that stands for a graded submission, else None: the one its
    grading stored, or the one of the cohort's accepted regrade (``grader.service.regrades``)."""
    row = session.get(StoredScorecard, sub.id)
    if row is None or sub.status != "graded":
        return None
    cand = session.get(Candidate, sub.candidate_id)
    regraded = regrades.standing_documents(session, cand.cohort_id, [sub.id]) if cand is not None else {}
    return load_card(regraded.get(sub.id, row.document))


def submission_json(session: Session, sub: Submission, view: str) -> dict:
    """``{"id", "status", "exercise", "created_at", "scorecard"}`` with the scorecard in ``view``
    (``candidate`` or ``interviewer``); ``scorecard`` is None until graded. An infrastructure error
    shows as that status with no scorecard (the interviewer also gets ``error``)."""
    card = stored_card(session, sub)
    doc = None if card is None else (card if view == "interviewer" else card.candidate_view()).to_json()
    out = {"id": sub.id, "status": sub.status, "exercise": sub.exercise,
           "created_at": as_utc(sub.created_at).isoformat(timespec="seconds"), "scorecard": doc}
    if view == "interviewer":
        out.update({"candidate_id": sub.candidate_id, "attempts": sub.attempts, "error": sub.error,
                    "sha256": sub.sha256})
    return out


@dataclass
class CohortCard:
    """A graded submission of a cohort with its candidate."""

    candidate: Candidate
    submission: Submission
    card: Scorecard

    @property
    def label(self) -> str:
        """How tables name it: the candidate's name and id (names need not be unique)."""
        return f"{self.candidate.name} #{self.candidate.id}"


def cohort_cards(session: Session, cohort_id: int, *, latest_only: bool = True) -> list[CohortCard]:
    """Graded submissions of a cohort (interviewer views): the latest per candidate and exercise,
    or all of them."""
    rows = session.execute(select(Candidate, Submission, StoredScorecard)
                           .join(Submission, Submission.candidate_id == Candidate.id)
                           .join(StoredScorecard, StoredScorecard.submission_id == Submission.id)
                           .where(Candidate.cohort_id == cohort_id, Submission.status == "graded")
                           .order_by(Submission.id)).all()
    latest: dict[tuple, CohortCard] = {}
    everything = []
    regraded = regrades.standing_documents(session, cohort_id)  # the accepted regrade's, where one stands
    for cand, sub, stored in rows:
        item = CohortCard(cand, sub, load_card(regraded.get(sub.id, stored.document)))
        latest[(cand.id, sub.exercise)] = item
        everything.append(item)
    return list(latest.values()) if latest_only else everything


def summary_json(session: Session, cohort: Cohort) -> dict:
    """The cohort table as JSON: ``grade review``'s tables (one per exercise; rows best first) over
    each candidate's latest graded attempt (``attempts``: how many files that candidate submitted for
    that exercise, whatever became of them), plus the queue's counts by status."""
    items = cohort_cards(session, cohort.id)
    by_card = {id(i.card): i for i in items}
    tried: dict[tuple, int] = {}
    for cand_id, exercise in session.execute(select(Submission.candidate_id, Submission.exercise)
                                             .join(Candidate, Candidate.id == Submission.candidate_id)
                                             .where(Candidate.cohort_id == cohort.id)):
        tried[(cand_id, exercise)] = tried.get((cand_id, exercise), 0) + 1
    tables = []
    for t in review_tables([(i.label, i.card) for i in items]):
        tables.append({"exercise": t.exercise, "title": t.title, "checks": t.checks, "hidden": sorted(t.hidden),
                       "rows": [{"candidate": by_card[id(r.card)].candidate.name,
                                 "candidate_id": by_card[id(r.card)].candidate.id,
                                 "submission_id": by_card[id(r.card)].submission.id,
                                 "status": r.card.status, "score": r.card.score, "max_score": r.card.max_score,
                                 "attempts": tried.get((by_card[id(r.card)].candidate.id,
                                                        by_card[id(r.card)].submission.exercise), 1),
                                 "verdicts": r.verdicts} for r in t.rows]})
    counts: dict[str, int] = {}
    for status in session.scalars(select(Submission.status).join(Candidate, Candidate.id == Submission.candidate_id)
                                  .where(Candidate.cohort_id == cohort.id)):
        counts[status] = counts.get(status, 0) + 1
    return {"cohort": cohort_json(cohort, with_seed=True), "tables": tables, "submissions": counts}


def cohort_json(cohort: Cohort, *, with_seed: bool = False) -> dict:
    """A cohort as JSON (its seed only for the interviewer)."""
    out = {"id": cohort.id, "name": cohort.name, "exercises": list(cohort.exercises),
           "opens_at": cohort.opens_at and as_utc(cohort.opens_at).isoformat(timespec="seconds"),
           "closes_at": cohort.closes_at and as_utc(cohort.closes_at).isoformat(timespec="seconds"),
           "max_attempts": cohort.max_attempts, "duration_minutes": cohort.duration_minutes}
    if with_seed:
        out["seed"] = cohort.seed
    return out


#: Export formats of a cohort: (media type, file name).
EXPORTS = {"csv": ("text/csv; charset=utf-8", "cohort-{id}.csv"),
           "junit": ("application/xml", "cohort-{id}-junit.xml"),
           "json": ("application/json", "cohort-{id}-scorecards.json"),
           "gradescope": ("application/zip", "cohort-{id}-gradescope.zip")}


def export_bytes(session: Session, cohort: Cohort, fmt: str) -> bytes:
    """A cohort's latest graded attempts in ``fmt`` (see ``EXPORTS``), through ``grader.cohort.exports``.

    Gradescope reads one ``results.json`` per submission, so that export is a zip of
    ``<exercise>/candidate-<id>.json`` (names built from ids, never from candidates' input).

    Raises:
        Refused(404): unknown format.
    """
    items = cohort_cards(session, cohort.id)
    if fmt == "gradescope":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for i in items:
                zf.writestr(f"{i.submission.exercise}/candidate-{i.candidate.id}.json",
                            json.dumps(to_gradescope(i.card), indent=2) + "\n")
        return buf.getvalue()
    if fmt not in EXPORTS:
        raise Refused(404, "not found")
    cards = [(i.label, i.card) for i in items]
    if fmt == "json":
        return (json.dumps([c.to_json() for _, c in cards], indent=2) + "\n").encode()
    # the CSV's scorecard column: where the interviewer reads each card (the API's JSON of that attempt)
    paths = [f"/api/submissions/{i.submission.id}" for i in items]
    return export_text(fmt, cards, scorecard_paths=paths).encode("utf-8")
