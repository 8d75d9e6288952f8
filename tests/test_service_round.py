"""A hiring round's tools on the live service (issue 21): a notebook upload, and a regrade after a fix.

The round is graded by a server whose exercises are a temporary copy ($GRADER_HOME) with a grader
bug: softmax's API rules wrongly forbid ``numpy.max`` (softmax's current version), so correct files
score 0. The fix (``forbidden_names = []``, the next patch version) is deployed by restarting the server on the same
database; the interviewer regrades the cohort, reads the change table, and chooses which
scorecards stand. Both scorecards are kept. SQLite and PostgreSQL."""

from __future__ import annotations

import json
import os
import shutil
import time
import tomllib
from pathlib import Path

import nbformat
import pytest

from service_helpers import INTERVIEWER_TOKEN, LiveServer, Postgres, auth, get, post, wait_final

pytestmark = pytest.mark.service

ROOT = Path(__file__).resolve().parent.parent
GOOD = (ROOT / "submissions/samples/softmax/correct_logsumexp.py").read_bytes()
BUGGY_RULE = 'forbidden_names = ["numpy.max"]'
VERSION = tomllib.loads((ROOT / "exercises/softmax/exercise.toml").read_text())["version"]  # the buggy one
FIXED = ".".join(VERSION.split(".")[:-1] + [str(int(VERSION.split(".")[-1]) + 1)])  # the fix's patch bump


def _notebook() -> bytes:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# my softmax"),
                nbformat.v4.new_code_cell("!pip install numpy\nimport numpy as np"),
                nbformat.v4.new_code_cell("def softmax(x, axis=-1):\n"
                                          "    m = np.max(x, axis=axis, keepdims=True)\n"
                                          "    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)\n"
                                          "    with np.errstate(over='ignore'):\n"
                                          "        e = np.exp(x - m)\n"
                                          "    s = e.sum(axis=axis, keepdims=True)\n"
                                          "    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)\n"
                                          "%timeit softmax(np.ones(4))")]
    return nbformat.writes(nb).encode("utf-8")


def _home(base: Path) -> Path:
    """A copy of the exercises and references with the grader bug in softmax's exercise.toml."""
    home = base / "home"
    shutil.copytree(ROOT / "exercises", home / "exercises")
    shutil.copytree(ROOT / "reference", home / "reference")
    toml = home / "exercises" / "softmax" / "exercise.toml"
    text = toml.read_text()
    assert text.count("forbidden_names = []") >= 1
    toml.write_text(text.replace("forbidden_names = []", BUGGY_RULE, 1))
    return home


def _fix(home: Path) -> None:
    toml = home / "exercises" / "softmax" / "exercise.toml"
    toml.write_text(toml.read_text().replace(BUGGY_RULE, "forbidden_names = []").replace(
        f'version = "{VERSION}"', f'version = "{FIXED}"', 1))


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def round_(request, tmp_path_factory):
    base = tmp_path_factory.mktemp(f"round-{request.param}")
    home = _home(base)
    pg = Postgres() if request.param == "postgres" else None
    url = pg.url if pg else f"sqlite:///{base / 'service.db'}"
    saved = os.environ.get("GRADER_HOME")
    os.environ["GRADER_HOME"] = str(home)
    live = None
    try:
        live = LiveServer(url, base / "server.log").start()
        i = auth(INTERVIEWER_TOKEN)
        cohort = post(f"{live.url}/api/cohorts", headers=i, json={"name": "round", "exercises": ["softmax"],
                                                                  "seed": 77}).json()
        a, b = (post(f"{live.url}/api/cohorts/{cohort['id']}/candidates", headers=i, json={"name": n}).json()
                for n in ("ann", "ben"))
        subs = {}
        for key, token, data, name in (("py", a["token"], GOOD, "mine.py"), ("bad", b["token"], b'{"cells": [', "broken.ipynb"),
                                       ("nb", b["token"], _notebook(), "work.ipynb")):  # ben's latest: the notebook
            r = post(f"{live.url}/api/submissions", headers=auth(token), data={"exercise": "softmax"},
                     files={"file": (name, data, "application/octet-stream")})
            assert r.status_code == 202, r.text
            subs[key] = r.json()["id"]
        for key, token in (("py", a["token"]), ("nb", b["token"]), ("bad", b["token"])):
            assert wait_final(live.url, token, subs[key])["status"] == "graded"
        state = {"live": live, "home": home, "url": url, "base": base, "cohort": cohort["id"], "a": a, "b": b,
                 "subs": subs}
        yield state
        live = state["live"]  # a test restarts the server (a deployed fix): stop the one running now
    finally:
        if live:
            live.stop()
        if saved is None:
            os.environ.pop("GRADER_HOME", None)
        else:
            os.environ["GRADER_HOME"] = saved
        if pg:
            pg.stop()


def _card(live, sub_id, token=INTERVIEWER_TOKEN, view="interviewer"):
    return get(f"{live.url}/api/submissions/{sub_id}?view={view}" if view == "interviewer"
               else f"{live.url}/api/submissions/{sub_id}", headers=auth(token)).json()["scorecard"]


def test_a_notebook_upload_is_graded_as_its_code_cells(round_):
    live, subs = round_["live"], round_["subs"]
    card = _card(live, subs["nb"])
    assert card["submission"]["path"] == "submission.ipynb"
    assert [r["text"] for r in card["submission"]["notebook"]["removed"]] == [
        "!pip install numpy", "%timeit softmax(np.ones(4))"]
    # the (buggy) API rule points at the notebook's cell and line
    assert card["status"] == "graded" and {c["verdict"] for c in card["checks"]} == {"forbidden"}
    assert "at line 5 [cell 3, line 2]" in card["status_message"], card["status_message"]
    mine = _card(live, subs["nb"], round_["b"]["token"], view="candidate")
    assert mine["submission"]["notebook"]["note"].startswith("Graded the 2 code cells")
    bad = _card(live, subs["bad"])
    assert bad["status"] == "compile_error" and bad["status_message"].startswith("The notebook cannot be read")
    page = get(f"{live.url}/interviewer/submissions/{subs['nb']}", headers=auth(INTERVIEWER_TOKEN)).text
    assert "notebook-note" in page and "def softmax(x, axis=-1):" in page and "nbformat" not in page


def test_regrade_after_a_fix_keeps_both_and_the_interviewer_chooses(round_):
    live, subs, cid = round_["live"], round_["subs"], round_["cohort"]
    assert _card(live, subs["py"])["score"] == 0  # the grader bug
    live.stop()  # deploy the fix: the same database, the fixed exercise
    _fix(round_["home"])
    live = LiveServer(round_["url"], round_["base"] / "server2.log").start()
    round_["live"] = live
    i = auth(INTERVIEWER_TOKEN)
    for token, code in ((None, 401), (round_["a"]["token"], 403)):
        assert post(f"{live.url}/api/cohorts/{cid}/regrades", headers=auth(token)).status_code == code
    assert post(f"{live.url}/api/cohorts/999/regrades", headers=i).status_code == 404
    started = post(f"{live.url}/api/cohorts/{cid}/regrades", headers=i)
    assert started.status_code == 202 and started.json()["status"] == "running", started.text
    rid = started.json()["id"]
    deadline = time.monotonic() + 240
    while (doc := get(f"{live.url}/api/cohorts/{cid}/regrades/{rid}", headers=i).json())["status"] == "running":
        assert time.monotonic() < deadline, doc
        time.sleep(0.5)
    assert doc["status"] == "done" and doc["total"] == doc["regraded"] == 3 and doc["changed"] == 2
    rows = {r["submission_id"]: r for r in doc["changes"]}
    py = rows[subs["py"]]
    assert (py["score_before"], py["score_after"]) == (0, 16) and py["changed"]
    assert {(c["before"], c["after"]) for c in py["checks"]} == {("forbidden", "passed")}
    assert f"exercise version changed: {VERSION} -> {FIXED}" in py["notes"]
    assert rows[subs["nb"]]["score_after"] == 16
    assert not rows[subs["bad"]]["changed"] and rows[subs["bad"]]["status_after"] == "compile_error"

    # nothing stands until chosen; both scorecards are kept either way
    summary = lambda: {r["submission_id"]: r["score"] for t in get(  # noqa: E731
        f"{live.url}/api/cohorts/{cid}/summary", headers=i).json()["tables"] for r in t["rows"]}
    assert summary()[subs["py"]] == 0
    assert post(f"{live.url}/api/cohorts/{cid}/standing", headers=i, json={"regrade_id": rid}).status_code == 200
    assert summary()[subs["py"]] == 16
    assert _card(live, subs["py"], round_["a"]["token"], view="candidate")["score"] == 16
    assert post(f"{live.url}/api/cohorts/{cid}/standing", headers=i, json={"regrade_id": None}).status_code == 200
    assert summary()[subs["py"]] == 0 and _card(live, subs["py"])["exercise"]["version"] == VERSION

    # the pages: the cohort's button, the change table, the two choices
    cohort_page = get(f"{live.url}/interviewer/cohorts/{cid}", headers=i).text
    assert f'action="/interviewer/cohorts/{cid}/regrade"' in cohort_page and f"regrades/{rid}" in cohort_page
    page = get(f"{live.url}/interviewer/cohorts/{cid}/regrades/{rid}", headers=i).text
    assert page.count('class="change"') == 3 and "forbidden → passed" in page and 'data-changed="yes"' in page
    chose = post(f"{live.url}/interviewer/cohorts/{cid}/regrades/{rid}/choose", headers=i, data={"stands": "regrade"},
                 follow_redirects=False)
    assert chose.status_code == 303 and summary()[subs["py"]] == 16
    assert "These regraded scorecards stand" in get(f"{live.url}/interviewer/cohorts/{cid}/regrades/{rid}",
                                                    headers=i).text
    assert post(f"{live.url}/interviewer/cohorts/{cid}/regrades/{rid}/choose", headers=auth(round_["a"]["token"]),
                data={"stands": "original"}).status_code == 403


def test_similarity_api_csv_and_page(round_):
    from grader.cohort.similarity import Source, compare_sources, known_sources
    from grader.grading.notebook import submission_text

    live, cid, subs = round_["live"], round_["cohort"], round_["subs"]
    i = auth(INTERVIEWER_TOKEN)
    for token, code in ((None, 401), (round_["a"]["token"], 403)):
        assert get(f"{live.url}/api/cohorts/{cid}/similarity", headers=auth(token)).status_code == code
    doc = get(f"{live.url}/api/cohorts/{cid}/similarity", headers=i).json()
    assert "never a verdict" in doc["note"] and doc["threshold"] == 0.75
    ann, ben = f"ann #{round_['a']['id']}", f"ben #{round_['b']['id']}"
    pair = next(p for p in doc["pairs"] if p["kind"] == "candidates")
    assert {pair["a"], pair["b"]} == {ann, ben}
    # the same figures as the library computes from the files themselves (the notebook as its code cells)
    os.environ["GRADER_HOME"], saved = str(round_["home"]), os.environ.get("GRADER_HOME")
    try:
        known, stubs = known_sources("softmax")
    finally:
        os.environ["GRADER_HOME"] = saved or ""
    mine = compare_sources("softmax", [Source(ann, "candidate", GOOD.decode()),
                                       Source(ben, "candidate", submission_text(_notebook()))], known, stubs=stubs)
    assert [(p["a"], p["b"], p["score"]) for p in doc["pairs"]] == [(p.a, p.b, round(p.score, 4)) for p in mine]
    csv_text = get(f"{live.url}/api/cohorts/{cid}/similarity.csv", headers=i).text
    assert csv_text.splitlines()[0] == "exercise,a,b,kind,score,share_a,share_b,flagged"
    assert len(csv_text.splitlines()) == len(doc["pairs"]) + 1
    page = get(f"{live.url}/interviewer/cohorts/{cid}/similarity", headers=i).text
    assert "never a verdict" in page and page.count('class="pair') == len(doc["pairs"]) and "<mark>" in page
    assert 'href="/interviewer/cohorts/%d/similarity"' % cid in get(f"{live.url}/interviewer/cohorts/{cid}", headers=i).text


def test_a_registered_file_is_compared_with_every_submission(round_):
    import re

    live, cid = round_["live"], round_["cohort"]
    i = auth(INTERVIEWER_TOKEN)
    public = re.sub(r"\bx\b", "arr", GOOD.decode()).replace("    ", "  ")  # a "blog post" ann's file matches
    files = {"file": ("blog_softmax.py", public.encode(), "text/x-python")}
    assert post(f"{live.url}/api/cohorts/{cid}/known-sources", headers=auth(round_["a"]["token"]),
                data={"exercise": "softmax"}, files=files).status_code == 403
    assert post(f"{live.url}/api/cohorts/{cid}/known-sources", headers=i, data={"exercise": "mha"},
                files=files).status_code == 422
    r = post(f"{live.url}/api/cohorts/{cid}/known-sources", headers=i, data={"exercise": "softmax"}, files=files)
    assert r.status_code == 201 and r.json()["label"] == "registered/blog_softmax.py"
    pairs = get(f"{live.url}/api/cohorts/{cid}/similarity", headers=i).json()["pairs"]
    top = pairs[0]
    assert (top["a"], top["kind"], top["score"], top["flagged"]) == (
        f"ann #{round_['a']['id']}", "registered", 1.0, True)
    assert top["b"] == f"registered/blog_softmax.py #{r.json()['id']}"
    ben = next(p for p in pairs if p["kind"] == "registered" and p["a"].startswith("ben"))
    assert not ben["flagged"]


def test_grade_submit_server_sends_a_notebook(round_, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from grader.cli import main

    path = tmp_path / "work.ipynb"
    path.write_bytes(_notebook())
    out = tmp_path / "card.json"
    monkeypatch.setenv("GRADER_TOKEN", round_["b"]["token"])
    result = CliRunner().invoke(main, ["submit", "softmax", str(path), "--server", round_["live"].url, "--out", str(out),
                                       "-q"])
    doc = json.loads(out.read_text())
    # full marks once the regrade test deployed the fix; every check forbidden (exit 1) before it
    assert result.exit_code == (0 if doc["score"] == doc["max_score"] else 1), result.output
    assert doc["status"] == "graded" and "note: Graded the 2 code cells" in result.output
    assert doc["view"] == "candidate" and doc["submission"]["notebook"]["code_cells"] == 2
