"""Interview mode's forms and attempts, in process (FastAPI's TestClient; no workers, so uploads stay
queued), on SQLite and on a PostgreSQL the fixture starts: no state change without the service's
own page (form tokens bound to the session, ``Origin``/``Sec-Fetch-Site`` refused when they name
another site or port), the JSON API with a Bearer token unaffected, and the per-exercise attempt
limit (409 and a clear page; atomic under concurrent uploads; the interviewer sees every attempt).
The same forms in real Chromium, posted from a page on another port: tests/test_service_pages.py."""

from __future__ import annotations

import re
import threading

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select, update

from grader.service import csrf, records
from grader.service.app import Settings, create_app
from grader.service.db import Candidate, Cohort, Submission, make_engine, migrate, session_factory
from service_helpers import INTERVIEWER_TOKEN, Postgres, auth

pytestmark = pytest.mark.service

BROKEN = b"def softmax(x, axis=-1:\n"
TOKEN_RE = re.compile(r'name="csrf_token" value="([0-9a-f]*)"')


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def svc(request, tmp_path):
    """A service app (no workers) with a cohort (softmax, mha; 3 attempts) and candidates ann and bob."""
    pg = Postgres() if request.param == "postgres" else None
    url = pg.url if pg else f"sqlite:///{tmp_path / 'svc.db'}"
    app = create_app(Settings(db_url=url, interviewer_token=INTERVIEWER_TOKEN, rate_limit=1000), start_workers=False)
    try:
        with TestClient(app, base_url="http://127.0.0.1:8000") as client:
            i = auth(INTERVIEWER_TOKEN)
            cohort = client.post("/api/cohorts", headers=i, json={"name": "r", "exercises": ["softmax", "mha"],
                                                                  "max_attempts": 3}).json()
            people = {n: client.post(f"/api/cohorts/{cohort['id']}/candidates", headers=i, json={"name": n}).json()
                      for n in ("ann", "bob")}
            client.app_, client.cohort, client.people = app, cohort, people
            yield client
    finally:
        if pg:
            pg.stop()


def login(client, token: str) -> str:
    """Log in through the login page's form (cookie jar of ``client``); returns the session's form token."""
    client.cookies.clear()
    page = client.get("/")
    r = client.post("/login", data={"token": token, "csrf_token": TOKEN_RE.search(page.text).group(1)},
                    follow_redirects=False)
    assert r.status_code == 303, r.text[-500:]
    home = client.get("/candidate" if token != INTERVIEWER_TOKEN else "/interviewer")
    return TOKEN_RE.search(home.text).group(1)


def stored(client) -> int:
    with client.app_.state.sessions() as s:
        return s.scalar(select(func.count()).select_from(Submission))


def paste(client, token_field: str | None, exercise: str = "softmax", path: str = "/candidate/submit", **kw):
    data = {"exercise": exercise, "source": BROKEN.decode()}
    if token_field is not None:
        data["csrf_token"] = token_field
    return client.post(path, data=data, files={"unused": ("", b"")}, follow_redirects=False, **kw)


# -- the Origin / Sec-Fetch-Site guard ------------------------------------------------------------


@pytest.mark.parametrize("headers,refused", [
    ({}, False),                                                     # curl, an old browser: the token decides
    ({"origin": "http://127.0.0.1:8000"}, False),
    ({"origin": "https://127.0.0.1:8000"}, False),                   # behind a TLS proxy: host and port decide
    ({"sec-fetch-site": "same-origin", "origin": "http://127.0.0.1:8000"}, False),
    ({"sec-fetch-site": "none"}, False),
    ({"origin": "http://127.0.0.1:9999"}, True),                     # another port of the same host
    ({"origin": "http://localhost:8000"}, True),                     # another host name
    ({"origin": "http://127.0.0.1"}, True),                          # port 80 is another port
    ({"origin": "null"}, True),                                      # sandboxed frame, file:, data:
    ({"origin": "null", "sec-fetch-site": "same-site"}, True),
    ({"origin": "null", "sec-fetch-site": "same-origin"}, False),    # a no-referrer page of this service
    ({"origin": "http://127.0.0.1:8000.evil.test"}, True),
    ({"sec-fetch-site": "same-site"}, True),                         # what Chromium sends from another port
    ({"sec-fetch-site": "cross-site", "origin": "http://127.0.0.1:8000"}, True),
    ({"sec-fetch-site": "same-site", "authorization": "Bearer x"}, False),   # the API: no ambient credential
    ({"origin": "http://127.0.0.1:9999", "authorization": "Basic x"}, True),  # not a bearer token
    ({"origin": "http://127.0.0.1:9999", "authorization": "Bearer "}, True),  # empty: the cookie would be read
])
def test_foreign_names_other_sites_and_ports(headers, refused):
    scope = {"type": "http", "method": "POST", "path": "/candidate/submit", "scheme": "http",
             "headers": [(b"host", b"127.0.0.1:8000")] + [(k.encode(), v.encode()) for k, v in headers.items()]}
    assert (csrf.foreign(scope) is not None) == refused
    assert csrf.foreign({**scope, "method": "GET"}) is None  # safe methods are never refused


def test_cross_port_post_gets_a_clear_403_page_and_stores_nothing(svc):
    form = login(svc, svc.people["ann"]["token"])
    r = paste(svc, form, headers={"Origin": "http://127.0.0.1:9999", "Sec-Fetch-Site": "same-site"})
    assert r.status_code == 403 and r.headers["content-type"].startswith("text/html")
    assert "another site or port" in r.text and "<h1>403</h1>" in r.text
    r = paste(svc, form, path="/api/submissions", headers={"Origin": "http://127.0.0.1:9999"})
    assert r.status_code == 403 and "another origin" in r.json()["detail"]  # JSON under /api/
    assert stored(svc) == 0
    assert paste(svc, form, headers={"Origin": "http://127.0.0.1:8000", "Sec-Fetch-Site": "same-origin"}).status_code == 303
    assert stored(svc) == 1


def test_bearer_api_is_unaffected_by_origin(svc):
    """``grade submit --server`` and scripts: a Bearer request from anywhere needs no form token."""
    r = svc.post("/api/submissions", headers={**auth(svc.people["ann"]["token"]), "Origin": "http://evil.test",
                                              "Sec-Fetch-Site": "cross-site"},
                 data={"exercise": "softmax"}, files={"file": ("a.py", BROKEN)})
    assert r.status_code == 202
    r = svc.post("/api/cohorts", headers={**auth(INTERVIEWER_TOKEN), "Origin": "http://evil.test"},
                 json={"name": "x", "exercises": ["softmax"]})
    assert r.status_code == 201 and r.json()["max_attempts"] == 10  # the default


# -- form tokens bound to the session ---------------------------------------------------------------


def test_every_state_changing_route_needs_the_form_token_of_its_cookie_session(svc):
    """Each POST route of the app, called with the login cookie and no Bearer header: refused (403)
    without a token and with another session's token, and nothing changes. A new POST route that
    forgets the check fails here."""
    posts = sorted(r.path for r in svc.app_.routes if "POST" in getattr(r, "methods", ()))
    assert posts == ["/api/cohorts", "/api/cohorts/{cohort_id}/candidates", "/api/cohorts/{cohort_id}/feedback",
                     "/api/cohorts/{cohort_id}/known-sources", "/api/cohorts/{cohort_id}/regrades",
                     "/api/cohorts/{cohort_id}/standing", "/api/submissions", "/candidate/submit",
                     "/interviewer/cohorts/{cohort_id}/feedback", "/interviewer/cohorts/{cohort_id}/known-sources",
                     "/interviewer/cohorts/{cohort_id}/regrade",
                     "/interviewer/cohorts/{cohort_id}/regrades/{regrade_id}/choose", "/login",
                     "/logout"]  # the feedback routes' tokens: tests/test_service_timed.py
    bob_form = login(svc, svc.people["bob"]["token"])
    ann_form = login(svc, svc.people["ann"]["token"])
    cid = svc.cohort["id"]
    for bad in (None, "", bob_form, "0" * 64):
        assert paste(svc, bad).status_code == 403
        assert paste(svc, bad, path="/api/submissions").status_code == 403  # cookie, no Bearer: a form request
        r = svc.post("/logout", data={} if bad is None else {"csrf_token": bad}, follow_redirects=False)
        assert r.status_code == 403
        assert svc.get("/candidate").status_code == 200  # still logged in
    assert stored(svc) == 0
    interviewer_form = login(svc, INTERVIEWER_TOKEN)
    with svc.app_.state.sessions() as s:
        before = (s.scalar(select(func.count()).select_from(Cohort)), s.scalar(select(func.count()).select_from(Candidate)))
    for bad in (None, ann_form):
        headers = {} if bad is None else {"X-CSRF-Token": bad}
        assert svc.post("/api/cohorts", headers=headers, json={"name": "x", "exercises": ["softmax"]}).status_code == 403
        assert svc.post(f"/api/cohorts/{cid}/candidates", headers=headers, json={"name": "eve"}).status_code == 403
    with svc.app_.state.sessions() as s:
        after = (s.scalar(select(func.count()).select_from(Cohort)), s.scalar(select(func.count()).select_from(Candidate)))
    assert after == before
    # the round tools' routes (regrade, standing, registered files): refused without the token, nothing stored
    from grader.service.db import KnownSource, Regrade  # noqa: PLC0415

    for bad in (None, ann_form):
        form = {} if bad is None else {"csrf_token": bad}
        headers = {} if bad is None else {"X-CSRF-Token": bad}
        assert svc.post(f"/api/cohorts/{cid}/regrades", headers=headers).status_code == 403
        assert svc.post(f"/api/cohorts/{cid}/standing", headers=headers, json={"regrade_id": None}).status_code == 403
        assert svc.post(f"/interviewer/cohorts/{cid}/regrade", data=form, follow_redirects=False).status_code == 403
        assert svc.post(f"/interviewer/cohorts/{cid}/regrades/1/choose", data={**form, "stands": "original"},
                        follow_redirects=False).status_code == 403
        for path in (f"/api/cohorts/{cid}/known-sources", f"/interviewer/cohorts/{cid}/known-sources"):
            r = svc.post(path, data={**form, "exercise": "softmax"}, files={"file": ("k.py", b"x = 1\n")},
                         follow_redirects=False)
            assert r.status_code == 403
    with svc.app_.state.sessions() as s:
        assert s.scalar(select(func.count()).select_from(Regrade)) == 0
        assert s.scalar(select(func.count()).select_from(KnownSource)) == 0
    ok = svc.post(f"/api/cohorts/{cid}/candidates", headers={"X-CSRF-Token": interviewer_form}, json={"name": "eve"})
    assert ok.status_code == 201
    # the login form: its token is bound to the pre-session cookie set with the login page
    svc.cookies.clear()
    assert svc.post("/login", data={"token": svc.people["ann"]["token"]}, follow_redirects=False).status_code == 403
    page_token = TOKEN_RE.search(svc.get("/").text).group(1)
    svc.cookies.set(csrf.PRESESSION_COOKIE, "planted-by-another-port")  # a cookie written from another port
    r = svc.post("/login", data={"token": svc.people["ann"]["token"], "csrf_token": page_token}, follow_redirects=False)
    assert r.status_code == 403 and "open the login page again" in r.text
    assert "grader_session" not in r.headers.get("set-cookie", "")


def test_own_pages_forms_work_and_logout_ends_the_session(svc):
    form = login(svc, svc.people["ann"]["token"])
    page = svc.get("/candidate/exercises/softmax").text
    assert TOKEN_RE.search(page).group(1) == form  # the upload form carries the session's token
    r = paste(svc, form)
    assert r.status_code == 303 and re.fullmatch(r"/candidate/submissions/\d+", r.headers["location"])
    assert stored(svc) == 1
    r = svc.post("/logout", data={"csrf_token": form}, follow_redirects=False)
    assert r.status_code == 303 and 'grader_session=""' in r.headers["set-cookie"]
    svc.cookies.clear()
    assert svc.get("/candidate").status_code == 401


def test_a_token_is_bound_to_its_session_and_purpose():
    key = csrf.derive_key(INTERVIEWER_TOKEN)
    t = csrf.form_token(key, "session-a")
    assert len(t) == 64 and csrf.valid(key, "session-a", t)
    assert not csrf.valid(key, "session-b", t)
    assert not csrf.valid(key, "session-a", t, "login")  # a session token is no login token
    assert not csrf.valid(csrf.derive_key("another interviewer token"), "session-a", t)
    assert not csrf.valid(key, None, t) and not csrf.valid(key, "session-a", None)


# -- attempts ---------------------------------------------------------------------------------------


def test_attempt_limit_409_on_the_api_a_clear_page_and_the_interviewer_sees_all(svc):
    ann = svc.people["ann"]["token"]

    def api_upload(exercise="softmax"):
        return svc.post("/api/submissions", headers=auth(ann), data={"exercise": exercise},
                        files={"file": ("a.py", BROKEN)})

    assert [api_upload().status_code for _ in range(3)] == [202, 202, 202]
    r = api_upload()
    assert r.status_code == 409 and "no attempts left at softmax" in r.json()["detail"] and "3" in r.json()["detail"]
    assert api_upload("mha").status_code == 202  # the limit is per exercise
    doc = svc.get("/api/exercises", headers=auth(ann)).json()
    assert doc["attempts"]["softmax"] == {"used": 3, "limit": 3, "left": 0}
    assert doc["attempts"]["mha"] == {"used": 1, "limit": 3, "left": 2} and doc["cohort"]["max_attempts"] == 3
    # an infrastructure error is the grader's fault: it gives the attempt back
    with svc.app_.state.sessions() as s:
        first = s.scalar(select(Submission.id).where(Submission.exercise == "softmax").order_by(Submission.id))
        s.execute(update(Submission).where(Submission.id == first).values(status="infrastructure_error"))
        s.commit()
    assert svc.get("/api/exercises", headers=auth(ann)).json()["attempts"]["softmax"]["left"] == 1
    assert api_upload().status_code == 202 and api_upload().status_code == 409
    # the pages: what is left, no form past the limit, and a 409 page for a post anyway
    form = login(svc, ann)
    page = svc.get("/candidate/exercises/softmax").text
    assert 'data-left="0" data-limit="3"' in page and 'id="no-attempts-left"' in page and 'id="upload"' not in page
    assert 'id="upload"' in svc.get("/candidate/exercises/mha").text
    assert "0 of 3 attempts left" in svc.get("/candidate").text and "2 of 3 attempts left" in svc.get("/candidate").text
    r = paste(svc, form)
    assert r.status_code == 409 and "<h1>409</h1>" in r.text and "no attempts left at softmax" in r.text
    # another candidate has their own attempts
    assert svc.post("/api/submissions", headers=auth(svc.people["bob"]["token"]), data={"exercise": "softmax"},
                    files={"file": ("a.py", BROKEN)}).status_code == 202
    # the interviewer: the limit and every attempt (5 of ann, 1 of bob, the infrastructure error included)
    html = svc.get(f"/interviewer/cohorts/{svc.cohort['id']}", headers=auth(INTERVIEWER_TOKEN)).text
    assert '<span id="max-attempts">3</span>' in html
    assert len(re.findall(r'<tr><td><a href="/interviewer/submissions/\d+">', html)) == stored(svc) == 6


def test_max_attempts_is_validated_at_creation(svc):
    i = auth(INTERVIEWER_TOKEN)
    for bad in (0, -1, 10**6, "many"):
        assert svc.post("/api/cohorts", headers=i, json={"name": "x", "exercises": ["softmax"],
                                                         "max_attempts": bad}).status_code == 422
    listed = {c["id"]: c for c in svc.get("/api/cohorts", headers=i).json()}
    assert listed[svc.cohort["id"]]["max_attempts"] == 3


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def sessions(request, tmp_path):
    pg = Postgres() if request.param == "postgres" else None
    engine = make_engine(pg.url if pg else f"sqlite:///{tmp_path / 'a.db'}")
    migrate(engine)
    try:
        yield session_factory(engine)
    finally:
        engine.dispose()
        if pg:
            pg.stop()


def test_concurrent_uploads_never_pass_the_limit(sessions):
    """16 threads upload at once for one candidate with 4 attempts: exactly 4 are stored, the rest 409."""
    with sessions() as s:
        cohort = records.create_cohort(s, "c", ["softmax"], seed=7, max_attempts=4)
        cand, _ = records.invite(s, cohort.id, "ann")
    start, outcomes, lock = threading.Barrier(16), [], threading.Lock()

    def upload():
        start.wait()
        with sessions() as s:
            try:
                records.accept(s, cand, "softmax", b"x = 1\n", "a.py", 1024)
                got = "ok"
            except records.Refused as exc:
                got = exc.status
        with lock:
            outcomes.append(got)

    threads = [threading.Thread(target=upload) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes, key=str) == [409] * 12 + ["ok"] * 4
    with sessions() as s:
        assert records.attempts_used(s, cand.id, "softmax") == 4


def test_migration_0002_gives_existing_cohorts_the_default(tmp_path):
    from alembic import command
    from alembic.config import Config

    from grader.service.db import MIGRATIONS_DIR

    engine = make_engine(f"sqlite:///{tmp_path / 'old.db'}")
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0001")
        conn.exec_driver_sql("INSERT INTO cohorts (name, exercises, seed, created_at) "
                             "VALUES ('old', '[\"softmax\"]', 1, '2026-01-01 00:00:00')")
    migrate(engine)
    with session_factory(engine)() as s:
        assert s.scalars(select(Cohort)).one().max_attempts == 10
    with engine.begin() as conn:  # and back down
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0001")
        assert "max_attempts" not in [r[1] for r in conn.exec_driver_sql("PRAGMA table_info(cohorts)")]
    engine.dispose()


def test_grade_submit_server_reports_the_409_as_a_usage_error(svc, tmp_path):
    """``grade submit --server``'s client: past the limit it raises a usage error (exit 2) with the
    server's sentence, not a retryable failure."""
    from grader.service.client import ClientError, submit_remote

    path = tmp_path / "mine.py"
    path.write_bytes(BROKEN)
    ann = svc.people["ann"]["token"]
    for _ in range(3):
        assert svc.post("/api/submissions", headers=auth(ann), data={"exercise": "mha"},
                        files={"file": ("a.py", BROKEN)}).status_code == 202
    with pytest.raises(ClientError) as exc:
        submit_remote(str(svc.base_url), ann, "mha", path, transport=svc._transport, timeout_s=5)
    assert exc.value.usage and "409" in str(exc.value) and "no attempts left at mha" in str(exc.value)
