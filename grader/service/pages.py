"""Server-rendered pages of the service (Jinja2, autoescaped; everything works without JavaScript).

Candidates: their exercises; an exercise's page in one track (``?track=numpy|torch``, the exercise's
default track without it): the track named, that track's statement and stub, a link to the other
track, the stub as a download (``stub.py``) and pre-filled in the paste box, the latest attempt's
result under the form (updated in place, never reloaded: the box keeps what is typed); their attempts with
candidate-view scorecards (a queued one shows its result when grading ends: the pages' one static
script, ``static/exercise.js``, polls ``GET /api/submissions/{id}`` and swaps the result in; without
JavaScript the page refreshes itself). The pages' CSP allows scripts from the service's own origin
only (``script-src 'self'``: no inline script, no ``eval``), and every form carries its form token
in a hidden field, script or not. Interviewer: the cohorts,
a cohort's table (candidates x checks, as ``grade review``) with the score distribution and a link
to the ``grade report`` page, one submission's interviewer view beside its source, and the diff of
two attempts. Login sets the token in an HttpOnly, SameSite=Strict cookie: tokens never appear in
a URL. Authorisation is the API's: 401 without a token, 403 for the wrong role, 404 for ids that
are absent or another candidate's. Every form carries a token bound to the session (the login form:
to a pre-session cookie set with it), and a form post from another site or port is refused with a
403 page (``grader.service.csrf``). A candidate sees the attempts left at each exercise; past the
last, the upload form is replaced by a note and a post gets a 409 page. In a timed cohort every
candidate page shows the time left, and after it a 403 page (``grader.service.sessions``); the
interviewer's submission page carries the attempt timeline (``grader.service.history``) and the
cohort page the time on task and the feedback release forms; a released feedback page
(``grader.service.feedback``) is the candidate's, also as one self-contained HTML file.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import jinja2
from fastapi import FastAPI, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from sqlalchemy import select

from grader.cohort import plots
from grader.cohort.report import detail_rows, render_report
from grader.cohort.review import diff_scorecards
from grader.grading.exercise import TRACKS, UnknownTrack, get_exercise, track_for_source
from grader.grading.notebook import shown_text
from grader.grading.render import clip
from grader.service import csrf, feedback, history, records, sessions
from grader.service.db import Candidate, Cohort, Submission, as_utc
from grader.service.deps import COOKIE, DB, Anyone, CandidateAnyTime, CandidateP, Interviewer, MaybeAnyone, identify
from grader.service.records import Refused, parse_id
from grader.service.statement import render_statement

TEMPLATES = Path(__file__).resolve().parent / "templates"
#: The pages' static files (``/static/...``): the one script of the pages, ``exercise.js``.
STATIC = Path(__file__).resolve().parent / "static"
#: How a page names a track.
TRACK_NAMES = {"numpy": "NumPy", "torch": "PyTorch"}
#: The pages' Content-Security-Policy: scripts only from this origin (the static script; no inline
#: script, no ``eval``), forms only to this origin, never framed.
PAGE_CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
            "script-src 'self'; frame-ancestors 'none'; form-action 'self'")
_ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                          undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
_ENV.globals["detail_rows"] = detail_rows
_ENV.filters["clip"] = clip
_ENV.globals["track_names"] = TRACK_NAMES


def _when(moment) -> str:
    return as_utc(moment).strftime("%Y-%m-%d %H:%M:%S UTC") if moment else ""


_ENV.filters["when"] = _when


def _dur(seconds) -> str:
    """Seconds as ``+1 h 02 min`` / ``+3 min 05 s`` ("" for None): time since a session's start."""
    if seconds is None:
        return ""
    s = int(seconds)
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return f"+{h} h {m:02d} min" if h else f"+{m} min {sec:02d} s"


_ENV.filters["dur"] = _dur


def render(settings, name: str, code: int = 200, **context) -> HTMLResponse:
    """The template ``name`` as a response with the pages' security headers (``PAGE_CSP``: scripts
    from this origin only, no framing, forms only to this origin). ``context`` needs ``who``;
    ``csrf_token`` defaults to ""."""
    context.setdefault("csrf_token", "")
    html = _ENV.get_template(name).render(process_warning=settings.sandbox == "process", **context)
    return HTMLResponse(html, status_code=code, headers={
        "Content-Security-Policy": PAGE_CSP,
        # same-origin, not no-referrer: under no-referrer a browser sends "Origin: null" with the
        # page's own form posts, and the cross-site guard needs the origin (grader.service.csrf)
        "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin"})


def error_page(settings, status: int, message: str) -> HTMLResponse:
    """The error page: ``status`` and a sentence saying why (also the cross-site guard's 403)."""
    return render(settings, "error.html.j2", status, who=None, status=status, message=message)


class _StaticFiles(StaticFiles):
    """The pages' static folder, every answer with ``X-Content-Type-Options: nosniff`` (a browser
    then runs ``exercise.js`` only as the JavaScript its type says, like the pages' other answers)."""

    async def get_response(self, path: str, scope):  # noqa: D102 - StaticFiles.get_response
        response = await super().get_response(path, scope)
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response


def add_routes(app: FastAPI, *, submit, read_upload) -> None:
    """Add the pages to ``app``; ``submit`` and ``read_upload`` are the API's own helpers."""
    settings = app.state.settings
    key = app.state.csrf_key
    app.mount("/static", _StaticFiles(directory=STATIC), name="static")

    def page(name: str, code: int = 200, **context) -> HTMLResponse:
        who = context.get("who")
        if who is not None and who.session:
            context.setdefault("csrf_token", csrf.form_token(key, who.session))
        return render(settings, name, code, **context)

    def login_page(request: Request, code: int = 200, failed: bool = False) -> HTMLResponse:
        """The login form, its token bound to the pre-session cookie (set here when absent)."""
        presession = request.cookies.get(csrf.PRESESSION_COOKIE) or secrets.token_urlsafe(32)
        resp = page("login.html.j2", code, who=None, failed=failed,
                    csrf_token=csrf.form_token(key, presession, "login"))
        resp.set_cookie(csrf.PRESESSION_COOKIE, presession, httponly=True, samesite="strict", path="/")
        return resp

    @app.exception_handler(HTTPException)
    async def _errors(request: Request, exc: HTTPException):
        if request.url.path.startswith("/api/") or request.url.path == "/healthz":
            from fastapi.exception_handlers import http_exception_handler  # noqa: PLC0415

            return await http_exception_handler(request, exc)
        return page("error.html.j2", exc.status_code, who=None, status=exc.status_code, message=str(exc.detail))

    @app.get("/", response_class=HTMLResponse)
    def home(request: Request, who: MaybeAnyone):
        """The login form, or the caller's start page."""
        if who is None:
            return login_page(request)
        return RedirectResponse("/interviewer" if who.is_interviewer else "/candidate", 303)

    @app.post("/login")
    def login(request: Request, session: DB, token: str = Form(default="", max_length=512),
              csrf_token: str = Form(default="", max_length=128)):
        """Check the token from the form and keep it in a cookie (HttpOnly, SameSite=Strict); the
        form's own token must match the pre-session cookie set with the login page (403 otherwise)."""
        if not csrf.valid(key, request.cookies.get(csrf.PRESESSION_COOKIE), csrf_token, "login"):
            raise HTTPException(403, "this login form is not from this service's own page (or it is out of "
                                     "date): open the login page again and log in there")
        who = identify(token.strip(), settings.interviewer_token, session)
        if who is None:
            return login_page(request, 401, failed=True)
        resp = RedirectResponse("/interviewer" if who.is_interviewer else "/candidate", 303)
        resp.set_cookie(COOKIE, token.strip(), httponly=True, samesite="strict", path="/")
        resp.delete_cookie(csrf.PRESESSION_COOKIE, path="/")
        return resp

    @app.post("/logout")
    def logout(who: MaybeAnyone, csrf_token: str = Form(default="", max_length=128)):
        """Forget the cookie (a logged-in session must send its form token: 403 otherwise)."""
        if who is not None:
            csrf.require(key, who.session, csrf_token)
        resp = RedirectResponse("/", 303)
        resp.delete_cookie(COOKIE, path="/")
        return resp

    # -- candidate --------------------------------------------------------------------------------

    def attempts(session, cand: Candidate, exercise: str | None = None) -> list[dict]:
        q = select(Submission).where(Submission.candidate_id == cand.id).order_by(Submission.id.desc())
        if exercise:
            q = q.where(Submission.exercise == exercise)
        out = []
        for sub in session.scalars(q):
            card = records.stored_card(session, sub)
            out.append({"sub": sub, "card": card and card.candidate_view()})
        return out

    @app.get("/candidate", response_class=HTMLResponse)
    def candidate_home(session: DB, who: CandidateP):
        """The candidate's exercises and attempts."""
        cohort = session.get(Cohort, who.candidate.cohort_id)
        exercises = [get_exercise(e) for e in cohort.exercises]
        return page("candidate.html.j2", who=who, cohort=cohort, exercises=exercises,
                    attempts=attempts(session, who.candidate), left=records.attempts_left(session, who.candidate, cohort),
                    released=feedback.released_at(cohort, session.get(Candidate, who.candidate.id)))

    def cohort_exercise(session, who, exercise_id: str, track: str = ""):
        """Exercise ``exercise_id`` of the caller's cohort in ``track`` ("": its default track).

        Raises:
            HTTPException(404): the exercise is not the cohort's, or has no such track.
        """
        cohort = session.get(Cohort, who.candidate.cohort_id)
        if exercise_id not in cohort.exercises or (track and track not in TRACKS):
            raise HTTPException(404, "not found")
        try:
            return get_exercise(exercise_id, track=track or None)
        except UnknownTrack:
            raise HTTPException(404, "not found") from None

    @app.get("/candidate/exercises/{exercise_id}", response_class=HTMLResponse)
    def candidate_exercise(exercise_id: str, session: DB, who: CandidateP, track: str = ""):
        """Statement and stub of one exercise in ``track`` (``numpy`` or ``torch``; default: the
        exercise's own), the upload form and the attempts at it; 404 for an exercise outside the
        cohort or a track it does not have."""
        return exercise_page(session, who, cohort_exercise(session, who, exercise_id, track))

    @app.get("/candidate/exercises/{exercise_id}/stub.py")
    def candidate_stub(exercise_id: str, session: DB, who: CandidateP, track: str = "") -> Response:
        """The starting file of one exercise in ``track`` as a download (``<id>.py``, as ``grade
        init`` names it); 404 as the exercise page."""
        ex = cohort_exercise(session, who, exercise_id, track)
        return Response(ex.stub_path.read_bytes(), media_type="text/x-python; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{ex.id}.py"',
                                 "X-Content-Type-Options": "nosniff"})

    def exercise_page(session, who, ex, error: str = "", code: int = 200, pasted: str | None = None) -> HTMLResponse:
        """The exercise page of ``ex`` (an ``Exercise`` in the track shown); ``error`` above the form
        and ``pasted`` (the text sent) back in the paste box after a refused upload."""
        cohort = session.get(Cohort, who.candidate.cohort_id)
        sessions.record_open(session, who.candidate.id, ex.id, app.state.clock())
        stub = ex.stub_path.read_text(encoding="utf-8")
        tried = attempts(session, who.candidate, ex.id)  # newest first
        return page("exercise.html.j2", code, who=who, ex=ex,
                    spec=render_statement(ex.spec_path.read_text(encoding="utf-8")),
                    stub=stub, pasted=stub if pasted is None else pasted,
                    other_tracks=[t for t in ex.tracks if t != ex.track],
                    attempts=tried, latest=tried[0] if tried else None,
                    left=records.attempts_left(session, who.candidate, cohort)[ex.id], error=error)

    @app.post("/candidate/submit")
    async def candidate_submit(request: Request, who: CandidateP):
        """The upload form's target: queue the file (or pasted text), then show its page (a 409
        page when no attempt is left, 403 without the page's form token). A refused upload (empty,
        too large, ...) shows the exercise's form again with the reason."""
        exercise, source, filename = None, b"", ""
        try:
            exercise, source, filename, token = await read_upload(request, settings)
            with app.state.sessions() as session:
                sub = submit(session, who, exercise, source, filename, token)
        except HTTPException as exc:
            with app.state.sessions() as session:
                cohort = session.get(Cohort, who.candidate.cohort_id)
                if exc.status_code not in (413, 422) or exercise not in cohort.exercises:
                    raise
                # the page of the track the text was written for, the pasted text back in the box
                ex = get_exercise(exercise, track=track_for_source(exercise, source))
                text = source.decode("utf-8", "replace") if filename == "pasted.py" and exc.status_code == 422 else ""
                pasted = text if text.strip() else None
                return exercise_page(session, who, ex, error=f"Not submitted: {exc.detail}.", code=exc.status_code,
                                     pasted=pasted)
        return RedirectResponse(f"/candidate/submissions/{sub.id}", 303)

    @app.get("/candidate/submissions/{sub_id}", response_class=HTMLResponse)
    def candidate_submission(sub_id: str, session: DB, who: CandidateP):
        """One attempt with its candidate-view scorecard."""
        try:
            sub = records.own_submission(session, parse_id(sub_id), who.candidate)
        except Refused as exc:
            raise HTTPException(exc.status, str(exc)) from None
        card = records.stored_card(session, sub)
        return page("submission.html.j2", who=who, sub=sub, card=card and card.candidate_view(), source=None,
                    candidate=None, timeline=None)

    # -- interviewer ------------------------------------------------------------------------------

    @app.get("/interviewer", response_class=HTMLResponse)
    def interviewer_home(session: DB, who: Interviewer):
        """Every cohort."""
        return page("cohorts.html.j2", who=who, cohorts=list(session.scalars(select(Cohort).order_by(Cohort.id))))

    def cohort_or_404(session, cohort_id: str) -> Cohort:
        cohort = session.get(Cohort, parse_id(cohort_id)) if parse_id(cohort_id) else None
        if cohort is None:
            raise HTTPException(404, "not found")
        return cohort

    @app.get("/interviewer/cohorts/{cohort_id}", response_class=HTMLResponse)
    def interviewer_cohort(cohort_id: str, session: DB, who: Interviewer):
        """The cohort table, the score distribution, candidates and every submission."""
        cohort = cohort_or_404(session, cohort_id)
        summary = records.summary_json(session, cohort)
        percents: dict[str, list[float]] = {}
        for t in summary["tables"]:
            percents[t["exercise"]] = [100.0 * r["score"] / r["max_score"] if r["max_score"] else 0.0 for r in t["rows"]]
        distribution = plots.score_distribution(percents) if any(percents.values()) else None
        candidates = list(session.scalars(select(Candidate).where(Candidate.cohort_id == cohort.id)
                                          .order_by(Candidate.id)))
        names = {c.id: c.name for c in candidates}
        subs = list(session.scalars(select(Submission).join(Candidate, Candidate.id == Submission.candidate_id)
                                    .where(Candidate.cohort_id == cohort.id).order_by(Submission.id.desc())))
        return page("cohort.html.j2", who=who, cohort=cohort, summary=summary, distribution=distribution,
                    candidates=candidates, names=names, subs=subs, exports=list(records.EXPORTS),
                    regrades=records.regrades.regrades_of(session, cohort.id),
                    on_task=sessions.time_on_task(session, cohort, app.state.clock()))

    @app.get("/interviewer/cohorts/{cohort_id}/report", response_class=HTMLResponse)
    def interviewer_report(cohort_id: str, session: DB, who: Interviewer):
        """The ``grade report`` page of the cohort's latest attempts."""
        cohort = cohort_or_404(session, cohort_id)
        items = records.cohort_cards(session, cohort.id)
        html = render_report([(i.label, i.card) for i in items], title=f"Cohort {cohort.name}: grading report")
        return HTMLResponse(html, headers={"Content-Security-Policy": "script-src 'none'; frame-ancestors 'none'"})

    @app.get("/interviewer/submissions/{sub_id}", response_class=HTMLResponse)
    def interviewer_submission(sub_id: str, session: DB, who: Interviewer):
        """One submission's interviewer view beside its source."""
        try:
            sub = records.own_submission(session, parse_id(sub_id), None)
        except Refused as exc:
            raise HTTPException(exc.status, str(exc)) from None
        return page("submission.html.j2", who=who, sub=sub, card=records.stored_card(session, sub),
                    source=shown_text(sub.source),
                    candidate=session.get(Candidate, sub.candidate_id), timeline=history.timeline(session, sub))

    @app.get("/interviewer/diff", response_class=HTMLResponse)
    def interviewer_diff(session: DB, who: Interviewer, a: str = "", b: str = ""):
        """What changed between two graded attempts at one exercise (``grade review --diff``)."""
        cards = []
        for sub_id in (a, b):
            try:
                sub = records.own_submission(session, parse_id(sub_id), None)
            except Refused as exc:
                raise HTTPException(exc.status, str(exc)) from None
            card = records.stored_card(session, sub)
            if card is None:
                raise HTTPException(422, f"submission {sub.id} is not graded")
            cards.append((f"#{sub.id}", card))
        if cards[0][1].exercise["id"] != cards[1][1].exercise["id"]:
            raise HTTPException(422, "a diff compares two attempts at one exercise")
        subs = [records.own_submission(session, parse_id(x), None) for x in (a, b)]
        return page("diff.html.j2", who=who, diff=diff_scorecards(cards[0], cards[1]), a=a, b=b,
                    source_diff=history.source_diff(subs[0].source, subs[1].source))

    # -- feedback pages (issue 21 item 6) ----------------------------------------------------------

    def feedback_file(doc: dict, name: str) -> HTMLResponse:
        """The self-contained feedback file (inline CSS, no scripts, no external links) as a download."""
        html = _ENV.get_template("feedback_file.html.j2").render(fb=doc)
        return HTMLResponse(html, headers={"Content-Disposition": f'attachment; filename="{name}"',
                                           "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
                                           "X-Content-Type-Options": "nosniff"})

    def released_candidate(session, who) -> Candidate:
        cand = session.get(Candidate, who.candidate.id)
        if feedback.released_at(session.get(Cohort, cand.cohort_id), cand) is None:
            raise HTTPException(403, records.NOT_RELEASED)
        return cand

    @app.get("/candidate/feedback", response_class=HTMLResponse)
    def candidate_feedback(session: DB, who: CandidateAnyTime):
        """The candidate's released feedback page (also after a timed session); 403 before release."""
        cand = released_candidate(session, who)
        return page("feedback.html.j2", who=who, fb=feedback.feedback(session, cand), download="/candidate/feedback.html")

    @app.get("/candidate/feedback.html")
    def candidate_feedback_file(session: DB, who: CandidateAnyTime):
        """The released feedback page as one self-contained HTML file (a download); 403 before release."""
        cand = released_candidate(session, who)
        return feedback_file(feedback.feedback(session, cand), "feedback.html")

    def cohort_candidate(session, cand_id: str) -> Candidate:
        cand = session.get(Candidate, parse_id(cand_id)) if parse_id(cand_id) else None
        if cand is None:
            raise HTTPException(404, "not found")
        return cand

    @app.get("/interviewer/candidates/{cand_id}/feedback", response_class=HTMLResponse)
    def interviewer_feedback(cand_id: str, session: DB, who: Interviewer):
        """What the candidate's feedback page shows (a preview before release, the page after)."""
        cand = cohort_candidate(session, cand_id)
        return page("feedback.html.j2", who=who, fb=feedback.feedback(session, cand),
                    download=f"/interviewer/candidates/{cand.id}/feedback.html")

    @app.get("/interviewer/candidates/{cand_id}/feedback.html")
    def interviewer_feedback_file(cand_id: str, session: DB, who: Interviewer):
        """The candidate's feedback page as a self-contained HTML file (to send by mail, say)."""
        cand = cohort_candidate(session, cand_id)
        return feedback_file(feedback.feedback(session, cand), f"feedback-candidate-{cand.id}.html")

    @app.post("/interviewer/cohorts/{cohort_id}/feedback")
    def interviewer_release(cohort_id: str, session: DB, who: Interviewer,
                            csrf_token: str = Form(default="", max_length=128),
                            candidate_id: str = Form(default="", max_length=20),
                            released: str = Form(default="1", max_length=1)):
        """The release form of the cohort page (form token checked): one candidate, or all without an id."""
        csrf.require(key, who.session, csrf_token)
        cohort = cohort_or_404(session, cohort_id)
        cand = parse_id(candidate_id) if candidate_id else None
        if candidate_id and cand is None:
            raise HTTPException(404, "not found")
        try:
            records.release_feedback(session, cohort, cand, released == "1", app.state.clock())
        except Refused as exc:
            raise HTTPException(exc.status, str(exc)) from None
        return RedirectResponse(f"/interviewer/cohorts/{cohort.id}", 303)

    from grader.service import round_routes  # noqa: PLC0415 - regrades (issue 21)

    round_routes.add_routes(app, page, read_upload)
    _ = Anyone  # the API's dependency aliases are shared; pages use the role-specific ones
