"""Issue 21 items 2, 3, 6 on the real service (SQLite and PostgreSQL): timed sessions on an injected
clock, the attempt timeline, and the released feedback page (its downloaded file self-contained).

The server runs in this process (uvicorn in a thread) so that the test owns its clock: time only
moves when the test advances it (STYLE.md: inject the clock)."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta, timezone
from html.parser import HTMLParser
from pathlib import Path

import pytest

from test_service_pages import _login, browser  # noqa: F401 - the Chromium fixture and login of the pages' tests
from service_helpers import INTERVIEWER_TOKEN, Postgres, auth, free_port, get, post, wait_final

pytestmark = [pytest.mark.service, pytest.mark.slow]
ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "submissions/samples/softmax"
GOOD = (SAMPLES / "correct_logsumexp.py").read_bytes()
AXIS0 = (SAMPLES / "bug_default_axis0.py").read_bytes()
NAIVE = (SAMPLES / "bug_naive_exp.py").read_bytes()
T0 = datetime(2026, 12, 1, 9, 0, 0, tzinfo=timezone.utc)


class Clock:
    """A clock that moves only when told (``advance``)."""

    def __init__(self, now: datetime = T0):
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta) -> None:
        self.now += timedelta(**delta)


class InProcess:
    """``create_app`` on uvicorn in a thread, on 127.0.0.1, with an injected clock."""

    def __init__(self, db_url: str, clock: Clock):
        import uvicorn

        from grader.service.app import Settings, create_app

        self.clock, self.port = clock, free_port()
        app = create_app(Settings(db_url=db_url, interviewer_token=INTERVIEWER_TOKEN, sandbox="process", workers=1,
                                  rate_limit=1000, poll_s=0.2, warm_numpy=0, warm_torch=0, clock=clock))
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the in-process server did not start")
            time.sleep(0.1)
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(30)


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def live(request, tmp_path_factory):
    pg = Postgres() if request.param == "postgres" else None
    url = pg.url if pg else f"sqlite:///{tmp_path_factory.mktemp('timed') / 'service.db'}"
    srv = InProcess(url, Clock())
    try:
        yield srv
    finally:
        srv.stop()
        if pg:
            pg.stop()


def cohort(live, **extra) -> dict:
    body = {"name": "timed round", "exercises": ["softmax"], **extra}
    r = post(f"{live.url}/api/cohorts", headers=auth(INTERVIEWER_TOKEN), json=body)
    assert r.status_code == 201, r.text
    return r.json()


def invite(live, cohort_id: int, name: str) -> dict:
    return post(f"{live.url}/api/cohorts/{cohort_id}/candidates", headers=auth(INTERVIEWER_TOKEN),
                json={"name": name}).json()


def upload(live, token: str, source: bytes):
    return post(f"{live.url}/api/submissions", headers=auth(token), data={"exercise": "softmax"},
                files={"file": ("mine.py", source, "text/x-python")})


def test_timed_session_starts_at_first_visit_and_is_enforced(live):
    c = cohort(live, duration_minutes=90)
    assert c["duration_minutes"] == 90
    ada = invite(live, c["id"], "Ada")
    live.clock.advance(minutes=10)  # invited 10 minutes before her first visit: the clock starts at the visit
    start = live.clock.now
    doc = get(f"{live.url}/api/exercises", headers=auth(ada["token"])).json()
    assert doc["session"]["started_at"] == start.isoformat(timespec="seconds")
    assert doc["session"]["seconds_left"] == 90 * 60 and doc["session"]["expired"] is False
    live.clock.advance(minutes=30)
    page = get(f"{live.url}/candidate", headers=auth(ada["token"]))
    assert page.status_code == 200 and 'data-seconds-left="3600"' in page.text and "1 h 00 min left" in page.text
    r = upload(live, ada["token"], GOOD)
    assert r.status_code == 202
    live.clock.advance(minutes=59, seconds=59)
    assert get(f"{live.url}/api/exercises", headers=auth(ada["token"])).json()["session"]["seconds_left"] == 1
    live.clock.advance(seconds=1)  # exactly 90 minutes after the start: over
    api = get(f"{live.url}/api/exercises", headers=auth(ada["token"]))
    assert api.status_code == 403 and "time is up" in api.json()["detail"] and "90 minutes" in api.json()["detail"]
    polled = get(f"{live.url}/api/submissions/{r.json()['id']}", headers=auth(ada["token"]))
    assert polled.status_code == 200  # an upload made in time can still be polled (grade submit --server)
    late = upload(live, ada["token"], GOOD)
    assert late.status_code == 403 and "time is up" in late.json()["detail"]
    html = get(f"{live.url}/candidate/exercises/softmax", headers=auth(ada["token"]))
    assert html.status_code == 403 and "Your time is up" in html.text and "<h1>403</h1>" in html.text
    # the interviewer's time on task: the attempt 30 minutes in, the upload counted as the first open
    rows = get(f"{live.url}/api/cohorts/{c['id']}/sessions", headers=auth(INTERVIEWER_TOKEN)).json()
    (row,) = rows
    assert row["session"]["expired"] is True and row["session"]["started_at"] == doc["session"]["started_at"]
    task = row["exercises"]["softmax"]
    assert [a["since_start_s"] for a in task["attempts"]] == [1800.0] and task["first_open_s"] == 1800.0
    wait_final(live.url, INTERVIEWER_TOKEN, r.json()["id"])


def test_closing_time_ends_a_timed_session_first_and_opening_time_delays_its_start(live):
    opens = live.clock.now + timedelta(minutes=5)
    c = cohort(live, duration_minutes=60, opens_at=opens.isoformat(), closes_at=(opens + timedelta(minutes=20)).isoformat())
    bo = invite(live, c["id"], "Bo")
    early = get(f"{live.url}/api/exercises", headers=auth(bo["token"])).json()["session"]
    assert early["started_at"] is None  # before the opening time the clock does not start
    live.clock.advance(minutes=5)
    s = get(f"{live.url}/api/exercises", headers=auth(bo["token"])).json()["session"]
    assert s["started_at"] == opens.isoformat(timespec="seconds") and s["seconds_left"] == 20 * 60  # closes first
    live.clock.advance(minutes=20)
    assert upload(live, bo["token"], GOOD).json()["detail"] == "this cohort is closed"


def test_opening_an_exercise_page_is_its_first_open(live):
    c = cohort(live, duration_minutes=45)
    cy = invite(live, c["id"], "Cy")
    get(f"{live.url}/api/exercises", headers=auth(cy["token"]))
    live.clock.advance(minutes=3)
    assert get(f"{live.url}/candidate/exercises/softmax", headers=auth(cy["token"])).status_code == 200
    live.clock.advance(minutes=4)
    get(f"{live.url}/candidate/exercises/softmax", headers=auth(cy["token"]))  # a later open changes nothing
    (row,) = get(f"{live.url}/api/cohorts/{c['id']}/sessions", headers=auth(INTERVIEWER_TOKEN)).json()
    assert row["exercises"]["softmax"]["first_open_s"] == 180.0


@pytest.fixture(scope="module")
def three(live):
    """Three graded attempts of one candidate (wrong default axis, naive exp, correct), a minute apart."""
    c = cohort(live, name="history", duration_minutes=120)
    dee = invite(live, c["id"], "Dee")
    ids = []
    for source in (AXIS0, NAIVE, GOOD):
        live.clock.advance(minutes=1)
        r = upload(live, dee["token"], source)
        assert r.status_code == 202, r.text
        ids.append(r.json()["id"])
        wait_final(live.url, INTERVIEWER_TOKEN, ids[-1])
    return {"cohort": c, "candidate": dee, "ids": ids}


def _verdicts(live, sub_id) -> dict:
    doc = get(f"{live.url}/api/submissions/{sub_id}?view=interviewer", headers=auth(INTERVIEWER_TOKEN)).json()
    return {c["id"]: c["verdict"] for c in doc["scorecard"]["checks"]}


def test_timeline_of_three_attempts_names_the_checks_that_changed(live, three):
    ids = three["ids"]
    doc = get(f"{live.url}/api/submissions/{ids[1]}/history", headers=auth(INTERVIEWER_TOKEN)).json()
    assert [a["submission_id"] for a in doc["attempts"]] == ids
    assert [a["since_start_s"] for a in doc["attempts"]] == [0.0, 60.0, 120.0]  # the first upload started the clock
    verdicts = [_verdicts(live, i) for i in ids]
    for k in (1, 2):  # independently: the checks whose verdict differs between consecutive scorecards
        want = sorted(c for c in verdicts[k] if verdicts[k][c] != verdicts[k - 1].get(c))
        got = sorted(ch["check"] for ch in doc["attempts"][k]["changed"])
        assert got == want and got, (k, got, want)
        assert doc["attempts"][k]["previous_id"] == ids[k - 1]
    assert doc["attempts"][0]["changed"] == [] and doc["attempts"][0]["previous_id"] is None
    assert doc["attempts"][2]["score"] == doc["attempts"][2]["max_score"] == 16
    assert all(v == "passed" for v in verdicts[2].values())
    diff = doc["attempts"][1]["source_diff"]
    assert diff[0] == "--- previous" and any(line.startswith("+") and "exp" in line for line in diff[2:])
    page = get(f"{live.url}/interviewer/submissions/{ids[2]}", headers=auth(INTERVIEWER_TOKEN)).text
    assert page.count('class="attempt"') == 3 and f"/interviewer/diff?a={ids[1]}&amp;b={ids[2]}" in page
    cand = three["candidate"]["token"]
    assert get(f"{live.url}/api/submissions/{ids[1]}/history", headers=auth(cand)).status_code == 403


class _Refs(HTMLParser):
    """Every URL-bearing attribute and every tag of a page."""

    def __init__(self):
        super().__init__()
        self.urls, self.tags = [], set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.urls += [v for k, v in attrs if k in ("href", "src", "action", "srcset", "data", "poster") and v]


def test_feedback_page_only_after_release_and_its_file_is_self_contained(live, three):
    cand = three["candidate"]["token"]
    cid = three["cohort"]["id"]
    for path in ("/api/feedback", "/candidate/feedback", "/candidate/feedback.html"):
        r = get(live.url + path, headers=auth(cand))
        assert r.status_code == 403 and "not been released" in r.text, path
    other = invite(live, cid, "Eve")  # released alone, Dee stays unreleased
    r = post(f"{live.url}/api/cohorts/{cid}/feedback", headers=auth(INTERVIEWER_TOKEN),
             json={"candidate_id": other["id"]})
    assert r.status_code == 200 and r.json()["released_at"] == live.clock.now.isoformat(timespec="seconds")
    assert get(f"{live.url}/api/feedback", headers=auth(cand)).status_code == 403
    assert get(f"{live.url}/api/feedback", headers=auth(other["token"])).status_code == 200
    assert 'id="feedback-link"' in get(f"{live.url}/candidate", headers=auth(other["token"])).text
    assert 'id="feedback-link"' not in get(f"{live.url}/candidate", headers=auth(cand)).text
    assert post(f"{live.url}/api/cohorts/{cid}/feedback", headers=auth(cand), json={}).status_code == 403
    assert post(f"{live.url}/api/cohorts/{cid}/feedback", headers=auth(INTERVIEWER_TOKEN),
                json={"candidate_id": 10**6}).status_code == 404
    assert post(f"{live.url}/api/cohorts/{cid}/feedback", headers=auth(INTERVIEWER_TOKEN), json={}).status_code == 200
    doc = get(f"{live.url}/api/feedback", headers=auth(cand)).json()
    (ex,) = doc["exercises"]
    assert ex["score"] == 16 and all(c["verdict"] == "passed" for c in ex["public"])  # the latest attempt
    assert ex["hidden"] and all(set(h) == {"id", "passed"} for h in ex["hidden"])  # one bit per hidden check
    view = get(f"{live.url}/api/submissions/{three['ids'][2]}", headers=auth(cand)).json()["scorecard"]
    assert [c["id"] for c in ex["public"]] == [c["id"] for c in view["checks"] if c["visibility"] == "public"]
    f = get(f"{live.url}/candidate/feedback.html", headers=auth(cand))
    assert f.status_code == 200 and "attachment" in f.headers["content-disposition"]
    refs = _Refs()
    refs.feed(f.text)
    assert all(u.startswith("#") for u in refs.urls), refs.urls  # in-page anchors only
    assert not refs.tags & {"script", "link", "img", "iframe", "object", "embed", "form"}
    assert "Feedback for Dee" in f.text and 'id="spec-softmax-how-it-is-graded"' in f.text


def test_feedback_names_public_mistakes_and_says_what_to_read(live):
    c = cohort(live, name="mistakes")
    fay = invite(live, c["id"], "Fay")
    r = upload(live, fay["token"], AXIS0)
    wait_final(live.url, INTERVIEWER_TOKEN, r.json()["id"])
    card = get(f"{live.url}/api/submissions/{r.json()['id']}", headers=auth(fay["token"])).json()["scorecard"]
    named = {ch["id"]: ch["details"]["mistake"] for ch in card["checks"]
             if ch["visibility"] == "public" and ch["details"].get("mistake")}
    assert named, "bug_default_axis0 should be named on a public check"
    post(f"{live.url}/api/cohorts/{c['id']}/feedback", headers=auth(INTERVIEWER_TOKEN), json={"candidate_id": fay["id"]})
    (ex,) = get(f"{live.url}/api/feedback", headers=auth(fay["token"])).json()["exercises"]
    public = {ch["id"]: ch for ch in ex["public"]}
    for check, mistake in named.items():
        assert public[check]["mistake"] == mistake and public[check]["diagnosis"]
    failed = [ch for ch in ex["public"] if ch["verdict"] != "passed"]
    assert failed and all(any(x["href"] == "#spec-softmax-how-it-is-graded" for x in ch["read"]) for ch in failed)
    axes = public.get("axes")
    if axes and axes["verdict"] != "passed":
        assert any("every axis" in x["text"] for x in axes["read"])  # the spec's row for the check
    page = get(f"{live.url}/candidate/feedback", headers=auth(fay["token"])).text
    assert 'class="mistake"' in page and "Likely mistake" in page


# -- in headless Chromium ------------------------------------------------------------------------


@pytest.mark.browser
def test_in_chromium_time_left_timeline_and_feedback_release(live, three, browser, tmp_path):
    from selenium.webdriver.common.by import By

    driver = browser
    if True:
        c = cohort(live, name="browser timed", duration_minutes=90)
        gil = invite(live, c["id"], "Gil")
        _login(driver, live.url, gil["token"], "/candidate")
        timer = driver.find_element(By.ID, "time-left")
        assert timer.get_attribute("data-seconds-left") == str(90 * 60) and "1 h 30 min left" in timer.text
        live.clock.advance(minutes=91)
        driver.get(live.url + "/candidate")
        assert "Your time is up" in driver.page_source
        r = upload(live, gil["token"], GOOD)
        assert r.status_code == 403

        _login(driver, live.url, INTERVIEWER_TOKEN, "/interviewer")
        driver.get(f"{live.url}/interviewer/submissions/{three['ids'][2]}")
        attempts = driver.find_elements(By.CSS_SELECTOR, "#timeline li.attempt")
        assert [a.get_attribute("data-submission") for a in attempts] == [str(i) for i in three["ids"]]
        assert attempts[2].get_attribute("data-score") == "16.0"
        assert attempts[1].find_elements(By.CSS_SELECTOR, "li.changed-check")
        # release Gil's feedback with the cohort page's form (its CSRF token), then Gil reads it
        driver.get(f"{live.url}/interviewer/cohorts/{c['id']}")
        assert driver.find_element(By.ID, "duration")
        driver.find_element(By.CSS_SELECTOR, f"button.release-one[data-candidate='{gil['id']}']").click()
        from selenium.webdriver.support.ui import WebDriverWait  # the form's POST lands on a new page
        WebDriverWait(driver, 30).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, f".released[data-candidate='{gil['id']}']"))
        _login(driver, live.url, gil["token"], "/candidate")  # the start page is 403 now (time is up)
        driver.get(live.url + "/candidate/feedback")
        assert "Feedback for Gil" in driver.find_element(By.ID, "feedback").text
        # the downloaded file opens from disk with everything in it
        f = tmp_path / "feedback.html"
        f.write_text(get(f"{live.url}/candidate/feedback.html", headers=auth(gil["token"])).text, encoding="utf-8")
        driver.get(f.as_uri())
        assert "Feedback for Gil" in driver.find_element(By.ID, "feedback").text
        assert driver.find_elements(By.CSS_SELECTOR, "section[id='spec-softmax-contract']")


def test_release_forms_need_the_form_token_of_the_cookie_session(live):
    from grader.service import csrf

    c = cohort(live, name="forms")
    hal = invite(live, c["id"], "Hal")
    jar = {"grader_session": INTERVIEWER_TOKEN}  # the login cookie, no Bearer header: a form request
    good = csrf.form_token(csrf.derive_key(INTERVIEWER_TOKEN), INTERVIEWER_TOKEN)
    other = csrf.form_token(csrf.derive_key(INTERVIEWER_TOKEN), hal["token"])
    for bad in (None, other):
        data = {"candidate_id": str(hal["id"])} | ({} if bad is None else {"csrf_token": bad})
        assert post(f"{live.url}/interviewer/cohorts/{c['id']}/feedback", cookies=jar, data=data).status_code == 403
        headers = {} if bad is None else {"X-CSRF-Token": bad}
        assert post(f"{live.url}/api/cohorts/{c['id']}/feedback", cookies=jar, headers=headers, json={}).status_code == 403
    assert get(f"{live.url}/api/feedback", headers=auth(hal["token"])).status_code == 403  # nothing was released
    r = post(f"{live.url}/interviewer/cohorts/{c['id']}/feedback", cookies=jar,
             data={"candidate_id": str(hal["id"]), "csrf_token": good}, follow_redirects=False)
    assert r.status_code == 303
    assert get(f"{live.url}/api/feedback", headers=auth(hal["token"])).status_code == 200


def test_migration_0005_leaves_existing_cohorts_untimed_and_goes_back_down(tmp_path):
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import select

    from grader.service.db import MIGRATIONS_DIR, Cohort, make_engine, migrate, session_factory

    engine = make_engine(f"sqlite:///{tmp_path / 'old.db'}")
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0002")
        conn.exec_driver_sql("INSERT INTO cohorts (name, exercises, seed, created_at, max_attempts) "
                             "VALUES ('old', '[\"softmax\"]', 1, '2026-01-01 00:00:00', 10)")
    migrate(engine)
    with session_factory(engine)() as s:
        old = s.scalars(select(Cohort)).one()
        assert old.duration_minutes is None and old.feedback_released_at is None
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0002")
        assert "duration_minutes" not in [r[1] for r in conn.exec_driver_sql("PRAGMA table_info(cohorts)")]
        assert "started_at" not in [r[1] for r in conn.exec_driver_sql("PRAGMA table_info(candidates)")]
        tables = [r[0] for r in conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type='table'")]
        assert "exercise_opens" not in tables
    engine.dispose()


def test_timer_ends_at_the_earlier_of_session_and_closing_and_says_time_left():
    from grader.service.db import Candidate, Cohort
    from grader.service.sessions import timer

    cohort = Cohort(duration_minutes=90, closes_at=T0 + timedelta(minutes=60))
    cand = Candidate(started_at=T0)
    t = timer(cohort, cand, T0 + timedelta(minutes=15, seconds=30))
    assert t.ends_at == T0 + timedelta(minutes=60) and t.seconds_left == 44 * 60 + 30 and not t.expired
    assert t.left_text == "44 min 30 s left"
    cohort.closes_at = None
    t = timer(cohort, cand, T0 + timedelta(minutes=20))
    assert t.ends_at == T0 + timedelta(minutes=90) and t.left_text == "1 h 10 min left"
    t = timer(cohort, cand, T0 + timedelta(minutes=90))
    assert t.expired and t.seconds_left == 0 and t.left_text == "time is up"
    assert not timer(Cohort(duration_minutes=None), Candidate(started_at=T0), T0 + timedelta(days=9)).expired
