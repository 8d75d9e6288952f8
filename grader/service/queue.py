"""The submission queue, kept in the database: nothing is acknowledged before it is committed.

* ``enqueue`` commits a ``queued`` submission; only then does the API answer 202.
* ``claim`` takes the oldest queued submission atomically: ``SELECT ... FOR UPDATE SKIP LOCKED``
  then ``UPDATE`` in one transaction on PostgreSQL; on SQLite one ``UPDATE ... WHERE id = (SELECT
  ...) AND status = 'queued'`` inside ``BEGIN IMMEDIATE`` (one writer at a time). Each claim gets a
  fresh ``claim_token``; two workers can never hold the same submission.
* ``complete`` stores the scorecard and marks the submission ``graded`` in one transaction, and
  only if the claim is still this worker's: a scorecard row per submission at most (primary key),
  so a repeated grading can never count twice (PrairieLearn's grader host: result first, then the
  acknowledgement).
* ``retry_or_fail`` puts a submission whose grading hit an infrastructure error back in the queue,
  up to ``MAX_ATTEMPTS`` claims, then marks it ``infrastructure_error`` (never a score).
* ``requeue_running`` (at start) returns work a killed server left ``running`` to the queue.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from grader.service.db import Candidate, Cohort, StoredScorecard, Submission, is_postgres, utcnow

#: Claims per submission before an infrastructure error is final (the first try and two retries).
MAX_ATTEMPTS = 3


@dataclass(frozen=True)
class Claim:
    """A claimed submission: what a worker needs to grade it, detached from any session.

    Attributes:
        submission_id: the submission's id.
        claim_token: proves the claim is still this worker's when it reports.
        exercise: exercise id.
        source: the file's bytes.
        seed: the cohort's hidden seed.
        attempt: 1 for the first claim, 2 for the first retry, ...
    """

    submission_id: int
    claim_token: str
    exercise: str
    source: bytes
    seed: int
    attempt: int


def enqueue(session: Session, candidate: Candidate, exercise: str, source: bytes, filename: str = "",
            created_at=None) -> Submission:
    """Store ``source`` as a queued submission of ``candidate`` and commit it.

    Args:
        filename: the upload's name, for display only (cut to 255 characters).
        created_at: the upload's time (the service's injected clock; now by default).
    Returns:
        The committed submission (its id is final).
    """
    sub = Submission(candidate_id=candidate.id, exercise=exercise, source=source,
                     sha256=hashlib.sha256(source).hexdigest(), filename=filename[:255], status="queued",
                     attempts=0, created_at=created_at or utcnow())
    session.add(sub)
    session.commit()
    return sub


def claim(factory: sessionmaker) -> Claim | None:
    """Claim the oldest queued submission for one worker, or None when the queue is empty."""
    token = secrets.token_hex(16)
    with factory() as session, session.begin():
        now = utcnow()
        if is_postgres(session.get_bind()):
            row = session.execute(select(Submission.id).where(Submission.status == "queued")
                                  .order_by(Submission.id).limit(1).with_for_update(skip_locked=True)).first()
            if row is None:
                return None
            session.execute(update(Submission).where(Submission.id == row.id)
                            .values(status="running", claim_token=token, started_at=now,
                                    attempts=Submission.attempts + 1))
        else:
            oldest = (select(Submission.id).where(Submission.status == "queued").order_by(Submission.id)
                      .limit(1).scalar_subquery())
            done = session.execute(update(Submission).where(Submission.id == oldest, Submission.status == "queued")
                                   .values(status="running", claim_token=token, started_at=now,
                                           attempts=Submission.attempts + 1)
                                   .execution_options(synchronize_session=False))
            if done.rowcount != 1:
                return None
        got = session.execute(select(Submission, Cohort.seed).join(Candidate, Candidate.id == Submission.candidate_id)
                              .join(Cohort, Cohort.id == Candidate.cohort_id)
                              .where(Submission.claim_token == token)).one()
        sub, seed = got
        return Claim(sub.id, token, sub.exercise, bytes(sub.source), int(seed), int(sub.attempts))


def complete(factory: sessionmaker, claim_: Claim, document: dict, score: float, max_score: float) -> bool:
    """Store the interviewer-view scorecard ``document`` and mark the submission graded.

    Returns:
        False when the claim was no longer this worker's (nothing stored), True otherwise.
    """
    with factory() as session, session.begin():
        now = utcnow()
        done = session.execute(update(Submission)
                               .where(Submission.id == claim_.submission_id, Submission.claim_token == claim_.claim_token,
                                      Submission.status == "running")
                               .values(status="graded", finished_at=now, claim_token=None, error=None)
                               .execution_options(synchronize_session=False))
        if done.rowcount != 1:
            return False
        session.add(StoredScorecard(submission_id=claim_.submission_id, document=document, score=score,
                                    max_score=max_score, created_at=now))
    return True


def retry_or_fail(factory: sessionmaker, claim_: Claim, error: str) -> str:
    """After an infrastructure error: back to ``queued``, or ``infrastructure_error`` after
    ``MAX_ATTEMPTS`` claims. Returns the new status ("" when the claim was no longer ours)."""
    status = "queued" if claim_.attempt < MAX_ATTEMPTS else "infrastructure_error"
    with factory() as session, session.begin():
        done = session.execute(update(Submission)
                               .where(Submission.id == claim_.submission_id, Submission.claim_token == claim_.claim_token,
                                      Submission.status == "running")
                               .values(status=status, claim_token=None, error=error[:4000],
                                       finished_at=utcnow() if status != "queued" else None)
                               .execution_options(synchronize_session=False))
        return status if done.rowcount == 1 else ""


def requeue_running(factory: sessionmaker) -> int:
    """Return every ``running`` submission to the queue (call at start, before any worker runs).

    Returns:
        How many were re-queued.
    """
    with factory() as session, session.begin():
        done = session.execute(update(Submission).where(Submission.status == "running")
                               .values(status="queued", claim_token=None)
                               .execution_options(synchronize_session=False))
        return int(done.rowcount or 0)
