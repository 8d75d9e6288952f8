"""Routes of a hiring round's tools (issue 21): regrading a cohort after a fix, as JSON API and pages.

Thin, as every route of the service: authorise (``Interviewer``), parse, call
``grader.service.regrades``. Added by ``add_routes`` from ``grader.service.pages.add_routes`` (which
passes its page renderer), so ``app.py`` and ``pages.py`` change by one line each.

API (interviewer only; 401 without a token, 403 for a candidate, 404 for another cohort's ids):

* ``POST /api/cohorts/{id}/regrades`` -> 202 ``{"id", "status": "running", ...}``: regrade every
  graded submission of the cohort with the current grader at the cohort's seed (409 while one runs,
  422 with nothing graded).
* ``GET /api/cohorts/{id}/regrades`` -> the cohort's regrades, newest first.
* ``GET /api/cohorts/{id}/regrades/{rid}`` -> one regrade with its change table (``changes``: per
  submission, score and status before and after, checks that changed verdict).
* ``POST /api/cohorts/{id}/standing`` ``{"regrade_id": rid | null}`` -> which scorecards stand for
  the round: that regrade's, or the originals (null). Nothing is deleted either way.

Similarity (interviewer only): ``GET /api/cohorts/{id}/similarity`` (the ranked pairs as JSON, with
the disclaimer), ``GET /api/cohorts/{id}/similarity.csv`` (the same figures, a download) and the
page ``/interviewer/cohorts/{id}/similarity`` (ranked pairs, side-by-side views with the matching
spans highlighted): each exercise's candidates' latest graded submissions, pairwise and against the
sources a candidate can find (``grader.cohort.similarity``) and the files the interviewer registers
for the cohort (``POST /api/cohorts/{id}/known-sources``, multipart ``exercise`` and ``file``; or the
form on the similarity page). A flag for a person, never a verdict.

Pages: a "regrade" button on the cohort page (``POST /interviewer/cohorts/{id}/regrade``), the
regrade's page with the change table (``/interviewer/cohorts/{id}/regrades/{rid}``, refreshing
itself while it runs) and its two choices (``POST .../regrades/{rid}/choose``, field ``stands``:
``regrade`` or ``original``).
"""

from __future__ import annotations

from fastapi import FastAPI, Form, HTTPException, Request
from fastapi.responses import RedirectResponse, Response
from pydantic import BaseModel

from grader.service import csrf, regrades
from grader.service.db import Cohort, KnownSource, utcnow
from grader.service.deps import DB, Interviewer
from grader.service.records import parse_id


class StandingIn(BaseModel):
    """``POST /api/cohorts/{id}/standing`` body: the regrade whose scorecards stand, or null for the originals."""

    regrade_id: int | None = None


def _refused(exc: regrades.RegradeRefused):
    raise HTTPException(exc.status, str(exc))


def add_routes(app: FastAPI, page, read_upload) -> None:
    """Add the regrade and similarity API and pages to ``app``; ``page(template, code, **context)``
    renders a page, ``read_upload`` is the API's multipart reader (``grader.service.app._read_upload``).
    Every POST route checks the form token of a cookie session (``grader.service.csrf``)."""

    checked = csrf.require_for  # a caller with the login cookie sends its session's token

    def cohort_id_of(session, cohort_id: str) -> int:
        cid = parse_id(cohort_id)
        if cid is None or session.get(Cohort, cid) is None:
            raise HTTPException(404, "not found")
        return cid

    def begin(cohort_id: str):
        """Start a regrade. The route holds no database session meanwhile: on SQLite every
        transaction takes the write lock (``BEGIN IMMEDIATE``), so ``start`` opens its own."""
        pool = app.state.pool
        if pool is None:
            raise HTTPException(503, "the service has no grading workers")
        cid = parse_id(cohort_id)
        if cid is None:
            raise HTTPException(404, "not found")
        try:
            return regrades.start(app.state.sessions, cid, pool.grade, app.state.settings.sandbox)
        except regrades.RegradeRefused as exc:
            _refused(exc)

    def one(session, cid: int, regrade_id: str):
        try:
            return regrades.get_regrade(session, cid, parse_id(regrade_id))
        except regrades.RegradeRefused as exc:
            _refused(exc)

    @app.post("/api/cohorts/{cohort_id}/regrades", status_code=202)
    def api_start_regrade(cohort_id: str, request: Request, who: Interviewer) -> dict:
        """Regrade the cohort's graded submissions with the current grader (interviewer)."""
        checked(request, who)
        regrade = begin(cohort_id)
        with app.state.sessions() as session:
            return regrades.regrade_json(session, regrade, with_changes=False)

    @app.get("/api/cohorts/{cohort_id}/regrades")
    def api_list_regrades(cohort_id: str, session: DB, _: Interviewer) -> list[dict]:
        """The cohort's regrades, newest first (interviewer)."""
        cid = cohort_id_of(session, cohort_id)
        return [regrades.regrade_json(session, r, with_changes=False) for r in regrades.regrades_of(session, cid)]

    @app.get("/api/cohorts/{cohort_id}/regrades/{regrade_id}")
    def api_get_regrade(cohort_id: str, regrade_id: str, session: DB, _: Interviewer) -> dict:
        """One regrade and its change table (interviewer)."""
        return regrades.regrade_json(session, one(session, cohort_id_of(session, cohort_id), regrade_id))

    @app.post("/api/cohorts/{cohort_id}/standing")
    def api_choose(cohort_id: str, body: StandingIn, request: Request, session: DB, who: Interviewer) -> dict:
        """Choose which scorecards stand: a regrade's, or the originals (``regrade_id`` null)."""
        checked(request, who)
        cid = cohort_id_of(session, cohort_id)
        try:
            regrades.choose(session, cid, body.regrade_id)
        except regrades.RegradeRefused as exc:
            _refused(exc)
        return {"cohort_id": cid, "standing": body.regrade_id}

    @app.post("/interviewer/cohorts/{cohort_id}/regrade")
    def page_start_regrade(cohort_id: str, request: Request, who: Interviewer,
                           csrf_token: str = Form(default="", max_length=128)):
        """The cohort page's "regrade" button."""
        checked(request, who, csrf_token)
        regrade = begin(cohort_id)
        return RedirectResponse(f"/interviewer/cohorts/{regrade.cohort_id}/regrades/{regrade.id}", 303)

    @app.get("/interviewer/cohorts/{cohort_id}/regrades/{regrade_id}")
    def page_regrade(cohort_id: str, regrade_id: str, session: DB, who: Interviewer):
        """A regrade's change table and the choice of which scorecards stand."""
        cid = cohort_id_of(session, cohort_id)
        regrade = one(session, cid, regrade_id)
        return page("regrade.html.j2", who=who, cohort=session.get(Cohort, cid),
                    regrade=regrades.regrade_json(session, regrade))

    @app.post("/interviewer/cohorts/{cohort_id}/regrades/{regrade_id}/choose")
    def page_choose(cohort_id: str, regrade_id: str, request: Request, session: DB, who: Interviewer,
                    stands: str = Form(default="", max_length=16), csrf_token: str = Form(default="", max_length=128)):
        """The regrade page's two buttons: ``stands=regrade`` or ``stands=original``."""
        checked(request, who, csrf_token)
        cid = cohort_id_of(session, cohort_id)
        regrade = one(session, cid, regrade_id)
        if stands not in ("regrade", "original"):
            raise HTTPException(422, "stands must be 'regrade' or 'original'")
        try:
            regrades.choose(session, cid, regrade.id if stands == "regrade" else None)
        except regrades.RegradeRefused as exc:
            _refused(exc)
        return RedirectResponse(f"/interviewer/cohorts/{cid}/regrades/{regrade.id}", 303)

    @app.get("/api/cohorts/{cohort_id}/similarity")
    def api_similarity(cohort_id: str, session: DB, _: Interviewer) -> dict:
        """The cohort's similarity pairs, highest score first (interviewer)."""
        from grader.cohort.similarity import DISCLAIMER, THRESHOLD  # noqa: PLC0415

        pairs = cohort_similarity(session, cohort_id_of(session, cohort_id))
        return {"note": DISCLAIMER, "threshold": THRESHOLD, "pairs": [p.to_json() for p in pairs]}

    @app.get("/api/cohorts/{cohort_id}/similarity.csv")
    def api_similarity_csv(cohort_id: str, session: DB, _: Interviewer) -> Response:
        """The cohort's similarity pairs as CSV (interviewer)."""
        cid = cohort_id_of(session, cohort_id)
        return Response(similarity_csv(cohort_similarity(session, cid)), media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="cohort-{cid}-similarity.csv"'})

    @app.post("/api/cohorts/{cohort_id}/known-sources", status_code=201)
    async def api_register_source(cohort_id: str, request: Request, who: Interviewer) -> dict:
        """Register a file (multipart: ``exercise``, ``file``) that every submission of the exercise is
        compared with (interviewer)."""
        return await register(cohort_id, request, who)

    @app.post("/interviewer/cohorts/{cohort_id}/known-sources")
    async def page_register_source(cohort_id: str, request: Request, who: Interviewer):
        """The similarity page's form to register a file."""
        doc = await register(cohort_id, request, who)
        return RedirectResponse(f"/interviewer/cohorts/{doc['cohort_id']}/similarity", 303)

    async def register(cohort_id: str, request: Request, who) -> dict:
        settings = app.state.settings
        exercise, source, filename, token = await read_upload(request, settings)
        checked(request, who, token)
        cid = parse_id(cohort_id)
        with app.state.sessions() as session:
            cohort = session.get(Cohort, cid) if cid is not None else None
            if cohort is None:
                raise HTTPException(404, "not found")
            if exercise not in cohort.exercises:
                raise HTTPException(422, f"exercise {exercise!r} is not part of this cohort")
            if len(source) > settings.max_source_bytes or not source.strip():
                raise HTTPException(413 if source.strip() else 422, "the file is empty or too large")
            row = KnownSource(cohort_id=cid, exercise=exercise, label=f"registered/{filename}"[:255],
                              source=source, created_at=utcnow())
            session.add(row)
            session.commit()
            return {"id": row.id, "cohort_id": cid, "exercise": exercise, "label": row.label}

    @app.get("/interviewer/cohorts/{cohort_id}/similarity")
    def page_similarity(cohort_id: str, session: DB, who: Interviewer):
        """Ranked pairs and side-by-side views (interviewer)."""
        from grader.cohort.similarity import DISCLAIMER, THRESHOLD  # noqa: PLC0415

        cid = cohort_id_of(session, cohort_id)
        pairs = cohort_similarity(session, cid)
        return page("similarity.html.j2", who=who, cohort=session.get(Cohort, cid), pairs=pairs, shown=pairs[:20],
                    disclaimer=DISCLAIMER, threshold=THRESHOLD)


def cohort_similarity(session, cohort_id: int):
    """``grader.cohort.similarity.compare_sources`` for each exercise of a cohort over its candidates'
    latest graded submissions (a notebook as its code cells), labelled ``name #id``."""
    from grader.cohort.similarity import _RANK, Source, compare_sources, known_sources  # noqa: PLC0415
    from grader.grading.notebook import submission_text  # noqa: PLC0415
    from sqlalchemy import select  # noqa: PLC0415

    from grader.service.records import cohort_cards  # noqa: PLC0415

    by_exercise: dict[str, list] = {}
    for item in cohort_cards(session, cohort_id):
        text = submission_text(bytes(item.submission.source))
        if text is not None:
            by_exercise.setdefault(item.submission.exercise, []).append(Source(item.label, "candidate", text))
    registered: dict[str, list] = {}
    for row in session.scalars(select(KnownSource).where(KnownSource.cohort_id == cohort_id).order_by(KnownSource.id)):
        text = submission_text(bytes(row.source))
        if text is not None:
            registered.setdefault(row.exercise, []).append(Source(f"{row.label} #{row.id}", "registered", text))
    pairs = []
    for exercise, cands in sorted(by_exercise.items()):
        known, stubs = known_sources(exercise)
        pairs += compare_sources(exercise, cands, known + registered.get(exercise, []), stubs=stubs)
    pairs.sort(key=lambda p: (-p.score, p.exercise, _RANK.get(p.kind, 9), p.a, p.b))
    return pairs


def similarity_csv(pairs) -> str:
    """The pairs' figures as CSV, names guarded against spreadsheet formulas."""
    import csv  # noqa: PLC0415
    import io  # noqa: PLC0415

    from grader.cohort.regrade import _cell  # noqa: PLC0415

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["exercise", "a", "b", "kind", "score", "share_a", "share_b", "flagged"])
    for p in pairs:
        d = p.to_json()
        writer.writerow([d["exercise"], _cell(d["a"]), _cell(d["b"]), d["kind"], d["score"], d["share_a"], d["share_b"],
                         "yes" if d["flagged"] else "no"])
    return buf.getvalue()
