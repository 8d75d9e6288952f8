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

Pages: a "regrade" button on the cohort page (``POST /interviewer/cohorts/{id}/regrade``), the
regrade's page with the change table (``/interviewer/cohorts/{id}/regrades/{rid}``, refreshing
itself while it runs) and its two choices (``POST .../regrades/{rid}/choose``, field ``stands``:
``regrade`` or ``original``).
"""

from __future__ import annotations

from fastapi import FastAPI, Form, HTTPException
from fastapi.responses import RedirectResponse
from pydantic import BaseModel

from grader.service import regrades
from grader.service.db import Cohort
from grader.service.deps import DB, Interviewer
from grader.service.records import parse_id


class StandingIn(BaseModel):
    """``POST /api/cohorts/{id}/standing`` body: the regrade whose scorecards stand, or null for the originals."""

    regrade_id: int | None = None


def _refused(exc: regrades.RegradeRefused):
    raise HTTPException(exc.status, str(exc))


def add_routes(app: FastAPI, page) -> None:
    """Add the regrade API and pages to ``app``; ``page(template, code, **context)`` renders a page."""

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
    def api_start_regrade(cohort_id: str, _: Interviewer) -> dict:
        """Regrade the cohort's graded submissions with the current grader (interviewer)."""
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
    def api_choose(cohort_id: str, body: StandingIn, session: DB, _: Interviewer) -> dict:
        """Choose which scorecards stand: a regrade's, or the originals (``regrade_id`` null)."""
        cid = cohort_id_of(session, cohort_id)
        try:
            regrades.choose(session, cid, body.regrade_id)
        except regrades.RegradeRefused as exc:
            _refused(exc)
        return {"cohort_id": cid, "standing": body.regrade_id}

    @app.post("/interviewer/cohorts/{cohort_id}/regrade")
    def page_start_regrade(cohort_id: str, _: Interviewer):
        """The cohort page's "regrade" button."""
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
    def page_choose(cohort_id: str, regrade_id: str, session: DB, _: Interviewer,
                    stands: str = Form(default="", max_length=16)):
        """The regrade page's two buttons: ``stands=regrade`` or ``stands=original``."""
        cid = cohort_id_of(session, cohort_id)
        regrade = one(session, cid, regrade_id)
        if stands not in ("regrade", "original"):
            raise HTTPException(422, "stands must be 'regrade' or 'original'")
        try:
            regrades.choose(session, cid, regrade.id if stands == "regrade" else None)
        except regrades.RegradeRefused as exc:
            _refused(exc)
        return RedirectResponse(f"/interviewer/cohorts/{cid}/regrades/{regrade.id}", 303)
