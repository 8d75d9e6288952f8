"""Interview mode on many machines (issue 25 item 3): leases and heartbeats in the queue (SQLite and
PostgreSQL), the agreement check against the server, and real processes — `grade serve --workers 0`
with `grade worker` processes on PostgreSQL: a worker killed with SIGKILL mid-grading, 200
submissions from 20 clients graded once each across two workers, an older worker refused."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from grader.cli import main
from grader.service import fleet, queue, records, worker
from grader.service.db import Grading, StoredScorecard, Submission, Worker, make_engine, migrate, session_factory
from service_helpers import INTERVIEWER_TOKEN, ROOT, LiveServer, Postgres, auth, get, post, wait_final

pytestmark = pytest.mark.service

GOOD = (ROOT / "submissions/samples/softmax/correct_logsumexp.py").read_bytes()
#: a correct softmax whose import takes 4 s: long enough to kill its worker mid-grading
SLOW = b"import time\ntime.sleep(4)\n" + GOOD


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


def _queued(factory, n: int = 1) -> list[int]:
    with factory() as s:
        cohort = records.create_cohort(s, "c", ["softmax"], seed=7)
        cand, _token = records.invite(s, cohort.id, "ann")
        return [queue.enqueue(s, cand, "softmax", f"x = {i}\n".encode()).id for i in range(n)]


def _outcomes(factory, sub_id: int) -> list[tuple[str | None, str | None]]:
    with factory() as s:
        return [tuple(r) for r in s.execute(select(Grading.worker_id, Grading.outcome)
                                            .where(Grading.submission_id == sub_id).order_by(Grading.id))]


def test_an_expired_lease_is_requeued_and_the_lost_workers_late_result_discarded(sessions):
    [sub] = _queued(sessions)
    lost = queue.claim(sessions, worker_id="a", lease_s=0.05)
    assert lost.submission_id == sub
    time.sleep(0.3)
    assert queue.requeue_expired(sessions) == [sub]
    taken = queue.claim(sessions, worker_id="b")
    assert taken.submission_id == sub and taken.claim_token != lost.claim_token and taken.attempt == 2
    assert not queue.complete(sessions, lost, {"from": "a"}, 1.0, 16.0)  # late: refused
    assert queue.complete(sessions, taken, {"from": "b"}, 16.0, 16.0)
    with sessions() as s:
        [card] = s.scalars(select(StoredScorecard)).all()
        row = s.get(Submission, sub)
    assert card.document == {"from": "b"} and row.status == "graded" and row.worker_id is None
    assert _outcomes(sessions, sub) == [("a", "expired"), ("b", "graded")]


def test_a_heartbeat_keeps_the_claim_and_a_stopping_worker_gives_it_back(sessions):
    [sub, other] = _queued(sessions, 2)
    mine = queue.claim(sessions, worker_id="a", lease_s=0.2)
    assert queue.renew(sessions, "a", lease_s=60) == 1
    time.sleep(0.4)
    assert queue.requeue_expired(sessions) == []  # renewed: still a's
    assert queue.renew(sessions, "b", lease_s=60) == 0
    assert queue.release(sessions, "a") == [mine.submission_id]
    assert not queue.complete(sessions, mine, {}, 0.0, 16.0)
    with sessions() as s:
        assert s.get(Submission, sub).status == "queued" and s.get(Submission, other).status == "queued"
    assert _outcomes(sessions, sub) == [("a", "released")]


def test_a_submission_whose_workers_keep_dying_fails_after_max_attempts(sessions):
    [sub] = _queued(sessions)
    for n in range(queue.MAX_ATTEMPTS):
        assert queue.claim(sessions, worker_id=f"w{n}", lease_s=0.01).attempt == n + 1
        time.sleep(0.1)
        back = queue.requeue_expired(sessions)
        assert back == ([sub] if n + 1 < queue.MAX_ATTEMPTS else [])
    assert queue.claim(sessions, worker_id="w9") is None
    with sessions() as s:
        row = s.get(Submission, sub)
    assert row.status == "infrastructure_error" and "stopped answering on each of its 3 claims" in row.error
    assert [o for _w, o in _outcomes(sessions, sub)] == ["expired"] * queue.MAX_ATTEMPTS


def test_a_claim_checks_the_workers_agreement_with_the_server_in_its_transaction(sessions):
    [sub] = _queued(sessions)
    fp = {"grader": "0.1.0", "python": "3.11", "numpy": "1.26.4", "torch": "2.3.1",
          "exercises": {"softmax": {"version": "1.0.0", "hash": "ab" * 32}}}
    with pytest.raises(queue.WorkerRefused, match="no `grade serve`"):
        queue.claim(sessions, worker_id="w", agreement=fleet.agreement(fp))
    fleet.register(sessions, "server", fp)
    old = {**fp, "grader": "0.0.9"}
    with pytest.raises(queue.WorkerRefused, match="changed since this worker started"):
        queue.claim(sessions, worker_id="w", agreement=fleet.agreement(old))
    with sessions() as s:
        assert s.get(Submission, sub).status == "queued"  # nothing claimed by the refused worker
    assert queue.claim(sessions, worker_id="w", agreement=fleet.agreement({**fp, "node": "elsewhere"})) is not None
    changed = {**fp, "exercises": {"softmax": {"version": "1.0.0", "hash": "cd" * 32}}}
    assert fleet.disagreements(fp, old) == ["grader 0.0.9 (server: 0.1.0)"]
    assert fleet.disagreements(fp, changed) == ["exercise softmax files differ (hash cdcdcdcdcdcd, server: abababababab)"]


def test_worker_help_and_a_refusal_without_a_server(tmp_path):
    result = CliRunner().invoke(main, ["worker", "--help"])
    assert result.exit_code == 0
    for option in ("--db", "--jobs", "--lease", "--grace", "--sandbox", "--warm"):
        assert option in result.output
    result = CliRunner().invoke(main, ["worker", "--db", "mysql://x/y", "--sandbox", "process"])
    assert result.exit_code == 2 and "unsupported database 'mysql'" in result.output


# -- real processes on PostgreSQL -------------------------------------------------------------------


class LiveWorker:
    """A `grade worker` subprocess (process sandbox), its output in ``log``."""

    def __init__(self, db_url: str, log: Path, *, lease_s: float = 3.0, jobs: int = 1, grace_s: float = 60.0,
                 pythonpath: Path = ROOT):
        self.log = log
        cmd = [sys.executable, "-m", "grader.cli", "worker", "--db", db_url, "--sandbox", "process",
               "--jobs", str(jobs), "--lease", str(lease_s), "--poll", "0.2", "--grace", str(grace_s)]
        env = {**__import__("os").environ, "PYTHONPATH": str(pythonpath)}
        with open(log, "ab") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=log.parent)

    def wait_ready(self, timeout: float = 120.0) -> "LiveWorker":
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ": grading with" in self.log.read_text():
                return self
            if self.proc.poll() is not None:
                raise RuntimeError(f"grade worker exited {self.proc.returncode}: {self.log.read_text()[-3000:]}")
            time.sleep(0.2)
        raise RuntimeError(f"grade worker not ready in {timeout} s: {self.log.read_text()[-3000:]}")

    @property
    def worker_id(self) -> str:
        line = next(ln for ln in self.log.read_text().splitlines() if ": grading with" in ln)
        return line.split("worker ", 1)[1].split(": grading with", 1)[0]

    def stop(self, sig=signal.SIGTERM, timeout: float = 60.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return self.proc.returncode


def _children(pid: int) -> list[int]:
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            kids.append(int(stat.parent.name))
    return kids


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _cohort(live: LiveServer, n_candidates: int = 1) -> list[str]:
    i = auth(INTERVIEWER_TOKEN)
    cohort = post(f"{live.url}/api/cohorts", headers=i, json={"name": "fleet", "exercises": ["softmax"]}).json()
    return [post(f"{live.url}/api/cohorts/{cohort['id']}/candidates", headers=i, json={"name": f"c{n}"}).json()["token"]
            for n in range(n_candidates)]


def _submit(live: LiveServer, token: str, source: bytes) -> int:
    r = post(f"{live.url}/api/submissions", headers=auth(token), data={"exercise": "softmax"},
             files={"file": ("s.py", source)})
    assert r.status_code == 202, r.text
    return r.json()["id"]


def _db_rows(url: str):
    engine = make_engine(url)
    try:
        with session_factory(engine)() as s:
            gradings = s.execute(select(Grading.submission_id, Grading.worker_id, Grading.outcome)
                                 .order_by(Grading.id)).all()
            cards = dict(s.execute(select(StoredScorecard.submission_id, func.count())
                                   .group_by(StoredScorecard.submission_id)).all())
            workers = {w.id: (w.role, w.stopped_at is not None, w.note) for w in s.scalars(select(Worker))}
            subs = {r.id: r.status for r in s.execute(select(Submission.id, Submission.status))}
        return gradings, cards, workers, subs
    finally:
        engine.dispose()


@pytest.fixture
def pg():
    server = Postgres()
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.postgres
@pytest.mark.slow
def test_a_worker_killed_mid_grading_has_its_submission_graded_once_by_the_other(tmp_path, pg):
    live = LiveServer(pg.url, tmp_path / "server.log", workers=0).start()
    a = b = None
    try:
        [token] = _cohort(live)
        a = LiveWorker(pg.url, tmp_path / "a.log", lease_s=3.0).wait_ready()
        sub = _submit(live, token, SLOW)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and get(f"{live.url}/api/submissions/{sub}",
                                                  headers=auth(token)).json()["status"] != "running":
            time.sleep(0.1)
        b = LiveWorker(pg.url, tmp_path / "b.log", lease_s=3.0, grace_s=0).wait_ready()
        time.sleep(1.0)  # a is inside the 4 s import of the submission
        graders = _children(a.proc.pid)
        assert graders, "worker a has no grading process"
        assert a.stop(signal.SIGKILL) == -signal.SIGKILL
        doc = wait_final(live.url, token, sub, timeout=180)
        assert doc["status"] == "graded" and doc["scorecard"]["score"] == doc["scorecard"]["max_score"] > 0
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(_alive(p) for p in graders):
            time.sleep(0.2)
        assert not any(_alive(p) for p in graders)  # a's grading process died with it
        # b stops on SIGTERM with a grading in hand and --grace 0: the claim goes back to the queue at
        # once, and b does not wait for that grading (a minute of sleep at import) before it exits
        again = _submit(live, token, b"import time\ntime.sleep(50)\n" + GOOD)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and get(f"{live.url}/api/submissions/{again}",
                                                  headers=auth(token)).json()["status"] != "running":
            time.sleep(0.1)
        time.sleep(1.0)
        graders = _children(b.proc.pid)
        assert b.stop(signal.SIGTERM, timeout=30) == 0
        assert f"gave back 1 submission to the queue: {again}" in b.log.read_text()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(_alive(p) for p in graders):
            time.sleep(0.2)
        assert not any(_alive(p) for p in graders)
        assert get(f"{live.url}/api/submissions/{again}", headers=auth(token)).json()["status"] == "queued"
    finally:
        for w in (a, b):
            if w is not None:
                w.stop(signal.SIGKILL)
        live.stop()
    gradings, cards, workers, subs = _db_rows(pg.url)
    assert cards == {sub: 1}
    assert [(g.worker_id, g.outcome) for g in gradings if g.submission_id == sub] == \
        [(a.worker_id, "expired"), (b.worker_id, "graded")]
    assert [(g.worker_id, g.outcome) for g in gradings if g.submission_id == again] == [(b.worker_id, "released")]
    assert workers[b.worker_id] == ("worker", True, f"stopped by signal {int(signal.SIGTERM)}")
    assert workers[a.worker_id][1] is False  # killed: never closed its row
    assert "re-queued 1 submissions whose worker stopped heartbeating" in b.log.read_text()


@pytest.mark.postgres
@pytest.mark.slow
def test_200_submissions_from_20_clients_graded_once_across_two_workers(tmp_path, pg):
    """A server with --workers 0 and two `grade worker` processes. To stay within minutes on 2 busy
    cores, 40 uploads are real softmax gradings in the process sandbox and 160 are files the host
    grades without a sandbox (syntax errors, forbidden imports), all through one upload, queue and
    the two workers; the `gradings` table counts gradings per submission."""
    live = LiveServer(pg.url, tmp_path / "server.log", workers=0).start()
    workers = []
    try:
        tokens = _cohort(live, 20)
        workers = [LiveWorker(pg.url, tmp_path / f"w{n}.log", lease_s=20.0) for n in range(2)]
        for w in workers:
            w.wait_ready()
        sent: dict[int, tuple[str, str]] = {}
        lock = threading.Lock()

        def client(n: int):
            with httpx.Client(base_url=live.url, headers=auth(tokens[n]), timeout=60) as http:
                for k in range(10):
                    kind = "good" if k < 2 else ("syntax" if k % 2 else "forbidden")
                    src = {"good": GOOD + f"# {n}-{k}\n".encode(), "syntax": f"def softmax(x,:\n  # {n}-{k}\n".encode(),
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
            doc = wait_final(live.url, token, sub_id, timeout=900)
            card = doc["scorecard"]
            assert doc["status"] == "graded"
            if kind == "good":
                assert card["score"] == card["max_score"] > 0
            elif kind == "syntax":
                assert card["status"] == "compile_error"
            else:
                assert {c["verdict"] for c in card["checks"] if c["visibility"] == "public"} == {"forbidden"}  # hidden: one bit
        for w in workers:
            assert w.stop(signal.SIGTERM) == 0
    finally:
        for w in workers:
            w.stop(signal.SIGKILL)
        live.stop()
    gradings, cards, rows, subs = _db_rows(pg.url)
    assert cards == {s: 1 for s in sent}
    per_sub: dict[int, list] = {}
    for g in gradings:
        per_sub.setdefault(g.submission_id, []).append(g.outcome)
    assert per_sub == {s: ["graded"] for s in sent}  # one grading each: no repeat, none lost
    ids = [w.worker_id for w in workers]
    by_worker = {wid: sum(1 for g in gradings if g.worker_id == wid) for wid in ids}
    assert sum(by_worker.values()) == 200 and all(n > 0 for n in by_worker.values()), by_worker
    assert all(rows[wid][:2] == ("worker", True) for wid in ids)


@pytest.mark.postgres
@pytest.mark.slow
def test_an_older_worker_is_refused_with_what_differs(tmp_path, pg):
    old = tmp_path / "old"
    for part in ("grader", "exercises", "reference"):
        shutil.copytree(ROOT / part, old / part, ignore=shutil.ignore_patterns("__pycache__"))
    init = old / "grader/__init__.py"
    init.write_text(init.read_text().replace('__version__ = "', '__version__ = "0.0.1+old-'))
    live = LiveServer(pg.url, tmp_path / "server.log", workers=0).start()
    try:
        [token] = _cohort(live)
        sub = _submit(live, token, GOOD)
        w = LiveWorker(pg.url, tmp_path / "old.log", pythonpath=old)
        assert w.proc.wait(120) == 3
        text = w.log.read_text()
        from grader import __version__  # noqa: PLC0415

        assert f"refused: this worker does not agree with the server (grader 0.0.1+old-{__version__} " \
               f"(server: {__version__}))" in text
        time.sleep(1.0)
        assert get(f"{live.url}/api/submissions/{sub}", headers=auth(token)).json()["status"] == "queued"
    finally:
        live.stop()
    gradings, _cards, workers, _subs = _db_rows(pg.url)
    assert gradings == []
    [(role, stopped, note)] = [v for v in workers.values() if v[0] == "worker"]
    assert stopped and note.startswith("refused: grader 0.0.1+old-")


def test_a_worker_pool_stops_itself_when_the_server_is_upgraded_under_it(sessions):
    [sub] = _queued(sessions)
    fp = {"grader": "0.1.0", "python": "3.11", "numpy": "1.26.4", "torch": "2.3.1", "exercises": {}}
    fleet.register(sessions, "server", {**fp, "grader": "0.2.0"})  # the newest server: another version
    stopped, graded = threading.Event(), []
    pool = worker.WorkerPool(sessions, 2, "process", poll_s=0.05, worker_id="w", agreement=fleet.agreement(fp),
                             on_stop=stopped.set)

    class NeverGrades:  # nothing may be claimed, so nothing is graded
        def __call__(self, *args):
            graded.append(args)

        def shutdown(self, wait=True):
            pass

    pool.grade = NeverGrades()
    pool.start()
    assert stopped.wait(30)
    assert pool.stop(5) == [] and graded == []
    assert "changed since this worker started" in pool.refused
    with sessions() as s:
        assert s.get(Submission, sub).status == "queued"


def test_a_worker_says_when_the_database_cannot_be_reached(tmp_path):
    lines = []
    code = fleet.run_worker(f"postgresql://nobody@/none?host={tmp_path}&port=1", sandbox="process",
                            say=lines.append)
    assert code == 3 and lines and lines[0].startswith("error: cannot reach the database:"), lines
