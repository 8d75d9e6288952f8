"""The service's queue: atomic claims under contention (SQLite and PostgreSQL), infrastructure errors
retried and never shown as a score, and a kill -9 of the server with work queued and running."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from grader.service import queue, records, worker
from grader.service.db import StoredScorecard, Submission, make_engine, migrate, session_factory
from service_helpers import INTERVIEWER_TOKEN, get, post, LiveServer, Postgres, auth, wait_final

pytestmark = pytest.mark.service


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def sessions(request, tmp_path):
    pg = Postgres() if request.param == "postgres" else None
    engine = make_engine(pg.url if pg else f"sqlite:///{tmp_path / 'q.db'}")
    migrate(engine)
    try:
        yield session_factory(engine)
    finally:
        engine.dispose()
        if pg:
            pg.stop()


def _candidate(factory):
    with factory() as s:
        cohort = records.create_cohort(s, "c", ["softmax"], seed=7)
        cand, _token = records.invite(s, cohort.id, "ann")
        return cand


def test_claims_are_atomic_under_contention(sessions):
    cand = _candidate(sessions)
    with sessions() as s:
        ids = [queue.enqueue(s, cand, "softmax", f"x = {i}\n".encode()).id for i in range(60)]
    got, lock = [], threading.Lock()

    def claimer():
        while (c := queue.claim(sessions)) is not None:
            with lock:
                got.append(c.submission_id)
            assert c.seed == 7 and c.attempt == 1

    threads = [threading.Thread(target=claimer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == ids  # each claimed exactly once, none lost


def test_infrastructure_errors_are_retried_then_never_shown_as_a_score(sessions):
    cand = _candidate(sessions)
    with sessions() as s:
        sub = queue.enqueue(s, cand, "softmax", b"x = 1\n")
    calls = []

    def failing(*args):
        calls.append(args)
        raise RuntimeError("engine gone")

    for _ in range(queue.MAX_ATTEMPTS):
        assert worker.process_one(sessions, "process", failing)
    assert not worker.process_one(sessions, "process", failing)  # nothing left to claim
    assert len(calls) == queue.MAX_ATTEMPTS
    with sessions() as s:
        row = s.get(Submission, sub.id)
        assert row.status == "infrastructure_error" and "engine gone" in row.error
        doc = records.submission_json(s, row, "candidate")
        assert doc["scorecard"] is None and doc["status"] == "infrastructure_error" and "error" not in doc


def test_complete_stores_one_scorecard_even_if_reported_twice(sessions):
    cand = _candidate(sessions)
    with sessions() as s:
        queue.enqueue(s, cand, "softmax", b"x = 1\n")
    c = queue.claim(sessions)
    assert queue.complete(sessions, c, {"fake": 1}, 0.0, 16.0)
    assert not queue.complete(sessions, c, {"fake": 2}, 0.0, 16.0)  # a repeated report is refused
    with sessions() as s:
        assert s.scalar(select(func.count()).select_from(StoredScorecard)) == 1


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its new parent to reap it does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
def test_kill9_with_queued_and_running_work_then_restart_grades_each_once(tmp_path):
    db = f"sqlite:///{tmp_path / 'k.db'}"
    live = LiveServer(db, tmp_path / "server.log", workers=1).start()
    good = (__import__("pathlib").Path(__file__).resolve().parent.parent
            / "submissions/samples/softmax/correct_logsumexp.py").read_bytes()
    try:
        i = auth(INTERVIEWER_TOKEN)
        cohort = post(f"{live.url}/api/cohorts", headers=i, json={"name": "k", "exercises": ["softmax"]}).json()
        token = post(f"{live.url}/api/cohorts/{cohort['id']}/candidates", headers=i, json={"name": "k"}).json()["token"]
        ids = [post(f"{live.url}/api/submissions", headers=auth(token), data={"exercise": "softmax"},
                          files={"file": ("s.py", good)}).json()["id"] for _ in range(5)]
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            statuses = [get(f"{live.url}/api/submissions/{s}", headers=auth(token)).json()["status"] for s in ids]
            if "running" in statuses:
                break
            time.sleep(0.1)
        assert "running" in statuses and "queued" in statuses
        graders = live.children()
        assert graders
        live.kill9()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(_alive(pid) for pid in graders):
            time.sleep(0.2)
        assert not any(_alive(pid) for pid in graders)  # no grading process outlives the server
    finally:
        live.stop()
    live = LiveServer(db, tmp_path / "server.log", workers=1).start()
    try:
        docs = [wait_final(live.url, token, s, timeout=300) for s in ids]
        assert all(d["status"] == "graded" and d["scorecard"]["score"] == 16 for d in docs)
        assert "re-queued" in (tmp_path / "server.log").read_text()
    finally:
        live.stop()
    engine = make_engine(db)
    with session_factory(engine)() as s:
        rows = s.execute(select(Submission.id, Submission.attempts, Submission.status)).all()
        cards = s.execute(select(StoredScorecard.submission_id, func.count()).group_by(StoredScorecard.submission_id)).all()
    engine.dispose()
    assert sorted(r.id for r in rows) == sorted(ids)  # nothing lost
    assert dict(cards) == {s: 1 for s in ids}  # each graded exactly once
    assert any(r.attempts == 2 for r in rows)  # the one running at the kill was claimed again


@pytest.mark.slow
def test_load_200_submissions_from_20_clients(tmp_path):
    """200 submissions from 20 concurrent clients on loopback: every one graded once, none lost.
    To keep it within minutes on 2 cores, 20 are real softmax runs in the process sandbox and 180 are
    files that the host grades without a sandbox (syntax errors, forbidden imports) — all through the
    same upload, queue and workers."""
    db = f"sqlite:///{tmp_path / 'load.db'}"
    live = LiveServer(db, tmp_path / "server.log", workers=2).start()
    good = (__import__("pathlib").Path(__file__).resolve().parent.parent
            / "submissions/samples/softmax/correct_logsumexp.py").read_bytes()
    try:
        i = auth(INTERVIEWER_TOKEN)
        cohort = post(f"{live.url}/api/cohorts", headers=i, json={"name": "load", "exercises": ["softmax"]}).json()
        tokens = [post(f"{live.url}/api/cohorts/{cohort['id']}/candidates", headers=i,
                             json={"name": f"c{n}"}).json()["token"] for n in range(20)]
        sent: dict[int, tuple[str, str]] = {}
        lock = threading.Lock()

        def client(n: int):
            with httpx.Client(base_url=live.url, headers=auth(tokens[n]), timeout=60) as http:
                for k in range(10):
                    kind = "good" if k == 0 else ("syntax" if k % 2 else "forbidden")
                    src = {"good": good, "syntax": f"def softmax(x,:\n  # {n}-{k}\n".encode(),
                           "forbidden": f"import scipy.special\n# {n}-{k}\n".encode()}[kind]
                    r = http.post("/api/submissions", data={"exercise": "softmax"}, files={"file": ("s.py", src)})
                    assert r.status_code == 202
                    with lock:
                        sent[r.json()["id"]] = (tokens[n], kind)

        threads = [threading.Thread(target=client, args=(n,)) for n in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(sent) == 200
        for sub_id, (token, kind) in sent.items():
            doc = wait_final(live.url, token, sub_id, timeout=600)
            card = doc["scorecard"]
            assert doc["status"] == "graded"
            if kind == "good":
                assert card["score"] == card["max_score"]
            elif kind == "syntax":
                assert card["status"] == "compile_error"
            else:
                assert {c["verdict"] for c in card["checks"] if c["visibility"] == "public"} == {"forbidden"}  # hidden: one bit
    finally:
        live.stop()
    engine = make_engine(db)
    with session_factory(engine)() as s:
        counts = dict(s.execute(select(StoredScorecard.submission_id, func.count())
                                .group_by(StoredScorecard.submission_id)).all())
    engine.dispose()
    assert counts == {s: 1 for s in sent}


def test_cohort_opening_and_closing_times_are_enforced(sessions):
    from datetime import timedelta

    from grader.service.db import utcnow

    with sessions() as s:
        later = records.create_cohort(s, "later", ["softmax"], opens_at=utcnow() + timedelta(hours=1))
        over = records.create_cohort(s, "over", ["softmax"], opens_at=utcnow() - timedelta(hours=2),
                                     closes_at=utcnow() - timedelta(hours=1))
        now = records.create_cohort(s, "now", ["softmax"], opens_at=utcnow() - timedelta(hours=1),
                                    closes_at=utcnow() + timedelta(hours=1))
        for cohort, status in ((later, 403), (over, 403), (now, None)):
            cand, _ = records.invite(s, cohort.id, "c")
            if status is None:
                assert records.accept(s, cand, "softmax", b"x = 1\n", "f.py", 1000).status == "queued"
            else:
                with pytest.raises(records.Refused) as err:
                    records.accept(s, cand, "softmax", b"x = 1\n", "f.py", 1000)
                assert err.value.status == status
        with pytest.raises(records.Refused):
            records.create_cohort(s, "bad", ["softmax"], opens_at=utcnow(), closes_at=utcnow() - timedelta(hours=1))
        with pytest.raises(records.Refused):
            records.create_cohort(s, "bad", ["no_such_exercise"])


@pytest.mark.docker
@pytest.mark.slow
def test_docker_sandbox_service_grades_and_leaves_no_container(tmp_path, docker_sandbox):

    live = LiveServer(f"sqlite:///{tmp_path / 'd.db'}", tmp_path / "server.log", workers=1, sandbox="docker").start()
    good = (__import__("pathlib").Path(__file__).resolve().parent.parent
            / "submissions/samples/softmax/correct_logsumexp.py").read_bytes()
    try:
        i = auth(INTERVIEWER_TOKEN)
        cohort = post(f"{live.url}/api/cohorts", headers=i, json={"name": "d", "exercises": ["softmax"]}).json()
        token = post(f"{live.url}/api/cohorts/{cohort['id']}/candidates", headers=i, json={"name": "d"}).json()["token"]
        sub = post(f"{live.url}/api/submissions", headers=auth(token), data={"exercise": "softmax"},
                   files={"file": ("s.py", good)}).json()["id"]
        doc = wait_final(live.url, token, sub, timeout=300)
        assert doc["status"] == "graded" and doc["scorecard"]["score"] == doc["scorecard"]["max_score"]
        assert doc["scorecard"]["sandbox"]["backend"] == "docker"
        graders = live.children()
        assert graders
    finally:
        live.stop()
    from docker_helpers import labelled_containers  # noqa: PLC0415

    names = [c.name for c in labelled_containers(docker_sandbox.client)]
    assert not [n for n in names if any(n.startswith(f"attention-grader-{pid}-") for pid in graders)]
