"""Storage of interview mode: SQLAlchemy 2 models, engines and sessions.

Tables: ``cohorts`` (an interview round: exercise ids, one hidden seed fixed at creation, opening
and closing times, attempts allowed per candidate and exercise), ``candidates`` (invite tokens stored as SHA-256 hex digests, never in clear),
``submissions`` (source bytes, sha256, exercise, times, queue status, and while ``running`` the
claiming worker and its lease), ``scorecards`` (the interviewer-view JSON of
``grader/schemas/scorecard.schema.json``, at most one per submission: the primary key makes "graded
exactly once" a database constraint), ``workers`` (every ``grade serve`` and ``grade worker``
process: what it grades with and its last heartbeat) and ``gradings`` (one row per claim and how
it ended: the record that shows each submission was graded once).

The schema is created and upgraded by the Alembic revisions in ``grader/service/migrations``
(``migrate``), never by ``create_all``. URLs: ``sqlite:///PATH`` (the default, a file) or
``postgresql://...`` (driven by psycopg 3; ``postgresql+psycopg://`` is accepted as is).

A SQLite database is the service's own file: created 0600 (its folder 0700 when the service creates
it), and SQLite gives its ``-journal``/``-wal``/``-shm`` files the database's mode; an existing
database or journal that others may read is narrowed to 0600 at start (``grader.private``).
"""

from __future__ import annotations

import hashlib
import logging
from datetime import datetime, timezone
from pathlib import Path

from sqlalchemy import (JSON, BigInteger, Boolean, DateTime, ForeignKey, Integer, LargeBinary, String, Text,
                        UniqueConstraint, create_engine, event)
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, sessionmaker

from grader import private

log = logging.getLogger("grader.service")

#: Queue states of a submission. ``queued`` -> ``running`` -> ``graded``; an infrastructure error
#: puts it back to ``queued`` until ``MAX_ATTEMPTS`` (grader.service.queue), then ``infrastructure_error``.
STATUSES = ("queued", "running", "graded", "infrastructure_error")
DEFAULT_DB_URL = "sqlite:///grader-service.db"
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
#: Attempts a candidate has at each exercise of a cohort unless its creator says otherwise: enough
#: to fix a few mistakes, few enough that one bit per hidden check and attempt stays a small leak.
DEFAULT_MAX_ATTEMPTS = 10
#: Files SQLite keeps beside a database (rollback journal, write-ahead log, its shared-memory index).
SQLITE_SIDE_FILES = ("-journal", "-wal", "-shm")


def utcnow() -> datetime:
    """The current time, UTC, timezone-aware."""
    return datetime.now(timezone.utc)


def as_utc(moment: datetime | None) -> datetime | None:
    """``moment`` as an aware UTC datetime (SQLite hands back naive ones, which are UTC here)."""
    if moment is None:
        return None
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


def token_digest(token: str) -> str:
    """SHA-256 hex digest of a token: what the database keeps instead of the token (64 chars)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class Base(DeclarativeBase):
    """Declarative base of the service's tables."""


class Cohort(Base):
    """An interview round: the exercises it grades, its hidden seed, when it is open."""

    __tablename__ = "cohorts"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    #: exercise ids, in the order the interviewer gave them
    exercises: Mapped[list] = mapped_column(JSON)
    #: seed of the hidden cases, fixed at creation (0 <= seed < 2**31); never in a candidate view
    seed: Mapped[int] = mapped_column(BigInteger)
    opens_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    closes_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    #: uploads each candidate may make per exercise (an infrastructure error is not counted)
    max_attempts: Mapped[int] = mapped_column(Integer, default=DEFAULT_MAX_ATTEMPTS)
    #: minutes each candidate has from their first visit (None: untimed; grader.service.sessions)
    duration_minutes: Mapped[int | None] = mapped_column(Integer, nullable=True)
    #: when the interviewer released every candidate's feedback page (None: not released)
    feedback_released_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class Candidate(Base):
    """One invited candidate of a cohort; ``token_hash`` is ``token_digest`` of their invite token."""

    __tablename__ = "candidates"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cohort_id: Mapped[int] = mapped_column(ForeignKey("cohorts.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    #: the first authenticated visit in a timed cohort: the start of their session (None: not yet)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: when the interviewer released this candidate's feedback page (None: not released alone)
    feedback_released_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class ExerciseOpen(Base):
    """The first time a candidate opened an exercise (its page, or an upload without it): time on task."""

    __tablename__ = "exercise_opens"
    candidate_id: Mapped[int] = mapped_column(ForeignKey("candidates.id"), primary_key=True)
    exercise: Mapped[str] = mapped_column(String(64), primary_key=True)
    opened_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Submission(Base):
    """One uploaded file and its place in the queue.

    ``filename`` is the upload's name as the client gave it, kept for display only: the source is
    always written to the sandbox as ``submission.py`` (never to a path taken from the upload).
    ``attempts`` counts claims (a crash or an infrastructure error makes one more).
    """

    __tablename__ = "submissions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    candidate_id: Mapped[int] = mapped_column(ForeignKey("candidates.id"), index=True)
    exercise: Mapped[str] = mapped_column(String(64))
    source: Mapped[bytes] = mapped_column(LargeBinary)
    sha256: Mapped[str] = mapped_column(String(64))
    filename: Mapped[str] = mapped_column(String(255), default="")
    status: Mapped[str] = mapped_column(String(32), index=True, default="queued")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    claim_token: Mapped[str | None] = mapped_column(String(64), nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: while ``running``: the ``Worker.id`` holding the claim (None otherwise)
    worker_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    #: while ``running``: the claim ends at this time (database clock) unless its worker's heartbeat
    #: renews it; past it the submission goes back to the queue (``grader.service.fleet``)
    lease_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class Worker(Base):
    """One grading process of the service: a ``grade serve`` (role ``server``; the newest one's
    ``fingerprint`` is what every worker must agree with) or a ``grade worker`` (role ``worker``).

    ``agreement`` is the sha256 of the fields that must agree (``grader.service.fleet.agreement``);
    ``note`` says why a worker was refused or how it stopped.
    """

    __tablename__ = "workers"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    role: Mapped[str] = mapped_column(String(16))
    host: Mapped[str] = mapped_column(String(255))
    pid: Mapped[int] = mapped_column(Integer)
    fingerprint: Mapped[dict] = mapped_column(JSON)
    agreement: Mapped[str] = mapped_column(String(64))
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    heartbeat_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    stopped_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    note: Mapped[str | None] = mapped_column(Text, nullable=True)


#: How a grading (one claim) ended: its scorecard stored; its result arrived after the claim was
#: taken over (discarded); an infrastructure error sent it back to the queue / failed it for good;
#: its worker stopped heartbeating (expired); its worker stopped and gave it back (released).
GRADING_OUTCOMES = ("graded", "discarded", "retried", "failed", "expired", "released")


class Grading(Base):
    """One claim of a submission by a worker, and how it ended (``outcome`` None while it runs)."""

    __tablename__ = "gradings"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"), index=True)
    worker_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    claim_token: Mapped[str] = mapped_column(String(64), unique=True)
    claimed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    outcome: Mapped[str | None] = mapped_column(String(16), nullable=True)


class StoredScorecard(Base):
    """The interviewer-view scorecard of a graded submission (one at most per submission)."""

    __tablename__ = "scorecards"
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"), primary_key=True)
    document: Mapped[dict] = mapped_column(JSON)
    score: Mapped[float] = mapped_column(default=0.0)
    max_score: Mapped[float] = mapped_column(default=0.0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Regrade(Base):
    """A regrade of a cohort's graded submissions with the grader of the day (issue 21; migration 0004).

    ``status``: ``running``, ``done``, or ``interrupted`` (the server stopped during it; what it
    graded is kept). ``accepted``: its scorecards stand for the round (at most one per cohort; none
    accepted: the original scorecards stand). ``total``: submissions it set out to regrade.
    """

    __tablename__ = "regrades"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cohort_id: Mapped[int] = mapped_column(ForeignKey("cohorts.id"), index=True)
    grader_version: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(32), default="running")
    accepted: Mapped[bool] = mapped_column(Boolean, default=False)
    total: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class RegradedScorecard(Base):
    """The interviewer-view scorecard a regrade produced for one submission (the original stays in
    ``scorecards``); one per (regrade, submission)."""

    __tablename__ = "regraded_scorecards"
    __table_args__ = (UniqueConstraint("regrade_id", "submission_id", name="uq_regraded_once"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    regrade_id: Mapped[int] = mapped_column(ForeignKey("regrades.id"), index=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"), index=True)
    document: Mapped[dict] = mapped_column(JSON)
    score: Mapped[float] = mapped_column(default=0.0)
    max_score: Mapped[float] = mapped_column(default=0.0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class KnownSource(Base):
    """A file the interviewer registers for a cohort's similarity check (e.g. a public implementation
    to rule out): compared with every submission of ``exercise``; ``label`` is for display only."""

    __tablename__ = "known_sources"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cohort_id: Mapped[int] = mapped_column(ForeignKey("cohorts.id"), index=True)
    exercise: Mapped[str] = mapped_column(String(64))
    label: Mapped[str] = mapped_column(String(255))
    source: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


def normalise_url(url: str) -> str:
    """``postgresql://`` and ``postgres://`` get the psycopg 3 driver; anything else unchanged.

    Raises:
        ValueError: not a database URL SQLAlchemy can parse, or a backend other than SQLite/PostgreSQL.
    """
    try:
        parsed = make_url(url)
    except Exception as exc:  # noqa: BLE001 - sqlalchemy raises ArgumentError
        raise ValueError(f"not a database URL: {url!r}") from exc
    backend = parsed.get_backend_name()
    if backend in ("postgresql", "postgres"):
        return parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
    if backend != "sqlite":
        raise ValueError(f"unsupported database {backend!r}: use sqlite:///PATH or postgresql://...")
    return url


def private_sqlite_file(database: str | None) -> None:
    """Make the SQLite database ``database`` (a path; in-memory and ``file:`` URIs are left alone)
    the service's own before SQLite opens it: its folder created 0700 when missing (an existing one
    refused if others may write to it), the file created 0600, and an existing database or side file
    (``-journal``, ``-wal``, ``-shm``) that others may read narrowed to 0600 (logged).

    Raises:
        ValueError: a file others may read that this user cannot change, or a folder others may write.
    """
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    path = Path(database)
    try:
        private.make_dirs(path.parent if str(path.parent) else Path("."), fix_existing=False)
        fixed = [path] if private.ensure_file(path) == "fixed" else []
        fixed += [Path(f"{path}{side}") for side in SQLITE_SIDE_FILES
                  if private.ensure_file(Path(f"{path}{side}"), create=False) == "fixed"]
    except private.NotPrivate as exc:
        raise ValueError(f"the database is not private: {exc}") from exc
    for p in fixed:
        log.warning("%s could be read by other users: its mode is now 0600", p)


def make_engine(url: str = DEFAULT_DB_URL) -> Engine:
    """An engine for ``url``, set up for many threads.

    SQLite: WAL journal, a 30 s busy timeout, foreign keys on, and every transaction begun with
    ``BEGIN IMMEDIATE`` (the pysqlite recipe of SQLAlchemy's SQLite dialect docs), so a claim is one
    writer at a time and never a lock upgrade that deadlocks; the file is private
    (``private_sqlite_file``). PostgreSQL: psycopg 3, pre-ping.

    Raises:
        ValueError: see ``normalise_url`` and ``private_sqlite_file``.
    """
    url = normalise_url(url)
    if make_url(url).get_backend_name() != "sqlite":
        return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)
    private_sqlite_file(make_url(url).database)
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record):  # pragma: no cover - exercised by every SQLite test
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA busy_timeout=30000")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn):  # pragma: no cover
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def is_postgres(engine: Engine) -> bool:
    """Whether ``engine`` talks to PostgreSQL (the queue then claims with SKIP LOCKED)."""
    return engine.dialect.name == "postgresql"


def db_now(session) -> datetime:
    """The database's clock (PostgreSQL ``now()``, aware UTC), so that workers on machines whose
    clocks differ agree on when a lease ends; SQLite (one machine) uses this machine's clock."""
    if is_postgres(session.get_bind()):
        from sqlalchemy import func, select  # noqa: PLC0415

        return as_utc(session.scalar(select(func.now())))
    return utcnow()


def session_factory(engine: Engine) -> sessionmaker:
    """Sessions that keep loaded attributes after commit (routes read them after committing)."""
    return sessionmaker(engine, expire_on_commit=False)


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest Alembic revision (idempotent; run at every start).

    Raises:
        sqlalchemy.exc.OperationalError: the database cannot be reached.
    """
    from alembic import command  # noqa: PLC0415
    from alembic.config import Config  # noqa: PLC0415

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
