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
* Leases (issue 25: workers on many machines). A claim names its worker (``worker_id``) and holds
  until ``lease_until`` (database clock); the worker's heartbeat (``renew``) pushes it on while the
  worker lives. ``requeue_expired`` puts a claim whose lease ran out (a worker killed with SIGKILL,
  a machine gone, a network cut longer than the lease) back in the queue, with a new token at its
  next claim, so the lost worker's late result is refused by ``complete`` and discarded; each
  submission's scorecard and its ``graded`` mark are committed together, once. ``release`` gives
  back a stopping worker's claims at once. (``requeue_running``, which re-queues every claim at once,
  is kept for databases no grader is using; the service no longer calls it.)
* Every claim is a row of ``gradings`` with how it ended (``graded``, ``discarded``, ``retried``,
  ``failed``, ``expired``, ``released``): the record that shows each submission was graded once.
* A worker must agree with the newest ``grade serve`` (``grader.service.fleet``): ``claim`` with
  ``agreement`` raises ``WorkerRefused`` when the server's differs, in the claim's transaction,
  so no submission is claimed by a worker of another version.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session, sessionmaker

from grader.service.db import (Candidate, Cohort, Grading, StoredScorecard, Submission, Worker, db_now,
                               is_postgres, utcnow)

#: Claims per submission before an infrastructure error (or a lost worker) is final: the first try
#: and two retries.
MAX_ATTEMPTS = 3
#: Seconds a claim holds without a heartbeat (``grade worker --lease``); heartbeats come every
#: quarter of it.
DEFAULT_LEASE_S = 20.0


class WorkerRefused(RuntimeError):
    """This worker does not agree with the service's server (another grader version, other exercise
    files), or no ``grade serve`` has registered in the database yet; the message says what differs."""


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


def _server_agreement(session: Session) -> str | None:
    """The ``agreement`` digest of the newest ``grade serve`` registered, or None."""
    return session.scalar(select(Worker.agreement).where(Worker.role == "server")
                          .order_by(Worker.started_at.desc(), Worker.id).limit(1))


def claim(factory: sessionmaker, *, worker_id: str | None = None, lease_s: float = DEFAULT_LEASE_S,
          agreement: str | None = None) -> Claim | None:
    """Claim the oldest queued submission for one worker, or None when the queue is empty.

    Args:
        worker_id: the ``Worker.id`` whose heartbeat keeps the claim (None: a claim of nobody's,
            which expires after ``lease_s`` like any other).
        lease_s: seconds the claim holds before ``renew`` must push it on.
        agreement: the worker's agreement digest (``grader.service.fleet.agreement``); when given,
            it must equal the newest server's.
    Raises:
        WorkerRefused: ``agreement`` differs from the server's, or no server is registered (nothing
            is claimed).
    """
    token = secrets.token_hex(16)
    with factory() as session, session.begin():
        now = db_now(session)
        if agreement is not None:
            theirs = _server_agreement(session)
            if theirs is None:
                raise WorkerRefused("no `grade serve` has registered in this database yet")
            if theirs != agreement:
                raise WorkerRefused("the server's grader or exercise files changed since this worker started")
        claimed = dict(status="running", claim_token=token, started_at=now, attempts=Submission.attempts + 1,
                       worker_id=worker_id, lease_until=now + timedelta(seconds=lease_s))
        if is_postgres(session.get_bind()):
            row = session.execute(select(Submission.id).where(Submission.status == "queued")
                                  .order_by(Submission.id).limit(1).with_for_update(skip_locked=True)).first()
            if row is None:
                return None
            session.execute(update(Submission).where(Submission.id == row.id).values(**claimed))
        else:
            oldest = (select(Submission.id).where(Submission.status == "queued").order_by(Submission.id)
                      .limit(1).scalar_subquery())
            done = session.execute(update(Submission).where(Submission.id == oldest, Submission.status == "queued")
                                   .values(**claimed).execution_options(synchronize_session=False))
            if done.rowcount != 1:
                return None
        got = session.execute(select(Submission, Cohort.seed).join(Candidate, Candidate.id == Submission.candidate_id)
                              .join(Cohort, Cohort.id == Candidate.cohort_id)
                              .where(Submission.claim_token == token)).one()
        sub, seed = got
        session.add(Grading(submission_id=sub.id, worker_id=worker_id, claim_token=token, claimed_at=now))
        return Claim(sub.id, token, sub.exercise, bytes(sub.source), int(seed), int(sub.attempts))


def _ended(session: Session, token: str, outcome: str, now) -> None:
    session.execute(update(Grading).where(Grading.claim_token == token, Grading.outcome.is_(None))
                    .values(outcome=outcome, finished_at=now).execution_options(synchronize_session=False))


def complete(factory: sessionmaker, claim_: Claim, document: dict, score: float, max_score: float) -> bool:
    """Store the interviewer-view scorecard ``document`` and mark the submission graded.

    The scorecard, the ``graded`` mark and the grading's outcome are one transaction.

    Returns:
        False when the claim was no longer this worker's (its lease expired and the submission was
        re-queued or graded elsewhere): nothing is stored and the grading is marked ``discarded``.
        True otherwise.
    """
    with factory() as session, session.begin():
        now = db_now(session)
        done = session.execute(update(Submission)
                               .where(Submission.id == claim_.submission_id, Submission.claim_token == claim_.claim_token,
                                      Submission.status == "running")
                               .values(status="graded", finished_at=now, claim_token=None, error=None,
                                       worker_id=None, lease_until=None)
                               .execution_options(synchronize_session=False))
        if done.rowcount == 1:
            session.add(StoredScorecard(submission_id=claim_.submission_id, document=document, score=score,
                                        max_score=max_score, created_at=now))
        _ended(session, claim_.claim_token, "graded" if done.rowcount == 1 else "discarded", now)
    return done.rowcount == 1


def retry_or_fail(factory: sessionmaker, claim_: Claim, error: str) -> str:
    """After an infrastructure error: back to ``queued``, or ``infrastructure_error`` after
    ``MAX_ATTEMPTS`` claims. Returns the new status ("" when the claim was no longer ours)."""
    status = "queued" if claim_.attempt < MAX_ATTEMPTS else "infrastructure_error"
    with factory() as session, session.begin():
        now = db_now(session)
        done = session.execute(update(Submission)
                               .where(Submission.id == claim_.submission_id, Submission.claim_token == claim_.claim_token,
                                      Submission.status == "running")
                               .values(status=status, claim_token=None, error=error[:4000], worker_id=None,
                                       lease_until=None, finished_at=now if status != "queued" else None)
                               .execution_options(synchronize_session=False))
        ours = done.rowcount == 1
        _ended(session, claim_.claim_token, ("retried" if status == "queued" else "failed") if ours else "discarded",
               now)
        return status if ours else ""


def renew(factory: sessionmaker, worker_id: str, lease_s: float = DEFAULT_LEASE_S) -> int:
    """The heartbeat: push the leases of ``worker_id``'s claims to ``lease_s`` from now and stamp
    its ``workers`` row. Returns how many claims it holds."""
    with factory() as session, session.begin():
        now = db_now(session)
        session.execute(update(Worker).where(Worker.id == worker_id).values(heartbeat_at=now)
                        .execution_options(synchronize_session=False))
        done = session.execute(update(Submission).where(Submission.worker_id == worker_id,
                                                        Submission.status == "running")
                               .values(lease_until=now + timedelta(seconds=lease_s))
                               .execution_options(synchronize_session=False))
        return int(done.rowcount or 0)


def _give_back(session: Session, rows, outcome: str, now, why: str) -> list[int]:
    """Re-queue ``rows`` (id, claim_token, attempts) still holding those tokens; past
    ``MAX_ATTEMPTS`` claims a submission is failed (``infrastructure_error``) instead of re-queued,
    so a file that brings its workers down cannot circle for ever."""
    back = []
    for row in rows:
        final = outcome == "expired" and row.attempts >= MAX_ATTEMPTS
        values = dict(status="infrastructure_error", finished_at=now,
                      error=f"{why} on each of its {row.attempts} claims") if final else dict(status="queued")
        done = session.execute(update(Submission).where(Submission.id == row.id, Submission.claim_token == row.claim_token,
                                                        Submission.status == "running")
                               .values(claim_token=None, worker_id=None, lease_until=None, **values)
                               .execution_options(synchronize_session=False))
        if done.rowcount == 1:
            _ended(session, row.claim_token, outcome, now)
            if not final:
                back.append(row.id)
    return back


def requeue_expired(factory: sessionmaker) -> list[int]:
    """Return to the queue every ``running`` submission whose lease has ended (its worker stopped
    heartbeating), or that has no lease (left by a grader of before leases). Any worker or server may
    call it at any time; rows another caller is re-queuing are skipped (``SKIP LOCKED``).

    Returns:
        The ids re-queued (those failed after ``MAX_ATTEMPTS`` claims are not among them).
    """
    with factory() as session, session.begin():
        now = db_now(session)
        rows = session.execute(select(Submission.id, Submission.claim_token, Submission.attempts)
                               .where(Submission.status == "running",
                                      or_(Submission.lease_until.is_(None), Submission.lease_until < now))
                               .order_by(Submission.id).with_for_update(skip_locked=True)).all()
        return _give_back(session, rows, "expired", now, "its worker stopped answering")


def release(factory: sessionmaker, worker_id: str) -> list[int]:
    """Give back every claim ``worker_id`` still holds (a worker stopping before its gradings end):
    they are queued again at once, their late results discarded. Returns the ids."""
    with factory() as session, session.begin():
        now = db_now(session)
        rows = session.execute(select(Submission.id, Submission.claim_token, Submission.attempts)
                               .where(Submission.status == "running", Submission.worker_id == worker_id)
                               .order_by(Submission.id).with_for_update()).all()
        return _give_back(session, rows, "released", now, "")


def requeue_running(factory: sessionmaker) -> int:
    """Return every ``running`` submission to the queue at once, whoever holds it.

    Only for a database no grader is using (tools, tests): the service no longer calls it, since a
    live ``grade worker`` elsewhere may hold those claims; it relies on ``requeue_expired``.

    Returns:
        How many were re-queued.
    """
    with factory() as session, session.begin():
        now = db_now(session)
        rows = session.execute(select(Submission.id, Submission.claim_token, Submission.attempts)
                               .where(Submission.status == "running").with_for_update()).all()
        back = 0
        for row in rows:
            session.execute(update(Submission).where(Submission.id == row.id)
                            .values(status="queued", claim_token=None, worker_id=None, lease_until=None)
                            .execution_options(synchronize_session=False))
            if row.claim_token:
                _ended(session, row.claim_token, "expired", now)
            back += 1
        return back
