"""Timed sessions: a cohort's ``duration_minutes`` per candidate, from their first visit.

A candidate's session starts at their first authenticated page or API call at or after the cohort's
``opens_at`` (``start``); it ends ``duration_minutes`` later or at the cohort's ``closes_at``,
whichever comes first (``Timer.ends_at``). After a timed session ends every candidate route but the
feedback page answers 403 (``grader.service.deps``) and uploads are refused (``records.accept``).
Time on task for the interviewer: each exercise's first open and each attempt's time since the start.

All times come from an injected clock (``Settings.clock``, a function returning an aware UTC
datetime; ``grader.service.db.utcnow`` by default), so tests advance time instead of sleeping
(STYLE.md: pytest's ``MockTiming``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from grader.service.db import Candidate, Cohort, ExerciseOpen, Submission, as_utc


@dataclass(frozen=True)
class Timer:
    """Where a candidate stands in time.

    Attributes:
        now: the clock's time (aware UTC).
        duration_minutes: the cohort's duration per candidate, or None (untimed).
        started_at: start of the candidate's session (None: untimed or not started).
        ends_at: the earlier of ``started_at + duration`` and the cohort's ``closes_at`` (None: no end).
        expired: the timed session has ended (``now >= started_at + duration``).
    """

    now: datetime
    duration_minutes: int | None
    started_at: datetime | None
    ends_at: datetime | None
    expired: bool

    @property
    def seconds_left(self) -> int | None:
        """Whole seconds until ``ends_at`` (0 once past), None without an end."""
        if self.ends_at is None:
            return None
        return max(0, int((self.ends_at - self.now).total_seconds()))

    @property
    def left_text(self) -> str:
        """``"1 h 05 min left"`` / ``"4 min 10 s left"`` / ``"time is up"`` ("" without an end)."""
        s = self.seconds_left
        if s is None:
            return ""
        if s == 0:
            return "time is up"
        h, rest = divmod(s, 3600)
        m, sec = divmod(rest, 60)
        return f"{h} h {m:02d} min left" if h else f"{m} min {sec:02d} s left"

    def to_json(self) -> dict:
        """``{"duration_minutes", "started_at", "ends_at", "seconds_left", "expired"}`` (ISO 8601 UTC)."""
        iso = lambda t: t and t.isoformat(timespec="seconds")  # noqa: E731
        return {"duration_minutes": self.duration_minutes, "started_at": iso(self.started_at),
                "ends_at": iso(self.ends_at), "seconds_left": self.seconds_left, "expired": self.expired}


def timer(cohort: Cohort, candidate: Candidate, now: datetime) -> Timer:
    """The ``Timer`` of ``candidate`` in ``cohort`` at ``now`` (reads only)."""
    started = as_utc(candidate.started_at) if cohort.duration_minutes else None
    session_end = started + timedelta(minutes=cohort.duration_minutes) if started else None
    ends = [t for t in (session_end, as_utc(cohort.closes_at)) if t is not None]
    return Timer(now, cohort.duration_minutes, started, min(ends) if ends else None,
                 bool(session_end and now >= session_end))


def expired_message(t: Timer) -> str:
    """The sentence of the 403 after a timed session."""
    return (f"Your time is up: this interview gives each candidate {t.duration_minutes} minutes from their first "
            f"visit; yours started {t.started_at:%Y-%m-%d %H:%M:%S} UTC and ended "
            f"{t.started_at + timedelta(minutes=t.duration_minutes):%Y-%m-%d %H:%M:%S} UTC. Your attempts are kept "
            f"and graded; no more uploads are accepted. The interviewer may release a feedback page to you "
            f"(/candidate/feedback).")


def start(session: Session, candidate_id: int, now: datetime) -> Timer:
    """Start the candidate's session if their cohort is timed, open at ``now`` and it has not started
    (one atomic ``UPDATE ... WHERE started_at IS NULL``, so two first requests agree), and return the
    ``Timer``. Untimed cohorts are only read."""
    cand = session.get(Candidate, candidate_id)
    cohort = session.get(Cohort, cand.cohort_id)
    open_now = (not cohort.opens_at or now >= as_utc(cohort.opens_at)) and \
               (not cohort.closes_at or now < as_utc(cohort.closes_at))
    if cohort.duration_minutes and cand.started_at is None and open_now:
        session.execute(update(Candidate).where(Candidate.id == candidate_id, Candidate.started_at.is_(None))
                        .values(started_at=now))
        session.commit()
        session.refresh(cand)
    t = timer(cohort, cand, now)
    session.rollback()  # end the read transaction (SQLite: BEGIN IMMEDIATE holds the write lock)
    return t


def note_open(session: Session, candidate_id: int, exercise: str, now: datetime) -> None:
    """Like ``record_open`` inside the caller's transaction (committed with it): an upload is an open
    too. A concurrent first open only rolls back its own savepoint."""
    if session.get(ExerciseOpen, (candidate_id, exercise)) is not None:
        return
    try:
        with session.begin_nested():
            session.add(ExerciseOpen(candidate_id=candidate_id, exercise=exercise, opened_at=now))
    except IntegrityError:
        pass


def record_open(session: Session, candidate_id: int, exercise: str, now: datetime) -> None:
    """Keep the first time ``candidate_id`` opened ``exercise`` (later opens change nothing)."""
    if session.get(ExerciseOpen, (candidate_id, exercise)) is not None:
        session.commit()
        return
    session.add(ExerciseOpen(candidate_id=candidate_id, exercise=exercise, opened_at=now))
    try:
        session.commit()
    except IntegrityError:  # a concurrent first open won
        session.rollback()


def _since(start_at: datetime | None, moment: datetime | None) -> float | None:
    if start_at is None or moment is None:
        return None
    return round((as_utc(moment) - start_at).total_seconds(), 1)


def time_on_task(session: Session, cohort: Cohort, now: datetime) -> list[dict]:
    """Per candidate of ``cohort``: ``{"candidate_id", "candidate", "session": Timer.to_json(),
    "exercises": {id: {"first_open", "first_open_s", "attempts": [{"submission_id", "at", "since_start_s",
    "status"}]}}}``; times are ISO 8601 UTC, ``*_s`` seconds since the session's start (None untimed)."""
    out = []
    for cand in session.scalars(select(Candidate).where(Candidate.cohort_id == cohort.id).order_by(Candidate.id)):
        t = timer(cohort, cand, now)
        start_at = as_utc(cand.started_at)
        opens = {o.exercise: as_utc(o.opened_at) for o in
                 session.scalars(select(ExerciseOpen).where(ExerciseOpen.candidate_id == cand.id))}
        exercises = {}
        for ex in cohort.exercises:
            subs = session.scalars(select(Submission).where(Submission.candidate_id == cand.id,
                                                            Submission.exercise == ex).order_by(Submission.id))
            exercises[ex] = {
                "first_open": opens.get(ex) and opens[ex].isoformat(timespec="seconds"),
                "first_open_s": _since(start_at, opens.get(ex)),
                "attempts": [{"submission_id": s.id, "at": as_utc(s.created_at).isoformat(timespec="seconds"),
                              "since_start_s": _since(start_at, s.created_at), "status": s.status} for s in subs]}
        out.append({"candidate_id": cand.id, "candidate": cand.name, "session": t.to_json(), "exercises": exercises})
    return out
