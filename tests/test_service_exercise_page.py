"""The candidate's exercise page (issue 23 item 2), in process (FastAPI's TestClient; no workers, so
uploads stay queued): the track it shows, that track's statement and stub in the paste box and as a
download, the pages' one static script under ``script-src 'self'``, an unchanged stub refused like
an empty file, and a pending attempt's page that polls the candidate's JSON endpoint (a refresh
without JavaScript). The same page in headless Chromium: tests/test_service_pages.py."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select, update

from grader.service.app import Settings, create_app
from grader.service.db import Submission
from grader.service.statement import render_statement
from service_helpers import INTERVIEWER_TOKEN, auth

pytestmark = pytest.mark.service

ROOT = Path(__file__).resolve().parent.parent
EX = ROOT / "exercises"
TOKEN_RE = re.compile(r'name="csrf_token" value="([0-9a-f]*)"')
BOX_RE = re.compile(r'<textarea name="source" id="source"[^>]*>\n(.*?)</textarea>', re.S)
STUB_RE = re.compile(r'<pre class="source" id="stub">(.*?)</pre>', re.S)


@pytest.fixture
def svc(tmp_path):
    """A service app (no workers) with a cohort (softmax, mha) and a candidate ann (a Bearer token)."""
    app = create_app(Settings(db_url=f"sqlite:///{tmp_path / 'svc.db'}", interviewer_token=INTERVIEWER_TOKEN,
                              rate_limit=1000), start_workers=False)
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        i = auth(INTERVIEWER_TOKEN)
        cohort = client.post("/api/cohorts", headers=i, json={"name": "r", "exercises": ["softmax", "mha"]}).json()
        client.ann = client.post(f"/api/cohorts/{cohort['id']}/candidates", headers=i, json={"name": "ann"}).json()
        client.app_ = app
        yield client


def stored(client) -> int:
    with client.app_.state.sessions() as s:
        return s.scalar(select(func.count()).select_from(Submission))


def box(page: str) -> str:
    """The paste box's text as the browser holds it (the parser drops the newline after the tag)."""
    return html.unescape(BOX_RE.search(page).group(1))


@pytest.mark.parametrize("exercise,track,label,spec,stub,other", [
    ("softmax", "", "NumPy", "spec.md", "stub.py", "torch"),
    ("softmax", "torch", "PyTorch", "spec_torch.md", "stub_torch.py", "numpy"),
    ("mha", "", "PyTorch", "spec.md", "stub.py", "numpy"),
    ("mha", "numpy", "NumPy", "spec.md", "stub_numpy.py", "torch"),
])
def test_the_page_names_its_track_and_shows_that_tracks_statement_and_stub(svc, exercise, track, label, spec,
                                                                           stub, other):
    a = auth(svc.ann["token"])
    page = svc.get(f"/candidate/exercises/{exercise}" + (f"?track={track}" if track else ""), headers=a)
    assert page.status_code == 200
    assert re.search(r'<b id="track-name">(\w+)</b>', page.text).group(1) == label
    stub_text = (EX / exercise / stub).read_text(encoding="utf-8")
    assert box(page.text) == stub_text                                   # the paste box starts as the stub
    assert html.unescape(STUB_RE.search(page.text).group(1)) == stub_text
    assert str(render_statement((EX / exercise / spec).read_text(encoding="utf-8"))) in page.text
    # a track without a statement of its own says so, as `grade show --track` does
    assert ('id="track-note"' in page.text) == (exercise == "mha" and track == "numpy")
    if spec == "spec_torch.md":  # not the other track's statement
        assert str(render_statement((EX / exercise / "spec.md").read_text(encoding="utf-8"))) not in page.text
    links = re.findall(r'<a href="([^"]+)" class="other-track"', page.text)
    assert links == [f"/candidate/exercises/{exercise}?track={other}"]
    assert svc.get(links[0], headers=a).status_code == 200
    download = re.search(r'<a href="([^"]+)" id="stub-download"', page.text).group(1)
    got = svc.get(html.unescape(download), headers=a)
    assert got.status_code == 200 and got.content == (EX / exercise / stub).read_bytes()


def test_my_exercises_links_each_track_of_each_exercise(svc):
    home = svc.get("/candidate", headers=auth(svc.ann["token"])).text
    links = re.findall(r'<a href="([^"]+)" class="track-link" data-track="(\w+)">(\w+)</a>', home)
    assert links == [("/candidate/exercises/softmax", "numpy", "NumPy"),
                     ("/candidate/exercises/softmax?track=torch", "torch", "PyTorch"),
                     ("/candidate/exercises/mha", "torch", "PyTorch"),
                     ("/candidate/exercises/mha?track=numpy", "numpy", "NumPy")]


def test_the_stub_download_is_an_attachment_for_the_cohorts_candidates_only(svc):
    a = auth(svc.ann["token"])
    r = svc.get("/candidate/exercises/mha/stub.py?track=numpy", headers=a)
    assert r.status_code == 200 and r.content == (EX / "mha/stub_numpy.py").read_bytes()
    assert r.headers["content-disposition"] == 'attachment; filename="mha.py"'
    assert r.headers["content-type"].startswith("text/x-python") and r.headers["x-content-type-options"] == "nosniff"
    for path in ("/candidate/exercises/gqa/stub.py",                # an exercise outside the cohort
                 "/candidate/exercises/nope/stub.py",               # no such exercise
                 "/candidate/exercises/mha/stub.py?track=jax",      # no such track
                 "/candidate/exercises/mha?track=jax", "/candidate/exercises/gqa"):
        assert svc.get(path, headers=a).status_code == 404, path
    assert svc.get("/candidate/exercises/mha/stub.py").status_code == 401
    assert svc.get("/candidate/exercises/mha/stub.py", headers=auth(INTERVIEWER_TOKEN)).status_code == 403


def test_pages_run_only_the_services_own_static_script(svc):
    a = auth(svc.ann["token"])
    r = svc.get("/candidate/exercises/softmax", headers=a)
    csp = dict(d.strip().split(" ", 1) for d in r.headers["content-security-policy"].split(";"))
    assert csp == {"default-src": "'self'", "img-src": "'self' data:", "style-src": "'self' 'unsafe-inline'",
                   "script-src": "'self'", "frame-ancestors": "'none'", "form-action": "'self'"}
    sub = svc.post("/api/submissions", headers=a, data={"exercise": "softmax"},
                   files={"file": ("a.py", b"def softmax(x, axis=-1):\n    return x\n")}).json()["id"]
    for path in ("/", "/candidate", "/candidate/exercises/softmax", f"/candidate/submissions/{sub}"):
        page = svc.get(path, headers=a if path != "/" else {}).text
        scripts = re.findall(r"<script\b[^>]*>", page)
        assert all(s == '<script src="/static/exercise.js" defer>' for s in scripts), (path, scripts)
        assert not re.search(r"<[a-z]+\b[^>]*\son[a-z]+=", page), path  # no inline event handlers
    js = svc.get("/static/exercise.js")
    assert js.status_code == 200 and js.headers["content-type"].startswith("text/javascript")
    assert js.headers["x-content-type-options"] == "nosniff"
    assert "eval(" not in js.text and "Function(" not in js.text and "innerHTML" not in js.text
    assert svc.get("/static/%2e%2e/app.py").status_code == 404  # nothing but the static folder


def test_an_unchanged_stub_is_refused_like_an_empty_file_and_costs_no_attempt(svc):
    a = auth(svc.ann["token"])
    stub = (EX / "mha/stub_numpy.py").read_text(encoding="utf-8")
    # as a browser sends the pre-filled box: CRLF line ends, a trailing blank line
    r = svc.post("/candidate/submit", headers=a, data={"exercise": "mha", "source": stub.replace("\n", "\r\n") + "\r\n"},
                 follow_redirects=False)
    assert r.status_code == 422 and r.headers["content-type"].startswith("text/html")
    assert re.search(r'id="upload-error"[^>]*>Not submitted: the file is the starting file, unchanged', r.text)
    assert 'id="upload"' in r.text and '<b id="track-name">NumPy</b>' in r.text  # the track it was written for
    # the other track's stub, with trailing blanks, by the API: refused too
    other = (EX / "mha/stub.py").read_bytes().replace(b"\n", b"  \n")
    api = svc.post("/api/submissions", headers=a, data={"exercise": "mha"}, files={"file": ("mha.py", other)})
    assert api.status_code == 422 and "starting file, unchanged" in api.json()["detail"]
    assert stored(svc) == 0
    assert svc.get("/api/exercises", headers=a).json()["attempts"]["mha"]["used"] == 0
    # one changed line is a submission, and a refused paste comes back in the box as it was sent
    changed = stub.replace("raise NotImplementedError", "return None", 1)
    assert changed != stub
    ok = svc.post("/candidate/submit", headers=a, data={"exercise": "mha", "source": changed}, follow_redirects=False)
    assert ok.status_code == 303 and stored(svc) == 1
    empty = svc.post("/candidate/submit", headers=a, data={"exercise": "mha", "source": "  \n"})
    assert empty.status_code == 422 and "the file is empty" in empty.text
    assert box(empty.text) == (EX / "mha/stub.py").read_text(encoding="utf-8")   # nothing sent: the stub again


def test_a_pending_attempt_polls_its_json_and_refreshes_without_javascript(svc):
    a = auth(svc.ann["token"])
    # log in through the form: the page's script polls with the login cookie, not a Bearer token
    svc.cookies.clear()
    login = svc.post("/login", data={"token": svc.ann["token"],
                                     "csrf_token": TOKEN_RE.search(svc.get("/").text).group(1)}, follow_redirects=False)
    assert login.status_code == 303
    form = TOKEN_RE.search(svc.get("/candidate/exercises/softmax").text).group(1)
    r = svc.post("/candidate/submit", data={"exercise": "softmax", "source": "def softmax(x, axis=-1):\n    return x\n",
                                            "csrf_token": form}, follow_redirects=False)
    assert r.status_code == 303
    page = svc.get(r.headers["location"]).text
    sub = int(r.headers["location"].rsplit("/", 1)[1])
    assert f'<div id="result" data-status="queued" data-poll="/api/submissions/{sub}">' in page
    assert '<noscript><meta http-equiv="refresh" content="2"></noscript>' in page
    doc = svc.get(f"/api/submissions/{sub}").json()  # what the script reads: the cookie session's own view
    assert doc["status"] == "queued" and doc["scorecard"] is None
    with svc.app_.state.sessions() as s:
        s.execute(update(Submission).where(Submission.id == sub).values(status="infrastructure_error"))
        s.commit()
    done = svc.get(f"/candidate/submissions/{sub}").text
    assert '<div id="result" data-status="infrastructure_error">' in done
    assert "data-poll" not in done and "http-equiv" not in done
    svc.cookies.clear()
    assert svc.get(f"/api/submissions/{sub}", headers=a).json()["status"] == "infrastructure_error"


def test_the_exercise_page_shows_the_latest_attempt_and_updates_it_in_place(svc):
    """The result on the page the candidate works from (issue 23 item 2): the latest attempt's block
    polls while queued, and, unlike the submission page, never reloads itself without JavaScript (a
    reload would lose the paste box); once the attempt is done the block stops polling."""
    a = auth(svc.ann["token"])
    assert 'id="result"' not in svc.get("/candidate/exercises/softmax", headers=a).text  # no attempt yet
    first = svc.post("/api/submissions", headers=a, files={"file": ("one.py", b"def softmax(x, axis=-1):\n    return x\n")},
                     data={"exercise": "softmax"}).json()["id"]
    second = svc.post("/api/submissions", headers=a, files={"file": ("two.py", b"def softmax(x, axis=-1):\n    return 2 * x\n")},
                      data={"exercise": "softmax"}).json()["id"]
    page = svc.get("/candidate/exercises/softmax", headers=a).text
    assert f'<div id="result" data-status="queued" data-poll="/api/submissions/{second}">' in page
    assert f'href="/candidate/submissions/{second}" id="latest-link"' in page and "two.py" in page
    assert f'data-poll="/api/submissions/{first}"' not in page      # only the latest
    assert "http-equiv" not in page
    assert 'id="result"' not in svc.get("/candidate/exercises/mha", headers=a).text  # another exercise's page
    with svc.app_.state.sessions() as s:
        s.execute(update(Submission).where(Submission.id == second).values(status="infrastructure_error"))
        s.commit()
    done = svc.get("/candidate/exercises/softmax", headers=a).text
    assert '<div id="result" data-status="infrastructure_error">' in done and "data-poll" not in done
    assert "not charged to you" in done
