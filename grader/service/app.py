"""The service's ASGI app: the JSON API and the server-rendered pages (``create_app``).

Routes stay thin: they authorise (``grader.service.deps``), parse, and call ``grader.service.records``.
Status codes: 201 created, 202 accepted (queued), 401 no valid token, 403 the wrong role (a
candidate asking for the interviewer view, an interviewer submitting), a form from another site,
origin or port (``grader.service.csrf``), a candidate after their timed session
(``grader.service.sessions``) or before their feedback is released, 404 for ids that are absent or another candidate's alike,
409 no attempt left at the exercise, 413 over the size cap, 422 invalid input, 429 over the rate limit.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict, deque
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Callable

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field
from sqlalchemy import select
from starlette.datastructures import UploadFile

from grader.service import csrf, feedback, fleet, history, records, regrades, sessions
from grader.service.db import (DEFAULT_MAX_ATTEMPTS, Candidate, Cohort, Submission, make_engine, migrate,
                               session_factory, utcnow)
from grader.service.deps import DB, Anyone, AnyoneAnyTime, CandidateAnyTime, CandidateP, Interviewer
from grader.service.queue import DEFAULT_LEASE_S
from grader.service.records import Refused, parse_id
from grader.service.worker import WorkerPool

log = logging.getLogger("grader.service")


@dataclass(frozen=True)
class Settings:
    """How the service runs.

    Attributes:
        db_url: SQLAlchemy URL (``sqlite:///PATH`` or ``postgresql://...``).
        interviewer_token: the interviewer's bearer token (from ``GRADER_INTERVIEWER_TOKEN``).
        sandbox: ``docker`` (the default of ``grade serve``) or ``process`` (warned about on every page).
        workers: grading threads (0: none here; ``grade worker`` processes grade).
        max_source_bytes: size cap of one submitted file (bytes).
        max_body_bytes: cap of a whole request body (bytes); past it the request gets 413.
        rate_limit: submissions per candidate per ``rate_window_s`` seconds.
        poll_s: seconds an idle worker waits before looking at the queue again.
        clock: what "now" is for timed sessions, opening times and upload times (``db.utcnow``).
        warm_numpy, warm_torch: sandboxes each worker keeps started ahead with NumPy / torch imported
            (``grader.sandbox.pool``; ``process`` backend only, docker runs cold); 0 turns it off.
        lease_s: seconds a claim of this server's workers holds without a heartbeat
            (``grader.service.fleet``).
    """

    db_url: str
    interviewer_token: str
    sandbox: str = "docker"
    workers: int = 1
    max_source_bytes: int = 256 * 1024
    max_body_bytes: int = 512 * 1024
    rate_limit: int = 30
    rate_window_s: float = 60.0
    poll_s: float = 1.0
    warm_numpy: int = 1
    warm_torch: int = 1
    lease_s: float = DEFAULT_LEASE_S
    #: the service's clock: a function returning an aware UTC datetime (tests inject one; timed sessions)
    clock: Callable[[], datetime] = utcnow


class BodyLimit:
    """ASGI middleware: a request whose body passes ``limit`` bytes gets 413 before it is parsed
    (declared by Content-Length or counted while streaming), so multipart parsing never spools an
    oversized upload to disk."""

    def __init__(self, app, limit: int):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        for name, value in scope.get("headers", []):
            if name == b"content-length" and (not value.isdigit() or int(value) > self.limit):
                return await JSONResponse({"detail": f"request body over {self.limit} bytes"}, 413)(scope, receive, send)
        seen = 0

        async def limited():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise HTTPException(413, f"request body over {self.limit} bytes")
            return message

        await self.app(scope, limited, send)


class RateLimiter:
    """At most ``count`` events per key in any ``window_s`` seconds (a sliding window kept in memory)."""

    def __init__(self, count: int, window_s: float, clock=time.monotonic):
        self.count, self.window_s, self.clock = count, window_s, clock
        self._events: dict[object, deque] = defaultdict(deque)
        self._lock = threading.Lock()

    def allow(self, key) -> bool:
        """Record an event for ``key``; False (and nothing recorded) when over the limit."""
        now = self.clock()
        with self._lock:
            q = self._events[key]
            while q and q[0] <= now - self.window_s:
                q.popleft()
            if len(q) >= self.count:
                return False
            q.append(now)
            return True


class CohortIn(BaseModel):
    """``POST /api/cohorts`` body."""

    name: str = Field(min_length=1, max_length=200)
    exercises: list[str] = Field(min_length=1, max_length=50)
    seed: int | None = Field(default=None, ge=0, lt=2**31)
    opens_at: datetime | None = None
    closes_at: datetime | None = None
    #: uploads each candidate may make per exercise; the next one gets 409
    max_attempts: int = Field(default=DEFAULT_MAX_ATTEMPTS, ge=1, le=1000)
    #: minutes each candidate has from their first visit (None: untimed); closes_at still applies
    duration_minutes: int | None = Field(default=None, ge=1, le=7 * 24 * 60)


class ReleaseIn(BaseModel):
    """``POST /api/cohorts/{id}/feedback`` body: release to one candidate, or (no id) to the whole cohort."""

    candidate_id: int | None = None
    released: bool = True


class CandidateIn(BaseModel):
    """``POST /api/cohorts/{id}/candidates`` body."""

    name: str = Field(min_length=1, max_length=200)


class Created(BaseModel):
    """A created cohort or candidate (``token`` only for a candidate, shown this once)."""

    id: int
    token: str | None = None
    name: str
    exercises: list[str] | None = None
    max_attempts: int | None = None
    duration_minutes: int | None = None


class Queued(BaseModel):
    """``POST /api/submissions`` answer."""

    id: int
    status: str


def _view_requested(request: Request) -> str:
    """``candidate`` or ``interviewer`` from the query: the parameter ``view`` in any case, every
    value counted; anything that names the interviewer view (in any spelling, or repeated beside
    another value) is ``interviewer``, so the check that follows refuses it to a candidate."""
    values = [v.strip().lower() for k, v in request.query_params.multi_items() if k.strip().lower() == "view"]
    if any(v not in ("", "candidate") for v in values):
        return "interviewer"
    return "candidate"


def _refused(exc: Refused):
    raise HTTPException(exc.status, str(exc))


async def _read_upload(request: Request, settings: Settings) -> tuple[str, bytes, str, str | None]:
    """``(exercise, source, filename, form_token)`` from a multipart form (file ``file`` or text
    ``source``; ``csrf_token`` the page's form token, None when absent); other fields are ignored.
    Raises 413/422 as HTTPException."""
    async with request.form(max_files=1, max_fields=16, max_part_size=settings.max_source_bytes + 1024) as form:
        token = form.get(csrf.FIELD)
        token = token if isinstance(token, str) else None
        exercise = form.get("exercise")
        file = form.get("file")
        if isinstance(file, UploadFile) and file.filename:
            source = await file.read(settings.max_source_bytes + 1)
            filename = file.filename
        else:
            pasted = form.get("source")
            source = pasted.encode("utf-8") if isinstance(pasted, str) else b""
            filename = "pasted.py"
    if not isinstance(exercise, str) or not exercise:
        raise HTTPException(422, "the form needs a field 'exercise'")
    return exercise, source, filename, token


def create_app(settings: Settings, *, start_workers: bool = True) -> FastAPI:
    """The service. At start: migrate the database, register this server (its fingerprint is what every
    ``grade worker`` must agree with), start its heartbeat (which also re-queues claims whose
    worker stopped heartbeating, such as a killed server's) and its workers.

    Raises:
        ValueError: no interviewer token, or a bad database URL.
    """
    if not settings.interviewer_token:
        raise ValueError("GRADER_INTERVIEWER_TOKEN is not set: the service refuses to start without it")
    engine = make_engine(settings.db_url)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        migrate(engine)
        regrades.interrupt_running(app.state.sessions)  # a regrade cut short by a stop stays readable
        server_id = fleet.register(app.state.sessions, "server", fleet.local_fingerprint())
        heartbeat = fleet.Heartbeat(app.state.sessions, server_id, settings.lease_s).start()
        pool = WorkerPool(app.state.sessions, settings.workers, settings.sandbox, settings.poll_s,
                          warm={"numpy": settings.warm_numpy, "torch": settings.warm_torch},
                          worker_id=server_id, lease_s=settings.lease_s)
        app.state.pool = pool
        if start_workers:
            pool.start()
        yield
        pool.stop()
        heartbeat.stop()
        fleet.mark_stopped(app.state.sessions, server_id, "stopped")
        engine.dispose()

    app = FastAPI(title="attention-grader interview mode", lifespan=lifespan)
    app.state.settings = settings
    app.state.sessions = session_factory(engine)
    app.state.limiter = RateLimiter(settings.rate_limit, settings.rate_window_s)
    app.state.pool = None
    app.state.csrf_key = csrf.derive_key(settings.interviewer_token)
    app.state.clock = settings.clock
    from grader.service import pages  # noqa: PLC0415

    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    # outermost: a form from another site or port is refused before its body is read
    app.add_middleware(csrf.CrossSiteGuard, render=lambda status, message, api: (
        JSONResponse({"detail": message}, status) if api else pages.error_page(settings, status, message)))

    form_checked = csrf.require_for  # a cookie session sends its form token; Bearer callers pass

    def submit(session, who, exercise: str, source: bytes, filename: str, token: str | None) -> Submission:
        csrf.require(app.state.csrf_key, who.session, token)
        if not app.state.limiter.allow(who.candidate.id):
            raise HTTPException(429, "too many submissions: wait a minute", headers={"Retry-After": "60"})
        try:
            sub = records.accept(session, who.candidate, exercise, source, filename, settings.max_source_bytes,
                                 now=app.state.clock())
        except Refused as exc:
            _refused(exc)
        if app.state.pool is not None:
            app.state.pool.wake()
        return sub

    # -- JSON API ---------------------------------------------------------------------------------

    @app.get("/healthz")
    def healthz() -> dict:
        """Liveness: 200 while the server answers."""
        return {"ok": True}

    # exclude_none: a cohort's answer has no "token": null, a candidate's no "exercises": null
    @app.post("/api/cohorts", status_code=201, response_model=Created, response_model_exclude_none=True)
    def create_cohort(body: CohortIn, request: Request, session: DB, who: Interviewer):
        """Create a cohort (interviewer); ``max_attempts`` uploads per candidate and exercise (default 10)."""
        form_checked(request, who)
        try:
            c = records.create_cohort(session, body.name, body.exercises, body.seed, body.opens_at, body.closes_at,
                                      max_attempts=body.max_attempts, duration_minutes=body.duration_minutes)
        except Refused as exc:
            _refused(exc)
        return Created(id=c.id, name=c.name, exercises=list(c.exercises), max_attempts=c.max_attempts,
                       duration_minutes=c.duration_minutes)

    @app.get("/api/cohorts")
    def list_cohorts(session: DB, _: Interviewer) -> list[dict]:
        """Every cohort (interviewer)."""
        return [records.cohort_json(c, with_seed=True) for c in session.scalars(select(Cohort).order_by(Cohort.id))]

    def _cohort(session, cohort_id: str) -> Cohort:
        cohort = session.get(Cohort, parse_id(cohort_id)) if parse_id(cohort_id) else None
        if cohort is None:
            raise HTTPException(404, "not found")
        return cohort

    @app.post("/api/cohorts/{cohort_id}/candidates", status_code=201, response_model=Created,
              response_model_exclude_none=True)
    def add_candidate(cohort_id: str, body: CandidateIn, request: Request, session: DB, who: Interviewer):
        """Invite a candidate (interviewer); the token is returned this once."""
        form_checked(request, who)
        cohort = _cohort(session, cohort_id)
        cand, token = records.invite(session, cohort.id, body.name)
        return Created(id=cand.id, token=token, name=cand.name)

    @app.get("/api/cohorts/{cohort_id}/summary")
    def cohort_summary(cohort_id: str, session: DB, _: Interviewer) -> dict:
        """The cohort table (``grade review`` as JSON) and queue counts (interviewer)."""
        return records.summary_json(session, _cohort(session, cohort_id))

    @app.get("/api/cohorts/{cohort_id}/export/{fmt}")
    def cohort_export(cohort_id: str, fmt: str, session: DB, _: Interviewer) -> Response:
        """A download: ``csv``, ``junit``, ``json`` or ``gradescope`` (a zip) (interviewer)."""
        cohort = _cohort(session, cohort_id)
        if fmt not in records.EXPORTS:
            raise HTTPException(404, "not found")
        media, name = records.EXPORTS[fmt]
        return Response(records.export_bytes(session, cohort, fmt), media_type=media,
                        headers={"Content-Disposition": f'attachment; filename="{name.format(id=cohort.id)}"'})

    @app.get("/api/exercises")
    def my_exercises(session: DB, who: CandidateP) -> dict:
        """The exercises of the caller's cohort (candidate) and, per exercise, the attempts used and left."""
        cohort = session.get(Cohort, who.candidate.cohort_id)
        return {"cohort": records.cohort_json(cohort), "exercises": list(cohort.exercises),
                "attempts": records.attempts_left(session, who.candidate, cohort), "session": who.timer.to_json()}

    @app.get("/api/cohorts/{cohort_id}/sessions")
    def cohort_sessions(cohort_id: str, session: DB, _: Interviewer) -> list[dict]:
        """Time on task per candidate (interviewer): their session (start, end, time left) and, per
        exercise, the first open and each attempt's time since the session's start."""
        return sessions.time_on_task(session, _cohort(session, cohort_id), app.state.clock())

    @app.post("/api/cohorts/{cohort_id}/feedback")
    def release_feedback(cohort_id: str, body: ReleaseIn, request: Request, session: DB, who: Interviewer) -> dict:
        """Release (or, ``"released": false``, withdraw) the feedback page of one candidate of the
        cohort (``candidate_id``) or of all (interviewer); 404 for a candidate of another cohort."""
        form_checked(request, who)
        try:
            return records.release_feedback(session, _cohort(session, cohort_id), body.candidate_id, body.released,
                                            app.state.clock())
        except Refused as exc:
            _refused(exc)

    @app.get("/api/feedback")
    def my_feedback(session: DB, who: CandidateAnyTime) -> dict:
        """The caller's feedback (candidate; also after a timed session), 403 until it is released."""
        cand = session.get(Candidate, who.candidate.id)
        if feedback.released_at(session.get(Cohort, cand.cohort_id), cand) is None:
            raise HTTPException(403, records.NOT_RELEASED)
        return feedback.feedback(session, cand)

    @app.post("/api/submissions", status_code=202, response_model=Queued)
    async def create_submission(request: Request, who: CandidateP):
        """Upload a file (multipart: ``exercise``, ``file``) to be graded (candidate); 409 past the
        cohort's attempts at that exercise."""
        exercise, source, filename, token = await _read_upload(request, settings)
        with app.state.sessions() as session:
            sub = submit(session, who, exercise, source, filename, token)
            return Queued(id=sub.id, status=sub.status)

    @app.get("/api/submissions/{sub_id}")
    def get_submission(sub_id: str, request: Request, session: DB, who: AnyoneAnyTime) -> dict:
        """A submission's status and scorecard: the candidate view for its candidate (also after a
        timed session, so an upload made in time can be polled), 404 for any other;
        ``?view=interviewer`` with the interviewer token only (403 otherwise)."""
        view = _view_requested(request)
        if view == "interviewer" and not who.is_interviewer:
            raise HTTPException(403, "the interviewer view needs the interviewer token")
        try:
            sub = records.own_submission(session, parse_id(sub_id), None if who.is_interviewer else who.candidate)
        except Refused as exc:
            _refused(exc)
        return records.submission_json(session, sub, view)

    @app.get("/api/submissions/{sub_id}/history")
    def get_history(sub_id: str, session: DB, _: Interviewer) -> dict:
        """Every attempt of the submission's candidate at its exercise, oldest first, with the checks
        that changed verdict and the diff to the previous attempt (interviewer; ``history.timeline``)."""
        try:
            sub = records.own_submission(session, parse_id(sub_id), None)
        except Refused as exc:
            _refused(exc)
        return history.timeline(session, sub)

    @app.get("/api/submissions/{sub_id}/source")
    def get_source(sub_id: str, session: DB, who: Anyone) -> Response:
        """The submitted file as text (its candidate or the interviewer)."""
        try:
            sub = records.own_submission(session, parse_id(sub_id), None if who.is_interviewer else who.candidate)
        except Refused as exc:
            _refused(exc)
        return Response(sub.source, media_type="text/plain; charset=utf-8",
                        headers={"Content-Disposition": "attachment; filename=submission.py",
                                 "X-Content-Type-Options": "nosniff"})

    # -- pages ------------------------------------------------------------------------------------
    pages.add_routes(app, submit=submit, read_upload=_read_upload)
    return app
