"""Regrading a cohort after a fix (issue 21, item 4), on the service: the interviewer's action.

``start`` records a ``Regrade`` of every graded submission of a cohort and grades them again in a
background thread, one at a time, through the workers' own grading processes (the same path as
every grading, ``grader.service.worker.grade_one_json``) at the cohort's seed. Each new scorecard is
a ``RegradedScorecard`` row; the original row in ``scorecards`` is never touched. ``changes`` is the
table of what changed per submission (``grader.cohort.regrade.compare``, as ``grade regrade``), and
``choose`` records which scorecards stand for the round: one accepted regrade per cohort, or none
(the originals). ``standing_documents`` is what the views read (``records.stored_card``,
``records.cohort_cards``): a regrade's scorecard stands only where it graded (an infrastructure
error of a regrade never replaces a graded scorecard).
"""

from __future__ import annotations

import logging
import threading
from typing import Callable

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from grader import __version__
from grader.judge.verdicts import Status
from grader.service.db import (Candidate, Cohort, Regrade, RegradedScorecard, StoredScorecard, Submission, as_utc,
                               utcnow)

log = logging.getLogger("grader.service.regrades")

#: tries per submission when a regrade hits an infrastructure error (the queue's MAX_ATTEMPTS)
TRIES = 3


class RegradeRefused(Exception):
    """A regrade request refused: ``status`` is the HTTP status."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def graded_submissions(session: Session, cohort_id: int) -> list[Submission]:
    """Every graded submission of a cohort (all attempts), oldest first."""
    return list(session.scalars(select(Submission).join(Candidate, Candidate.id == Submission.candidate_id)
                                .join(StoredScorecard, StoredScorecard.submission_id == Submission.id)
                                .where(Candidate.cohort_id == cohort_id, Submission.status == "graded")
                                .order_by(Submission.id)))


def start(factory: sessionmaker, cohort_id: int, grade: Callable[[str, bytes, int, str], dict], sandbox: str,
          *, wait: bool = False) -> Regrade:
    """Record a regrade of the cohort's graded submissions and start grading them.

    Args:
        grade: ``grade(exercise, source, seed, sandbox) -> scorecard document`` (the worker pool's
            ``GradingProcesses``, or ``grade_one_json``).
        wait: grade in this thread and return when done (tests, the CLI); else a daemon thread.
    Returns:
        The committed regrade (``status`` ``running``).
    Raises:
        RegradeRefused(404): no such cohort. RegradeRefused(409): a regrade of it is running.
        RegradeRefused(422): the cohort has no graded submission.
    """
    with factory() as session, session.begin():
        cohort = session.get(Cohort, cohort_id)
        if cohort is None:
            raise RegradeRefused(404, "not found")
        if session.scalar(select(Regrade.id).where(Regrade.cohort_id == cohort_id, Regrade.status == "running")):
            raise RegradeRefused(409, "a regrade of this cohort is running: wait for it to finish")
        subs = [s.id for s in graded_submissions(session, cohort_id)]
        if not subs:
            raise RegradeRefused(422, "this cohort has no graded submission to regrade")
        regrade = Regrade(cohort_id=cohort_id, grader_version=__version__, status="running", accepted=False,
                          total=len(subs), created_at=utcnow())
        session.add(regrade)
        session.flush()
        seed = int(cohort.seed)
    run = lambda: _run(factory, regrade.id, subs, seed, grade, sandbox)  # noqa: E731
    if wait:
        run()
    else:
        threading.Thread(target=run, name=f"grader-regrade-{regrade.id}", daemon=True).start()
    return regrade


def _run(factory: sessionmaker, regrade_id: int, sub_ids: list[int], seed: int, grade, sandbox: str) -> None:
    """Grade each submission again and store its scorecard; then mark the regrade ``done``."""
    from grader.grading.scorecard import Scorecard  # noqa: PLC0415

    try:
        for sub_id in sub_ids:
            with factory() as session:
                sub = session.get(Submission, sub_id)
                exercise, source = sub.exercise, bytes(sub.source)
            document, failure = None, None
            for _ in range(TRIES):
                try:
                    document = grade(exercise, source, seed, sandbox)
                    card = Scorecard.from_json(document)
                except Exception as exc:  # noqa: BLE001 - a grader fault: tried again, never a score
                    log.exception("regrade %s: submission %s", regrade_id, sub_id)
                    document, failure = None, exc
                    continue
                if card.status != Status.INFRASTRUCTURE_ERROR:
                    break
            if document is None:
                # grade_one turns every fault of a grading into an infrastructure_error document, so
                # raising three times means the grading processes are gone (the server is stopping)
                raise RuntimeError(f"regrade {regrade_id} stopped at submission {sub_id}: {failure}")
            with factory() as session, session.begin():
                session.add(RegradedScorecard(regrade_id=regrade_id, submission_id=sub_id, document=document,
                                              score=card.score, max_score=card.max_score, created_at=utcnow()))
        status = "done"
    except Exception:  # noqa: BLE001 - said in the log; what was regraded is kept
        log.exception("regrade %s interrupted", regrade_id)
        status = "interrupted"
    except BaseException:
        status = "interrupted"
        raise
    finally:
        with factory() as session, session.begin():
            session.execute(update(Regrade).where(Regrade.id == regrade_id)
                            .values(status=status, finished_at=utcnow()))


def interrupt_running(factory: sessionmaker) -> int:
    """At start: regrades a previous server left ``running`` become ``interrupted`` (what they graded
    is kept). Returns how many."""
    with factory() as session, session.begin():
        done = session.execute(update(Regrade).where(Regrade.status == "running")
                               .values(status="interrupted", finished_at=utcnow())
                               .execution_options(synchronize_session=False))
        return int(done.rowcount or 0)


def get_regrade(session: Session, cohort_id: int, regrade_id: int | None) -> Regrade:
    """The regrade ``regrade_id`` of the cohort.

    Raises:
        RegradeRefused(404): absent, or another cohort's.
    """
    regrade = session.get(Regrade, regrade_id) if regrade_id is not None else None
    if regrade is None or regrade.cohort_id != cohort_id:
        raise RegradeRefused(404, "not found")
    return regrade


def regrades_of(session: Session, cohort_id: int) -> list[Regrade]:
    """The cohort's regrades, newest first."""
    return list(session.scalars(select(Regrade).where(Regrade.cohort_id == cohort_id).order_by(Regrade.id.desc())))


def changes(session: Session, regrade: Regrade) -> list[dict]:
    """The change table of a regrade: per regraded submission, ``grader.cohort.regrade.Change.to_json``
    plus ``submission_id`` and ``candidate_id`` (``candidate`` is the name and id)."""
    from grader.cohort.regrade import compare  # noqa: PLC0415
    from grader.service.records import load_card  # noqa: PLC0415

    rows = session.execute(select(RegradedScorecard, StoredScorecard, Submission, Candidate)
                           .join(StoredScorecard, StoredScorecard.submission_id == RegradedScorecard.submission_id)
                           .join(Submission, Submission.id == RegradedScorecard.submission_id)
                           .join(Candidate, Candidate.id == Submission.candidate_id)
                           .where(RegradedScorecard.regrade_id == regrade.id)
                           .order_by(RegradedScorecard.submission_id)).all()
    out = []
    for new, old, sub, cand in rows:
        change = compare(f"{cand.name} #{cand.id}", load_card(old.document), load_card(new.document))
        out.append({**change.to_json(), "submission_id": sub.id, "candidate_id": cand.id})
    return out


def regrade_json(session: Session, regrade: Regrade, *, with_changes: bool = True) -> dict:
    """A regrade as JSON: id, status, grader version, accepted, counts, times and (by default) its changes."""
    graded = session.scalars(select(RegradedScorecard.id).where(RegradedScorecard.regrade_id == regrade.id)).all()
    out = {"id": regrade.id, "cohort_id": regrade.cohort_id, "status": regrade.status,
           "grader_version": regrade.grader_version, "accepted": bool(regrade.accepted), "total": regrade.total,
           "regraded": len(graded), "created_at": as_utc(regrade.created_at).isoformat(timespec="seconds"),
           "finished_at": regrade.finished_at and as_utc(regrade.finished_at).isoformat(timespec="seconds")}
    if with_changes:
        table = changes(session, regrade)
        out["changes"] = table
        out["changed"] = sum(1 for c in table if c["changed"])
    return out


def choose(session: Session, cohort_id: int, regrade_id: int | None) -> None:
    """Record which scorecards stand for the cohort: regrade ``regrade_id``'s, or the originals (None).
    Nothing is deleted either way.

    Raises:
        RegradeRefused(404): not a regrade of this cohort. RegradeRefused(409): it is still running.
    """
    if regrade_id is not None:
        regrade = get_regrade(session, cohort_id, regrade_id)
        if regrade.status == "running":
            raise RegradeRefused(409, "this regrade is still running: choose when it is done")
    session.execute(update(Regrade).where(Regrade.cohort_id == cohort_id).values(accepted=False)
                    .execution_options(synchronize_session=False))
    if regrade_id is not None:
        session.execute(update(Regrade).where(Regrade.id == regrade_id).values(accepted=True)
                        .execution_options(synchronize_session=False))
    session.commit()


def standing_documents(session: Session, cohort_id: int, sub_ids: list[int] | None = None) -> dict[int, dict]:
    """Submission id -> the scorecard document of the cohort's accepted regrade, where it graded that
    submission (empty when the originals stand). ``sub_ids`` limits the lookup."""
    accepted = session.scalar(select(Regrade.id).where(Regrade.cohort_id == cohort_id, Regrade.accepted.is_(True)))
    if accepted is None:
        return {}
    q = select(RegradedScorecard).where(RegradedScorecard.regrade_id == accepted)
    if sub_ids is not None:
        q = q.where(RegradedScorecard.submission_id.in_(sub_ids))
    return {row.submission_id: row.document for row in session.scalars(q)
            if row.document.get("status") != Status.INFRASTRUCTURE_ERROR}
