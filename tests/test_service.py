"""Interview mode through its HTTP API: a live `grade serve` (uvicorn on 127.0.0.1, process sandbox)
on SQLite and on a real PostgreSQL started by the fixture; every route for every kind of caller;
the attacks that hit graders and upload services; the queue across a kill -9."""

from __future__ import annotations

import csv
import io
import json
import re
import threading
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from service_helpers import INTERVIEWER_TOKEN, get, post, LiveServer, Postgres, auth, wait_final

pytestmark = pytest.mark.service

ROOT = Path(__file__).resolve().parent.parent
GOOD = (ROOT / "submissions/samples/softmax/correct_logsumexp.py").read_bytes()
BROKEN = b"def softmax(x, axis=-1:\n"  # a compile error: graded on the host, no sandbox


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def server(request, tmp_path_factory):
    """A live server with one cohort (softmax, mha) and three candidates: a, b, and an XSS name."""
    base = tmp_path_factory.mktemp(f"svc-{request.param}")
    pg = None
    if request.param == "postgres":
        pg = Postgres()
        url = pg.url
    else:
        url = f"sqlite:///{base / 'service.db'}"
    live = LiveServer(url, base / "server.log").start()
    try:
        i = auth(INTERVIEWER_TOKEN)
        cohort = post(f"{live.url}/api/cohorts", headers=i, json={"name": "round 1", "exercises": ["softmax", "mha"],
                                                                        "seed": 4242}).json()
        people = {}
        for name in ("a", "b", '<script>alert("name")</script>=1+1'):
            doc = post(f"{live.url}/api/cohorts/{cohort['id']}/candidates", headers=i, json={"name": name}).json()
            people[name[:1] if len(name) == 1 else "x"] = doc
        live.cohort, live.people = cohort, people
        live.pg = pg
        yield live
    finally:
        live.stop()
        if pg:
            pg.stop()


def upload(live, token, source: bytes = GOOD, exercise: str = "softmax", filename: str = "mine.py", **extra):
    return post(f"{live.url}/api/submissions", headers=auth(token), data={"exercise": exercise, **extra},
                      files={"file": (filename, source, "text/x-python")}, timeout=60)


@pytest.fixture(scope="module")
def graded(server):
    """One graded softmax submission of candidate a (sub id) and one of b."""
    a, b = server.people["a"]["token"], server.people["b"]["token"]
    ra, rb = upload(server, a), upload(server, b, BROKEN)
    assert ra.status_code == 202 and rb.status_code == 202
    wait_final(server.url, a, ra.json()["id"])
    wait_final(server.url, b, rb.json()["id"])
    return {"a": ra.json()["id"], "b": rb.json()["id"]}


def test_serve_refuses_to_start_without_the_interviewer_token(monkeypatch):
    from grader.cli import main

    monkeypatch.delenv("GRADER_INTERVIEWER_TOKEN", raising=False)
    result = CliRunner().invoke(main, ["serve", "--sandbox", "process"])
    assert result.exit_code == 2
    assert "GRADER_INTERVIEWER_TOKEN" in result.output and "Traceback" not in result.output


def test_answers_carry_no_stray_nulls_and_the_cohort_table_counts_every_attempt(server, graded):
    i = auth(INTERVIEWER_TOKEN)
    cohort = post(f"{server.url}/api/cohorts", headers=i, json={"name": "nulls", "exercises": ["softmax"]}).json()
    assert set(cohort) == {"id", "name", "exercises", "max_attempts"}  # no "token": null
    cand = post(f"{server.url}/api/cohorts/{cohort['id']}/candidates", headers=i, json={"name": "Ada"}).json()
    assert set(cand) == {"id", "name", "token"} and cand["token"]      # no "exercises": null
    first = upload(server, cand["token"], BROKEN).json()["id"]
    wait_final(server.url, cand["token"], first)
    second = upload(server, cand["token"]).json()["id"]
    wait_final(server.url, cand["token"], second)
    (table,) = get(f"{server.url}/api/cohorts/{cohort['id']}/summary", headers=i).json()["tables"]
    (row,) = table["rows"]
    assert row["submission_id"] == second and row["attempts"] == 2     # the latest shown, both counted
    page = get(f"{server.url}/interviewer/cohorts/{cohort['id']}", headers=i).text
    assert "latest graded attempt" in page and '<td class="attempts">2</td>' in page


def test_exercise_page_renders_the_statement_and_an_empty_upload_gets_the_form_back(server):
    a = server.people["a"]["token"]
    page = get(f"{server.url}/candidate/exercises/mha", headers=auth(a))
    assert page.status_code == 200
    assert "<h2>Contract</h2>" in page.text and "## Contract" not in page.text  # Markdown rendered
    assert '<code class="language-python"><span style="color' in page.text    # code highlighted
    # An empty file (Bearer auth: an API client's form post, no cookie to forge)
    r = post(f"{server.url}/candidate/submit", headers=auth(a), data={"exercise": "mha", "source": ""},
             follow_redirects=False)
    assert r.status_code == 422 and r.headers["content-type"].startswith("text/html")
    assert 'id="upload-error"' in r.text and "the file is empty" in r.text and 'id="upload"' in r.text


def test_contract_upload_poll_candidate_and_interviewer_views(server, graded):
    a = server.people["a"]["token"]
    assert get(server.url + "/healthz").status_code == 200
    doc = get(f"{server.url}/api/submissions/{graded['a']}", headers=auth(a)).json()
    assert doc["id"] == graded["a"] and doc["status"] == "graded"
    card = doc["scorecard"]
    assert card["view"] == "candidate" and card["seed"] is None
    assert card["score"] == card["max_score"] == 16
    hidden = [c for c in card["checks"] if c["visibility"] == "hidden"]
    assert hidden and all(c["details"] == {} for c in hidden)
    full = get(f"{server.url}/api/submissions/{graded['a']}?view=interviewer", headers=auth(INTERVIEWER_TOKEN)).json()
    assert full["scorecard"]["view"] == "interviewer" and full["scorecard"]["seed"] == 4242  # the cohort's seed
    assert any(c["details"] for c in full["scorecard"]["checks"] if c["visibility"] == "hidden")
    assert full["scorecard"]["submission"]["path"] == "submission.py"
    broken = get(f"{server.url}/api/submissions/{graded['b']}", headers=auth(server.people["b"]["token"])).json()
    assert broken["scorecard"]["status"] == "compile_error" and broken["scorecard"]["score"] == 0


def _routes(server, graded):
    cid, sa = server.cohort["id"], graded["a"]
    return [("GET", "/api/cohorts"), ("GET", f"/api/cohorts/{cid}/summary"), ("GET", f"/api/cohorts/{cid}/export/csv"),
            ("POST", f"/api/cohorts/{cid}/candidates"), ("POST", "/api/cohorts"),
            ("GET", f"/api/submissions/{sa}"), ("GET", f"/api/submissions/{sa}?view=interviewer"),
            ("GET", f"/api/submissions/{sa}/source"), ("GET", "/api/exercises"), ("POST", "/api/submissions"),
            ("GET", "/candidate"), ("GET", "/candidate/exercises/softmax"), ("GET", f"/candidate/submissions/{sa}"),
            ("GET", "/interviewer"), ("GET", f"/interviewer/cohorts/{cid}"), ("GET", f"/interviewer/cohorts/{cid}/report"),
            ("GET", f"/interviewer/submissions/{sa}"), ("GET", f"/interviewer/diff?a={sa}&b={sa}")]


#: expected status per route for: no token, the owner (candidate a), another candidate (b), the interviewer
EXPECTED = {
    "/api/cohorts": (401, 403, 403, 200), "summary": (401, 403, 403, 200), "export/csv": (401, 403, 403, 200),
    "candidates": (401, 403, 403, 201), "POST /api/cohorts": (401, 403, 403, 201),
    "submission": (401, 200, 404, 200), "submission?view=interviewer": (401, 403, 403, 200),
    "source": (401, 200, 404, 200), "/api/exercises": (401, 200, 200, 403), "POST /api/submissions": (401, 202, 202, 403),
    "/candidate": (401, 200, 200, 403), "/candidate/exercises/softmax": (401, 200, 200, 403),
    "/candidate/submissions": (401, 200, 404, 403), "/interviewer": (401, 403, 403, 200),
    "/interviewer/cohorts": (401, 403, 403, 200), "report": (401, 403, 403, 200),
    "/interviewer/submissions": (401, 403, 403, 200), "diff": (401, 403, 403, 200),
}


def _key(method, path):
    if method == "POST" and path in ("/api/cohorts", "/api/submissions"):
        return f"POST {path}"
    for k in ("summary", "export/csv", "candidates", "source", "report", "diff"):
        if k in path:
            return k
    if path.startswith("/api/submissions/"):
        return "submission?view=interviewer" if "view=" in path else "submission"
    if path.startswith("/candidate/submissions"):
        return "/candidate/submissions"
    if path.startswith("/interviewer/cohorts"):
        return "/interviewer/cohorts"
    if path.startswith("/interviewer/submissions"):
        return "/interviewer/submissions"
    return path


def test_every_route_for_every_caller(server, graded):
    callers = [None, server.people["a"]["token"], server.people["b"]["token"], INTERVIEWER_TOKEN]
    for method, path in _routes(server, graded):
        for who, want in zip(callers, EXPECTED[_key(method, path)]):
            if method == "GET":
                r = get(server.url + path, headers=auth(who), timeout=60)
            elif path == "/api/submissions":
                r = upload(server, who, BROKEN)
            else:
                r = post(server.url + path, headers=auth(who), json={"name": "z", "exercises": ["softmax"]})
            assert r.status_code == want, (method, path, who and who[:6], r.status_code, r.text[:200])


@pytest.mark.parametrize("query,headers", [
    ("?view=Interviewer", {}), ("?VIEW=interviewer", {}), ("?view=candidate&view=interviewer", {}),
    ("?view=interviewer&view=candidate", {}), ("?view=%20INTERVIEWER%20", {}), ("?view=interviewer%00", {}),
])
def test_interviewer_view_in_other_spellings_is_refused(server, graded, query, headers):
    r = get(f"{server.url}/api/submissions/{graded['a']}{query}", headers={**auth(server.people["a"]["token"]), **headers})
    assert r.status_code == 403


def test_interviewer_view_asked_by_header_gives_the_candidate_view(server, graded):
    for header in ({"X-View": "interviewer"}, {"View": "interviewer"}, {"X-Grader-View": "interviewer"}):
        doc = get(f"{server.url}/api/submissions/{graded['a']}",
                        headers={**auth(server.people["a"]["token"]), **header}).json()
        assert doc["scorecard"]["view"] == "candidate" and doc["scorecard"]["seed"] is None


def test_ids_of_others_neighbours_zero_negative_huge_all_give_the_same_404(server, graded):
    b = server.people["b"]["token"]
    answers = set()
    for sub_id in (graded["a"], graded["a"] + 1000, 0, -1, -graded["a"], 2**63, 10**40, "1e3", "01", "%2e%2e", "abc"):
        for prefix in ("/api/submissions/", "/candidate/submissions/"):
            r = get(f"{server.url}{prefix}{sub_id}", headers=auth(b))
            answers.add((prefix, r.status_code, r.text))
    api = {a for a in answers if a[0] == "/api/submissions/"}
    assert len(api) == 1 and next(iter(api))[1] == 404
    pages = {a for a in answers if a[0] == "/candidate/submissions/"}
    assert len(pages) == 1 and next(iter(pages))[1] == 404


def test_extra_form_fields_are_ignored(server):
    b = server.people["b"]["token"]
    r = upload(server, b, BROKEN, score="99", status="graded", owner="1", candidate_id="1", max_score="1", seed="1")
    assert r.status_code == 202 and r.json()["status"] == "queued"
    doc = wait_final(server.url, b, r.json()["id"])
    assert doc["scorecard"]["score"] == 0 and doc["scorecard"]["status"] == "compile_error"
    full = get(f"{server.url}/api/submissions/{r.json()['id']}?view=interviewer", headers=auth(INTERVIEWER_TOKEN)).json()
    assert full["candidate_id"] == server.people["b"]["id"] and full["scorecard"]["seed"] == 4242


def test_exercise_must_belong_to_the_cohort_and_size_cap_holds(server):
    a = server.people["a"]["token"]
    assert upload(server, a, exercise="gqa").status_code == 422
    assert upload(server, a, exercise="../../etc/passwd").status_code == 422
    assert upload(server, a, source=b"x = 1\n" + b"#" * (256 * 1024)).status_code == 413


def test_multipart_limits_hold(server):
    a = server.people["a"]["token"]
    # Two files in one form: past max_files=1.
    r = post(f"{server.url}/api/submissions", headers=auth(a), data={"exercise": "softmax"},
                   files=[("file", ("a.py", b"x=1", "text/plain")), ("file2", ("b.py", b"x=2", "text/plain"))])
    assert r.status_code == 400
    # Too many fields.
    r = post(f"{server.url}/api/submissions", headers=auth(a), data={f"f{i}": "x" for i in range(40)} | {"exercise": "softmax"},
                   files={"file": ("a.py", b"x=1", "text/plain")})
    assert r.status_code == 400
    # A body past the cap, declared or streamed without a length.
    big = b"0" * (2 * 1024 * 1024)
    assert post(f"{server.url}/api/submissions", headers={**auth(a), "content-type": "multipart/form-data; boundary=x"},
                      content=big).status_code == 413

    def chunks():  # a well-formed part whose file never ends, streamed without Content-Length
        yield (b'--x\r\nContent-Disposition: form-data; name="file"; filename="a.py"\r\n'
               b"Content-Type: text/plain\r\n\r\n")
        for _ in range(64):
            yield b"0" * 65536

    r = post(f"{server.url}/api/submissions", headers={**auth(a), "content-type": "multipart/form-data; boundary=x"},
                   content=chunks())
    assert r.status_code == 413


def test_multipart_and_starlette_versions_are_past_their_cves():
    from importlib.metadata import version

    def v(name):
        return tuple(int(p) for p in re.findall(r"\d+", version(name))[:3])

    assert v("python-multipart") >= (0, 0, 18)  # CVE-2024-53981 (fixed in 0.0.18), CVE-2024-24762 (0.0.7)
    assert v("starlette") >= (0, 47, 2)  # CVE-2025-54121 (0.47.2), CVE-2024-47874 (0.40.0)


def test_upload_names_are_never_used_as_paths(server, tmp_path):
    a = server.people["a"]["token"]
    marker = f"pwned-{time.time_ns()}"
    names = [f"../../../../../tmp/{marker}.py", f"/tmp/{marker}-abs.py", f"..\\..\\{marker}.py"]
    ids = [upload(server, a, BROKEN, filename=n).json()["id"] for n in names]
    for sub_id in ids:
        full = get(f"{server.url}/api/submissions/{wait_final(server.url, a, sub_id)['id']}?view=interviewer",
                         headers=auth(INTERVIEWER_TOKEN)).json()
        assert full["scorecard"]["submission"]["path"] == "submission.py"
    assert not list(Path("/tmp").glob(f"{marker}*")) and not list(server.log.parent.rglob(f"{marker}*"))


def test_exports_are_downloads_and_neutralise_spreadsheet_formulas(server, graded):
    x = server.people["x"]["token"]
    wait_final(server.url, x, upload(server, x).json()["id"])
    r = get(f"{server.url}/api/cohorts/{server.cohort['id']}/export/csv", headers=auth(INTERVIEWER_TOKEN))
    assert r.status_code == 200 and r.headers["content-disposition"].startswith("attachment;")
    rows = list(csv.DictReader(io.StringIO(r.text)))
    cells = [v for row in rows for v in row.values()]
    assert all(not c.startswith(("=", "+", "@", "-")) for c in cells)
    assert any(c.startswith("'=") or c.startswith("'<") or c.startswith("<script>") for c in cells)
    # the scorecard column says where each card is read (it was empty)
    assert rows and all(re.fullmatch(r"/api/submissions/[1-9][0-9]*", row["scorecard"]) for row in rows)
    card = get(server.url + rows[0]["scorecard"] + "?view=interviewer", headers=auth(INTERVIEWER_TOKEN))
    assert card.status_code == 200 and card.json()["scorecard"]["status"] == rows[0]["status"]
    for fmt in ("junit", "json", "gradescope"):
        r = get(f"{server.url}/api/cohorts/{server.cohort['id']}/export/{fmt}", headers=auth(INTERVIEWER_TOKEN))
        assert r.status_code == 200 and "attachment" in r.headers["content-disposition"]


def test_stored_xss_is_escaped_on_every_page(server, graded):
    x = server.people["x"]["token"]
    payload = b'# <img src=x onerror=alert("src")>\nprint("<script>alert(\'out\')</script>")\n' + GOOD
    sub = upload(server, x, payload, filename='<b onmouseover="alert(1)">f</b>.py').json()["id"]
    wait_final(server.url, x, sub)
    raw = ['<script>alert("name")</script>', "<script>alert('out')</script>", '<img src=x onerror', '<b onmouseover']
    cid = server.cohort["id"]
    pages = [(x, "/candidate"), (x, "/candidate/exercises/softmax"), (x, f"/candidate/submissions/{sub}"),
             (INTERVIEWER_TOKEN, f"/interviewer/cohorts/{cid}"), (INTERVIEWER_TOKEN, f"/interviewer/submissions/{sub}"),
             (INTERVIEWER_TOKEN, f"/interviewer/cohorts/{cid}/report"), (INTERVIEWER_TOKEN, f"/interviewer/diff?a={sub}&b={sub}")]
    for token, path in pages:
        r = get(server.url + path, headers=auth(token), timeout=60)
        assert r.status_code == 200, path
        for bad in raw:
            assert bad not in r.text, (path, bad)
    page = get(f"{server.url}/interviewer/submissions/{sub}", headers=auth(INTERVIEWER_TOKEN)).text
    assert "&lt;img src=x onerror" in page and "&lt;script&gt;alert(" in page


def test_sandbox_environment_holds_no_secret_and_cannot_reach_the_service(server):
    a = server.people["a"]["token"]
    spy = f"""
import os, socket
print("ENV", sorted(os.environ.items()))
try:
    socket.create_connection(("127.0.0.1", {server.port}), timeout=2).close()
    print("REACHED-SERVICE")
except OSError as exc:
    print("NO-ROUTE", exc)
""".encode() + GOOD
    sub = upload(server, a, spy).json()["id"]
    wait_final(server.url, a, sub)
    full = get(f"{server.url}/api/submissions/{sub}?view=interviewer", headers=auth(INTERVIEWER_TOKEN)).json()
    out = full["scorecard"]["output"]["text"]
    assert "ENV" in out
    for secret in [INTERVIEWER_TOKEN] + [p["token"] for p in server.people.values()]:
        assert secret not in out
    assert "GRADER_INTERVIEWER_TOKEN" not in out and "postgres" not in out.lower()
    if "own namespace" in full["scorecard"]["sandbox"]["isolation"].get("network", ""):
        assert "REACHED-SERVICE" not in out
    else:  # the kernel here refused unshare(CLONE_NEWNET): only docker (--network none) isolates the network
        pytest.skip("the process sandbox shares the host network on this machine")


def test_tokens_never_in_urls_or_logs(server, graded):
    html = get(f"{server.url}/interviewer/cohorts/{server.cohort['id']}", headers=auth(INTERVIEWER_TOKEN)).text
    tokens = [INTERVIEWER_TOKEN] + [p["token"] for p in server.people.values()]
    hrefs = re.findall(r'(?:href|src|action)="([^"]*)"', html)
    assert hrefs and not any(t in h for h in hrefs for t in tokens)
    # login puts the token in a cookie (HttpOnly, SameSite=Strict), never in the redirect
    with httpx.Client(base_url=server.url, timeout=60) as browser:  # the login page's form, with its form token
        form_token = re.search(r'name="csrf_token" value="([0-9a-f]+)"', browser.get("/").text).group(1)
        r = browser.post("/login", data={"token": server.people["a"]["token"], "csrf_token": form_token})
    assert r.status_code == 303 and server.people["a"]["token"] not in r.headers["location"]
    cookie = r.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    log = server.log.read_text(errors="replace")
    assert "/api/submissions" in log  # the access log is on
    assert not any(t in log for t in tokens)


def test_token_comparison_is_constant_time(monkeypatch):
    """Both comparisons go through hmac.compare_digest (constant time in the inputs' length)."""
    from grader.service import deps

    calls = []
    real = deps.hmac.compare_digest
    monkeypatch.setattr(deps.hmac, "compare_digest", lambda x, y: calls.append((x, y)) or real(x, y))

    class FakeSession:
        def scalars(self, _q):
            return type("R", (), {"first": lambda self: None})()

        def rollback(self):
            pass

    assert deps.identify("wrong-token", INTERVIEWER_TOKEN, FakeSession()) is None
    assert deps.identify(INTERVIEWER_TOKEN, INTERVIEWER_TOKEN, FakeSession()).is_interviewer
    assert len(calls) == 2 and calls[0] == (b"wrong-token", INTERVIEWER_TOKEN.encode())


def test_rate_limit_per_token(tmp_path):
    from grader.service.app import RateLimiter

    now = [0.0]
    limiter = RateLimiter(3, 60.0, clock=lambda: now[0])
    assert [limiter.allow("a") for _ in range(4)] == [True, True, True, False]
    assert limiter.allow("b")  # per token
    now[0] = 60.5
    assert limiter.allow("a")


def test_client_cli_prints_the_table_with_local_exit_codes(server, tmp_path, monkeypatch):
    from grader.cli import main

    monkeypatch.chdir(tmp_path)
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_bytes(GOOD)
    bad.write_bytes(BROKEN)
    token = server.people["a"]["token"]
    r = CliRunner().invoke(main, ["submit", "softmax", str(good), "--server", server.url, "--token", token])
    assert r.exit_code == 0, r.output
    assert "16 / 16" in r.output and "values_1d" in r.output and "graded" in r.output
    # its own file, beside (never over) a practice run's scorecards/softmax-good.json
    assert json.loads((tmp_path / "scorecards/softmax-good.server.json").read_text())["view"] == "candidate"
    assert not (tmp_path / "scorecards/softmax-good.json").exists()
    r = CliRunner().invoke(main, ["submit", "softmax", str(bad), "--server", server.url], env={"GRADER_TOKEN": token})
    assert r.exit_code == 1
    r = CliRunner().invoke(main, ["submit", "softmax", str(good), "--server", server.url, "--token", "nope"])
    assert r.exit_code == 2 and "401" in r.output
    r = CliRunner().invoke(main, ["submit", "softmax", str(good), "--server", "http://127.0.0.1:9", "--token", token])
    assert r.exit_code == 3
